// A processor's busy intervals and the insertion policy HEFT places tasks
// with (schedule::heft(), schedule::refine()). Internal to src/schedule.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include "redflow/huge_page_allocator.hpp"

namespace redflow::schedule {

// One busy interval on a processor.
struct Busy {
  double start;
  double finish;
};

// Insertion policy: the earliest start >= ready on `busy` (sorted by start)
// where `duration` fits before the next busy interval. Returns the start and
// the index to insert the new interval at. `scanned`, if given, is
// increased by the intervals looked at (what the call cost).
inline std::pair<double, std::size_t> earliest_slot(const HugePageVector<Busy>& busy, double ready, double duration,
                                                    std::size_t* scanned = nullptr) {
  // Intervals never overlap, so finishes are sorted like starts. The gap
  // before an interval that finishes by `ready` ends by `ready`: it cannot
  // hold a task of positive duration, and a zero-duration task starts at
  // `ready` either way (only its place among equal-time intervals differs).
  // Skipping them in O(log n) keeps HEFT from going quadratic on long chains
  // and on zero-cost graphs.
  const auto first = std::partition_point(busy.begin(), busy.end(), [&](const Busy& b) { return b.finish <= ready; });
  double prev_end = 0;  // every skipped finish is <= ready, so max(ready, prev_end) is unchanged
  const auto from = static_cast<std::size_t>(first - busy.begin());
  for (std::size_t k = from; k < busy.size(); ++k) {
    const double t = std::max(ready, prev_end);
    if (t + duration <= busy[k].start) {
      if (scanned != nullptr) *scanned += k - from;
      return {t, k};
    }
    prev_end = std::max(prev_end, busy[k].finish);
  }
  if (scanned != nullptr) *scanned += busy.size() - from;
  return {std::max(ready, prev_end), busy.size()};
}

}  // namespace redflow::schedule
