// The block filter's kernel, shared by the SPITS example job and the test that
// runs it sequentially over a whole file: a (2r+1)-tap moving average of an
// 8-bit signal, edges clamped, rounded to nearest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spits_example {

// Writes y[i - begin] for i in [begin, end) of a signal of n samples, of
// which `window` holds samples [window_begin, window_begin + window_len).
// The window must cover [begin - r, end + r) clipped to [0, n).
inline void smooth(const std::uint8_t* window, std::size_t window_begin, std::size_t n, std::size_t begin, std::size_t end, unsigned r,
                   std::uint8_t* y) {
  const unsigned taps = 2 * r + 1;
  for (std::size_t i = begin; i < end; ++i) {
    unsigned sum = 0;
    for (long j = -static_cast<long>(r); j <= static_cast<long>(r); ++j) {
      long k = static_cast<long>(i) + j;
      std::size_t at = k < 0 ? 0 : static_cast<std::size_t>(k) >= n ? n - 1 : static_cast<std::size_t>(k);
      sum += window[at - window_begin];
    }
    y[i - begin] = static_cast<std::uint8_t>((sum + taps / 2) / taps);
  }
}

}  // namespace spits_example
