// Helpers the trace writers share: packing intervals into lanes so that
// overlapping slices never share a track, and ordering by start time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace redflow::trace {

// Greedy interval packing: each interval goes to the first lane that is free
// at its start. Feed intervals in start order.
class LanePacker {
 public:
  std::size_t place(double start, double end) {
    for (std::size_t l = 0; l < ends_.size(); ++l)
      if (ends_[l] <= start) {
        ends_[l] = std::max(start, end);
        return l;
      }
    ends_.push_back(std::max(start, end));
    return ends_.size() - 1;
  }
  std::size_t lanes() const { return ends_.size(); }

 private:
  std::vector<double> ends_;
};

// Indices 0..n-1 sorted by start(i), ties kept in input order.
template <typename Start>
std::vector<std::size_t> by_start(std::size_t n, Start start) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return start(a) < start(b); });
  return order;
}

}  // namespace redflow::trace
