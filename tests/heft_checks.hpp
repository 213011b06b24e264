// Checks of a HEFT result shared by the HEFT and refinement tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "schedule/heft.hpp"

namespace redflow::testing {

// Everything a HEFT result must satisfy whatever the heuristic chose.
inline void expect_valid(const schedule::HeftProblem& p, const schedule::HeftResult& r) {
  const std::size_t n = p.cost.size();
  ASSERT_EQ(r.proc.size(), n);
  ASSERT_EQ(r.order.size(), n);
  std::vector<std::size_t> pos(n);
  for (std::size_t i = 0; i < n; ++i) pos[r.order[i]] = i;
  double makespan = 0;
  for (std::size_t t = 0; t < n; ++t) {
    ASSERT_LT(r.proc[t], p.processors);
    if (!p.forced.empty() && p.forced[t] >= 0) {
      EXPECT_EQ(r.proc[t], static_cast<std::size_t>(p.forced[t]));
    }
    EXPECT_GE(r.start[t], 0);
    EXPECT_NEAR(r.finish[t], r.start[t] + p.cost[t][r.proc[t]], 1e-9);
    makespan = std::max(makespan, r.finish[t]);
    for (const auto& [s, c] : p.successors[t]) {
      EXPECT_LT(pos[t], pos[s]) << "list is not topological at " << t << "->" << s;
      EXPECT_GE(r.start[s] + 1e-9, r.finish[t] + (r.proc[s] == r.proc[t] ? 0 : c)) << t << "->" << s;
    }
  }
  EXPECT_DOUBLE_EQ(r.makespan, makespan);
  // No two tasks overlap on a processor.
  for (std::size_t q = 0; q < p.processors; ++q) {
    std::vector<std::size_t> on;
    for (std::size_t t = 0; t < n; ++t)
      if (r.proc[t] == q) on.push_back(t);
    std::sort(on.begin(), on.end(), [&](auto a, auto b) {
      return r.start[a] != r.start[b] ? r.start[a] < r.start[b] : r.finish[a] < r.finish[b];
    });
    for (std::size_t i = 1; i < on.size(); ++i) EXPECT_LE(r.finish[on[i - 1]], r.start[on[i]] + 1e-9);
  }
}

}  // namespace redflow::testing
