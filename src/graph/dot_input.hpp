// DOT text on its way to cgraph: the limits redflow puts on it, the checks
// made before cgraph sees it, and the one rewrite it needs (exponents).
// cgraph is not safe to hand arbitrary bytes: its lexer takes time quadratic
// in one token's length, it silently ignores text after the graph, and it
// stops at the first NUL byte. These checks turn each of those into an error
// that names the limit and the line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "redflow/status.hpp"

namespace redflow::dot {

// Largest DOT text redflow parses (the file or the string).
inline constexpr std::size_t kMaxDotInputBytes = std::size_t{64} << 20;
// Largest single token: a quoted string (with its "a" + "b" continuations),
// an HTML string or an identifier. cgraph's lexer needs time quadratic in a
// token's length (1 MiB: about 1 s; 8 MiB: about 36 s); 256 KiB takes 0.06 s.
inline constexpr std::size_t kMaxDotTokenBytes = std::size_t{256} << 10;
// Deepest nesting of { } (subgraphs). cgraph's parser stack gives out at
// about 3,330 levels and then returns part of the graph.
inline constexpr std::size_t kMaxDotNesting = 1000;

// Refuses inputs larger than kMaxDotInputBytes, before they are read.
Status check_dot_size(std::uintmax_t bytes, std::string_view input_name);

// Checks `text` before it is parsed: size, NUL bytes, token lengths, nesting,
// unterminated strings and comments, and text after the graph's closing
// brace. `input_name` names the input in the message ("g.dot", "<string>").
Status check_dot_input(std::string_view text, std::string_view input_name);

// An IOError naming `what`, `path` and errno's text (reading or writing DOT files).
Status errno_error(const std::string& what, const std::string& path);

// DOT's lexer has no exponents: it splits work=8e9 into "8e" and "9" and
// fails. Quotes such values (outside strings and comments) so that the
// natural spelling of a cost hint works; the quotes add no lines.
std::string quote_exponent_numbers(std::string_view text);

}  // namespace redflow::dot
