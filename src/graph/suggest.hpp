// "Did you mean" hints: the known name nearest to a misspelt one (actor
// functions, stream operators, DOT attributes, command-line flags and
// subcommands).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace redflow {

// Levenshtein distance between `a` and `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, or "" when none is close enough to be a
// plausible typo (at most max(2, |word| / 3) edits).
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace redflow
