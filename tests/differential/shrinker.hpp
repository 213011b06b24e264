// The shrinker: turns a failing case into a smaller one that fails the same
// way (same Outcome), greedily. It drops the executions after the failing one
// and then each earlier one, lowers tiles and cores, clears per-actor
// redundancy, and removes actors in chunks (halves, quarters, ... single
// actors). Removing an actor whose output others still read turns that
// output into a graph input that carries, in every execution, the value the
// reference interpreter computed for it, so the rest of the graph sees the
// same data. Every candidate runs isolated (run_isolated), so shrinking a
// hang costs a time limit per candidate that still hangs.
#pragma once

#include <functional>
#include <string>

#include "case.hpp"
#include "runner.hpp"

namespace redflow::difftest {

struct ShrinkOptions {
  double budget_s = 120;   // stop after this long with the smallest case so far
  double timeout_s = 10;   // per candidate run
  std::function<void(const std::string&)> log;  // progress lines (may be empty)
};

struct ShrinkResult {
  Case smallest;
  Verdict verdict;          // of `smallest`
  unsigned candidates = 0;  // runs tried
};

ShrinkResult shrink(const Case& c, const Verdict& v, const Registry& reg, const ShrinkOptions& options);

// The case without the actors marked in `drop` (see above); exposed for tests.
Case drop_actors(const Case& c, const std::vector<bool>& drop, const Registry& reg);

}  // namespace redflow::difftest
