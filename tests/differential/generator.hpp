// The seeded generator of random valid cases. From one 64-bit seed it builds
// a graph out of motifs that together use every built-in and application
// actor kind: byte mixes with fan-in up to the slot count and beyond,
// split -> kernel -> collect blocks (up to 64), i32 kernels, reorder gathers,
// rf.compare in the user's graph, the matmul / bitonic / FFT application
// graphs embedded as sub-graphs, noop on 0-byte data and actors that fail on
// purpose. Sizes include 0 bytes, exactly a slot and more than a slot; some
// actors get their own redundancy. It then draws a runtime (1-5 tiles, 1-2
// cores per tile, slots from 2 up, either scheduler) and a sequence of
// executions with their configurations, injected faults and inputs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "case.hpp"

namespace redflow::difftest {

// Classes of cases the generator can leave out, so that a defect that is
// known and not yet fixed does not fail every run while it is being fixed
// (docs/testing.md lists which defect each class stands for).
struct Exclusions {
  bool user_compare = false;      // rf.compare in the user's graph (not only from the redundancy transformation)
  bool mixed_redundancy = false;  // per-actor *-diff executed under a graph-wide *-same configuration
  bool diff_faults = false;       // faults injected into executions that have *-diff replicas
  bool unaligned_split = false;   // rf.split at an offset that is not a multiple of 4, feeding int32 actors (the runtime must still hand them aligned values)
  bool steal_failures = false;    // executions after a failed one (on purpose or a give-up) under work stealing
};
// "user-compare,steal-failures" (or "" / "none"); the error names the bad class.
Result<Exclusions> parse_exclusions(std::string_view list);
std::string to_string(const Exclusions& e);

struct GenOptions {
  Exclusions exclude;
  unsigned max_motifs = 12;
};

Case generate(std::uint64_t seed, const GenOptions& options);

}  // namespace redflow::difftest
