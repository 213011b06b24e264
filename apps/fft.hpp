// Fast Fourier transform of 2^L complex doubles (section 6 of Kühbacher et
// al.), as a four-step decomposition whose leaf transforms call FFTW.
//
// With N = N1 * N2 (N1 = 2^floor(L/2) rows, N2 = 2^ceil(L/2) columns), x is an
// N1 x N2 row-major matrix and
//   Y[k1 + N1*k2] = sum_n2 w_N2^(n2*k2) * w_N^(n2*k1) * sum_n1 x[N2*n1 + n2] * w_N1^(n1*k1).
// The graph (Q panels of W columns, G = Q row groups of R rows):
//   X -> rf.split (zero-copy) -> G row bands X_r
//   all X_r -> fft.cols -> F_q: FFTs down columns [qW, qW + W), read from the
//     bands, times the twiddles w_N^(n2*k1)
//     -> rf.split (zero-copy) -> F_q,r: rows r of F_q
//   all F_q,r of one r -> fft.rows -> Z_r: FFTs along the rows, written
//     transposed (column block r of Y) -> rf.split -> Z_r,b: rows b of Z_r
//   all Z_r,b of one b -> mat.hcat.tile -> Y_b (rows b of Y) -> rf.collect -> Y.
// The strided copies at both ends run on the tiles, beside the FFTs, not on
// the driver's one core; the splits and the collect move nothing locally.
// Every node fits a slot of the target, and a column actor's Q + 1 inputs fit its tile.
// Data is interleaved (re, im) doubles, FFTW's forward sign (e^(-2 pi i nk/N)).
#pragma once

#include <complex>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "apps/target.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::apps {

struct FftParams {
  std::size_t n = 0;      // points, a power of two (--n)
  std::size_t block = 0;  // points per panel (--block), a power of two >= max(N1, N2); 0 = choose
  Target target;
};

// Input "X" and output "Y" (n * 16 bytes each), constant "T" (twiddle tables).
Result<Graph> fft_graph(const FftParams& params);

// How FFTW plans the leaf transforms (and the baseline): kEstimate plans at
// once, kMeasure times candidates (slower to plan, faster to run; use wisdom).
enum class FftPlanning { kEstimate, kMeasure };
void set_fft_planning(FftPlanning planning);
// FFTW wisdom: import from / export to a file (both return false on failure).
bool import_fft_wisdom(const std::string& path);
bool export_fft_wisdom(const std::string& path);

// Baseline: FFTW's own out-of-place transform of n points on `threads` threads.
class FftDirect {
 public:
  FftDirect(std::size_t n, unsigned threads);
  ~FftDirect();
  FftDirect(const FftDirect&) = delete;
  FftDirect& operator=(const FftDirect&) = delete;
  // Its own SIMD-aligned arrays (FFTW plans for the alignment it will see).
  std::complex<double>* input();
  const std::complex<double>* output() const;
  void run();  // output = DFT(input)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reference for tests: single-threaded FFTW (estimate plan), out-of-place.
std::vector<std::complex<double>> fft_reference(const std::vector<std::complex<double>>& in);
// ||a - b|| / ||b||, or 0 when both are zero.
double relative_error(const std::complex<double>* a, const std::complex<double>* b, std::size_t n);

void register_fft_actors(Registry& reg);

}  // namespace redflow::apps
