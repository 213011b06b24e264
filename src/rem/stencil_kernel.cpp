// The stencil's kernels, compiled at -O3 (CMakeLists.txt) and cloned for
// AVX2: the REM paper's point is that coalesced REM tasks keep the vector units busy.
#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>

#include "actors/multiversion.hpp"
#include "rem/stencil.hpp"

namespace redflow::rem::stencil {

REDFLOW_MULTIVERSION void jacobi5(const float* __restrict in, std::size_t in_stride, float* __restrict out, std::size_t out_stride,
                                  std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* c = in + r * in_stride;
    const float* up = c - in_stride;
    const float* dn = c + in_stride;
    float* o = out + r * out_stride;
#if !defined(__clang__)  // clang (the fuzzing build) has no ivdep and vectorises this without it
#pragma GCC ivdep
#endif
    for (std::size_t k = 0; k < cols; ++k) o[k] = 0.2f * (c[k] + up[k] + dn[k] + c[k - 1] + c[k + 1]);
  }
}

std::vector<float> run_threads(const Params& p, unsigned threads) {
  std::vector<float> a = initial_grid(p), b = a;
  const std::size_t n = p.n, inner = n - 2;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(inner)));
  std::barrier sync(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::size_t r0 = 1 + inner * t / threads, r1 = 1 + inner * (t + 1) / threads;
      float* src = a.data();
      float* dst = b.data();
      for (std::size_t s = 0; s < p.steps; ++s) {
        jacobi5(src + r0 * n + 1, n, dst + r0 * n + 1, n, r1 - r0, inner);
        sync.arrive_and_wait();
        std::swap(src, dst);
      }
    });
  for (auto& t : pool) t.join();
  return p.steps % 2 ? b : a;
}

double triad_bandwidth(std::size_t elems, unsigned threads, int repeats) {
  std::vector<double> a(elems), b(elems, 1.0), c(elems, 2.0);
  double best = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::size_t i0 = elems * t / threads, i1 = elems * (t + 1) / threads;
        double* __restrict pa = a.data();
        const double* __restrict pb = b.data();
        const double* __restrict pc = c.data();
        for (std::size_t i = i0; i < i1; ++i) pa[i] = pb[i] + 3.0 * pc[i];
      });
    for (auto& t : pool) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 24.0 * static_cast<double>(elems) / s);
  }
  // Keep the compiler from dropping the loop: the result is read.
  if (a[elems / 2] != 7.0) return 0;
  return best;
}

}  // namespace redflow::rem::stencil
