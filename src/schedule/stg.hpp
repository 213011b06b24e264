// Reader for the Standard Task Graph (STG) format of Kasahara's lab (Waseda
// University): random task graphs with known optimal makespans on identical
// processors without communication. redflow uses them to measure HEFT's
// schedule quality (tests) and as scheduler benchmarks.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "redflow/status.hpp"
#include "schedule/heft.hpp"

namespace redflow::schedule {

// Loads `path` as a HeftProblem on `processors` identical processors with zero
// communication cost. Task ids are kept: 0 and n+1 are the dummy entry and
// exit tasks (cost 0). Format: n, then n+2 lines `id cost npred pred...`;
// anything after them (the `#` comment block) is ignored. Predecessors must
// be earlier tasks (STG lists tasks in topological order).
Result<HeftProblem> load_stg(const std::string& path, std::size_t processors);

// The same from a stream; `name` stands for the input in messages.
Result<HeftProblem> parse_stg(std::istream& in, const std::string& name, std::size_t processors);

}  // namespace redflow::schedule
