// What HEFT's placement (schedule::heft()) and its refinement
// (schedule::refine()) both read per task: its predecessors with their
// communication costs, and its mean cost. Internal to src/schedule.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <utility>

#include "redflow/huge_page_allocator.hpp"
#include "schedule/heft.hpp"

namespace redflow::schedule {

// Each task's predecessors with the communication cost of the edge, for
// data-ready times: one array in compressed rows, not a vector per task, so
// a million-task graph costs two allocations here instead of a million.
// Successors out of range (which check_heft_problem() refuses) are skipped.
// Immutable once made: safe to read from several threads.
class Predecessors {
 public:
  explicit Predecessors(const HeftProblem& p) : at_(p.cost.size() + 1, 0) {
    const std::size_t n = p.cost.size();
    for (std::size_t t = 0; t < n; ++t)
      for (const auto& [s, c] : p.successors[t])
        if (s < n) ++at_[s + 1];
    for (std::size_t t = 0; t < n; ++t) at_[t + 1] += at_[t];
    edges_.resize(at_[n]);
    HugePageVector<std::size_t> fill(at_.begin(), at_.end() - 1);
    for (std::size_t t = 0; t < n; ++t)
      for (const auto& [s, c] : p.successors[t])
        if (s < n) edges_[fill[s]++] = {t, c};
  }
  // Task t's (predecessor, communication cost) pairs.
  std::span<const std::pair<std::size_t, double>> of(std::size_t t) const { return {edges_.data() + at_[t], at_[t + 1] - at_[t]}; }

 private:
  HugePageVector<std::size_t> at_;
  HugePageVector<std::pair<std::size_t, double>> edges_;
};

// The mean of a task's finite costs (w̄ of the TPDS paper); 0 if none is finite.
inline double mean_finite_cost(std::span<const double> costs) {
  double sum = 0;
  std::size_t finite = 0;
  for (double c : costs)
    if (std::isfinite(c)) sum += c, ++finite;
  return finite > 0 ? sum / static_cast<double>(finite) : 0;
}

}  // namespace redflow::schedule
