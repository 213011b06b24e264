// Matrix multiplication: the block kernel (mm.block), the graph generator,
// the direct baseline and the references. See matmul.hpp for the graph.
#include "apps/matmul.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "apps/actor_util.hpp"

namespace redflow::apps {
namespace {

// ---------------------------------------------------------------- kernel
//
// Register-blocked GEMM in the style of GotoBLAS, written with GCC vector
// extensions: an MR x NR tile of C stays in registers while k runs over a
// block of kKc steps; each step broadcasts MR values of A and loads NR values
// of B. The loops around it keep the kKc x NR strip of B in L1/L2 while all
// rows of the panel go by. Built three times (AVX-512, AVX2, baseline x86-64)
// and chosen once at run time. Measured on the development machine (AMD EPYC,
// AVX-512): ~45 G multiply-adds/s per core against ~21 for the i-k-j axpy
// loop of i32.matmul.

using u32 = std::uint32_t;
typedef u32 v16u __attribute__((vector_size(64)));
typedef u32 v8u __attribute__((vector_size(32)));
typedef u32 v4u __attribute__((vector_size(16)));

constexpr std::size_t kKc = 256;  // k steps per block: a 256 x 32 strip of B is 32 KiB
constexpr std::size_t kMc = 256;  // rows per block: their 256 x 256 block of A (256 KiB) stays in L2

// C[MR x NR] (+)= A[MR x kc] * B[kc x NR]; NR = NV vectors of V.
template <int MR, int NV, typename V>
[[gnu::always_inline]] inline void micro(const u32* A, std::size_t lda, const u32* B, std::size_t ldb, u32* C,
                                         std::size_t ldc, std::size_t kc, bool first) {
  constexpr int L = sizeof(V) / sizeof(u32);
  V acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      if (first) {
        acc[r][v] = V{};
      } else {
        std::memcpy(&acc[r][v], C + r * ldc + v * L, sizeof(V));
      }
    }
  for (std::size_t k = 0; k < kc; ++k) {
    V b[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&b[v], B + k * ldb + v * L, sizeof(V));
    for (int r = 0; r < MR; ++r) {
      const u32 a = A[r * lda + k];
      for (int v = 0; v < NV; ++v) acc[r][v] += a * b[v];
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) std::memcpy(C + r * ldc + v * L, &acc[r][v], sizeof(V));
}

// One tile of `mr` <= MR rows (templated on the row count so tails stay in registers).
template <int MR, int NV, typename V>
[[gnu::always_inline]] inline void tile_rows(std::size_t mr, const u32* A, std::size_t lda, const u32* B,
                                             std::size_t ldb, u32* C, std::size_t ldc, std::size_t kc, bool first) {
  if constexpr (MR > 1) {
    if (mr < static_cast<std::size_t>(MR)) {
      tile_rows<MR - 1, NV, V>(mr, A, lda, B, ldb, C, ldc, kc, first);
      return;
    }
  }
  micro<MR, NV, V>(A, lda, B, ldb, C, ldc, kc, first);
}

template <int MR, int NV, typename V>
[[gnu::always_inline]] inline void kernel_impl(const u32* A, std::size_t lda, const u32* B, std::size_t ldb, u32* C,
                                               std::size_t ldc, std::size_t m, std::size_t cols, std::size_t k) {
  constexpr std::size_t NR = NV * sizeof(V) / sizeof(u32);
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i) std::fill(C + i * ldc, C + i * ldc + cols, 0u);
    return;
  }
  alignas(64) u32 bpad[kKc * NR];  // the last, narrower strip of B, zero-padded to NR columns
  alignas(64) u32 ctile[MR * NR];  // C tile of that strip
  for (std::size_t ii = 0; ii < m; ii += kMc) {
  const std::size_t iend = std::min(m, ii + kMc);
  for (std::size_t kk = 0; kk < k; kk += kKc) {
    const std::size_t kc = std::min(kKc, k - kk);
    const bool first = kk == 0;
    for (std::size_t j0 = 0; j0 < cols; j0 += NR) {
      const std::size_t nr = std::min(NR, cols - j0);
      const u32* bs = B + kk * ldb + j0;
      std::size_t bld = ldb;
      if (nr < NR) {
        for (std::size_t p = 0; p < kc; ++p) {
          std::memcpy(bpad + p * NR, bs + p * ldb, nr * sizeof(u32));
          std::fill(bpad + p * NR + nr, bpad + (p + 1) * NR, 0u);
        }
        bs = bpad;
        bld = NR;
      }
      for (std::size_t i0 = ii; i0 < iend; i0 += MR) {
        const std::size_t mr = std::min<std::size_t>(MR, iend - i0);
        const u32* as = A + i0 * lda + kk;
        u32* cs = C + i0 * ldc + j0;
        if (nr == NR) {
          tile_rows<MR, NV, V>(mr, as, lda, bs, bld, cs, ldc, kc, first);
          continue;
        }
        for (std::size_t r = 0; r < mr; ++r) {
          if (first) {
            std::fill(ctile + r * NR, ctile + (r + 1) * NR, 0u);
          } else {
            std::memcpy(ctile + r * NR, cs + r * ldc, nr * sizeof(u32));
          }
        }
        tile_rows<MR, NV, V>(mr, as, lda, bs, bld, ctile, NR, kc, false);
        for (std::size_t r = 0; r < mr; ++r) std::memcpy(cs + r * ldc, ctile + r * NR, nr * sizeof(u32));
      }
    }
  }
  }
}

using KernelFn = void (*)(const u32*, std::size_t, const u32*, std::size_t, u32*, std::size_t, std::size_t,
                          std::size_t, std::size_t);

void kernel_generic(const u32* A, std::size_t lda, const u32* B, std::size_t ldb, u32* C, std::size_t ldc,
                    std::size_t m, std::size_t cols, std::size_t k) {
  kernel_impl<4, 2, v4u>(A, lda, B, ldb, C, ldc, m, cols, k);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void kernel_avx2(const u32* A, std::size_t lda, const u32* B, std::size_t ldb, u32* C,
                                                 std::size_t ldc, std::size_t m, std::size_t cols, std::size_t k) {
  kernel_impl<6, 2, v8u>(A, lda, B, ldb, C, ldc, m, cols, k);  // 12 accumulators of the 16 ymm registers
}
__attribute__((target("avx512f"))) void kernel_avx512(const u32* A, std::size_t lda, const u32* B, std::size_t ldb,
                                                      u32* C, std::size_t ldc, std::size_t m, std::size_t cols,
                                                      std::size_t k) {
  kernel_impl<6, 2, v16u>(A, lda, B, ldb, C, ldc, m, cols, k);  // 6 x 32 int32 in 12 zmm registers
}
#endif

KernelFn pick_kernel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return kernel_avx512;
  if (__builtin_cpu_supports("avx2")) return kernel_avx2;
#endif
  return kernel_generic;
}

// ---------------------------------------------------------------- mm.block

constexpr std::size_t kRowStrip = 6;  // rows per parallel work item (MR of the widest kernel)

struct BlockShape {
  std::size_t h = 0, w = 0, k = 0;
};

std::string block_shape(std::span<const std::size_t> in, std::size_t out, std::string_view args, BlockShape* s) {
  if (auto e = detail::expect_inputs(in.size(), 2); !e.empty()) return e;
  std::uint64_t k = 0;
  if (auto e = detail::arg_positive(args, "k", &k); !e.empty()) return e;
  const std::size_t row = k * 4;
  if (in[0] % row != 0)
    return "input 0 (A panel) has " + std::to_string(in[0]) + " bytes, not whole rows of k=" + std::to_string(k) +
           " int32";
  if (in[1] % row != 0)
    return "input 1 (B panel) has " + std::to_string(in[1]) + " bytes, not k=" + std::to_string(k) +
           " whole rows of int32";
  const std::size_t h = in[0] / row, w = in[1] / row;
  if (out != h * w * 4)
    return "output has " + std::to_string(out) + " bytes, expected " + std::to_string(h) + " x " + std::to_string(w) +
           " int32 (" + std::to_string(h * w * 4) + " bytes)";
  *s = {h, w, k};
  return "";
}

std::string check_block(const ActorShape& s) {
  BlockShape b;
  return block_shape(s.input_bytes, s.output_bytes, s.args, &b);
}

void run_block(ActorContext& ctx) {
  const std::size_t in[2] = {ctx.num_inputs() > 0 ? ctx.input_bytes(0).size() : 0,
                             ctx.num_inputs() > 1 ? ctx.input_bytes(1).size() : 0};
  BlockShape s;
  if (auto e = block_shape({in, std::min<std::size_t>(ctx.num_inputs(), 2)}, ctx.output_bytes().size(), ctx.args(), &s);
      !e.empty() || ctx.num_inputs() != 2) {
    ctx.fail(e.empty() ? "expects 2 inputs" : e);
    return;
  }
  const std::int32_t* A = ctx.input<std::int32_t>(0).data();
  const std::int32_t* B = ctx.input<std::int32_t>(1).data();
  std::int32_t* C = ctx.output<std::int32_t>().data();
  const std::size_t strips = (s.h + kRowStrip - 1) / kRowStrip;
  ctx.parallel_chunks(0, strips, [&](std::size_t lo, std::size_t hi) {
    const std::size_t r0 = lo * kRowStrip, r1 = std::min(hi * kRowStrip, s.h);
    matmul_kernel(A + r0 * s.k, s.k, B, s.w, C + r0 * s.w, s.w, r1 - r0, s.w, s.k);
  });
}

// Boundaries of n cut into p nearly equal parts: part i is [bound(i), bound(i + 1)).
std::size_t bound(std::size_t n, std::size_t p, std::size_t i) { return i * n / p; }

}  // namespace

void matmul_kernel(const std::int32_t* A, std::size_t lda, const std::int32_t* B, std::size_t ldb, std::int32_t* C,
                   std::size_t ldc, std::size_t m, std::size_t cols, std::size_t k) {
  static const KernelFn kernel = pick_kernel();
  // uint32 arithmetic wraps where int32 would overflow (UB); the bits are the same.
  kernel(reinterpret_cast<const u32*>(A), lda, reinterpret_cast<const u32*>(B), ldb, reinterpret_cast<u32*>(C), ldc, m,
         cols, k);
}

MatmulDirect::MatmulDirect(std::size_t n, unsigned threads)
    : n_(n), threads_(std::max(1u, threads)), packed_(n * n) {}

void MatmulDirect::run(const std::int32_t* A, const std::int32_t* B, std::int32_t* C) {
  constexpr std::size_t kPanel = 512;  // columns per packed panel of B
  const std::size_t n = n_, panels = (n + kPanel - 1) / kPanel, strips = (n + kMc - 1) / kMc;
  std::int32_t* P = packed_.data();  // panel j: rows 0..n-1 of columns [j*kPanel, ...), contiguous
  tbb::task_arena arena(static_cast<int>(threads_));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t k = r.begin(); k < r.end(); ++k)
        for (std::size_t j = 0; j < panels; ++j) {
          const std::size_t c0 = j * kPanel, w = std::min(kPanel, n - c0);
          std::memcpy(P + c0 * n + k * w, B + k * n + c0, w * sizeof(std::int32_t));
        }
    });
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, strips),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t s = r.begin(); s < r.end(); ++s) {
            const std::size_t r0 = s * kMc, m = std::min(kMc, n - r0);
            for (std::size_t j = 0; j < panels; ++j) {
              const std::size_t c0 = j * kPanel, w = std::min(kPanel, n - c0);
              matmul_kernel(A + r0 * n, n, P + c0 * n, w, C + r0 * n + c0, n, m, w, n);
            }
          }
        },
        tbb::static_partitioner());
  });
}

void matmul_naive(const std::int32_t* A, const std::int32_t* B, std::int32_t* C, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      u32 sum = 0;
      for (std::size_t k = 0; k < n; ++k) sum += static_cast<u32>(A[i * n + k]) * static_cast<u32>(B[k * n + j]);
      C[i * n + j] = static_cast<std::int32_t>(sum);
    }
}

namespace {

// OpenBLAS, opened the first time the ceiling is asked for rather than
// linked: its threaded build starts a thread as it loads that spins
// (sched_yield) for about 0.1 s of a core, in every process that loads it,
// and every `redflow worker` would pay that while it serves its first
// requests. Empty when the library cannot be opened.
struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
};

const OpenBlas& open_blas() {
  static const OpenBlas blas = [] {
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) continue;
      OpenBlas b;
      b.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(lib, "cblas_sgemm"));
      b.set_num_threads = reinterpret_cast<decltype(&openblas_set_num_threads)>(dlsym(lib, "openblas_set_num_threads"));
      if (b.sgemm && b.set_num_threads) return b;
      dlclose(lib);
    }
    return OpenBlas{};
  }();
  return blas;
}

}  // namespace

bool sgemm_ceiling(const float* A, const float* B, float* C, std::size_t n, unsigned threads) {
  const OpenBlas& blas = open_blas();
  if (blas.sgemm == nullptr) return false;
  blas.set_num_threads(static_cast<int>(std::max(1u, threads)));
  const auto ni = static_cast<blasint>(n);
  blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, A, ni, B, ni, 0.0f, C, ni);
  return true;
}

Result<std::size_t> matmul_parts(const MatmulParams& p) {
  if (p.n == 0) return Status::InvalidArgument("--n (the matrix side) must be at least 1, got 0");
  const std::size_t row_bytes = p.n * 4;
  if (row_bytes / 4 != p.n || row_bytes > p.target.slot_bytes)
    return Status::InvalidArgument("--n " + std::to_string(p.n) + ": one matrix row (" + std::to_string(row_bytes) +
                                   " bytes) does not fit a slot of " + std::to_string(p.target.slot_bytes) +
                                   " bytes (raise --slot-bytes)");
  const std::size_t max_rows = p.target.slot_bytes / row_bytes;  // rows of a panel that fit one slot
  if (p.block != 0) {
    const std::size_t b = std::min(p.block, p.n);
    if (b > max_rows)
      return Status::InvalidArgument("--block " + std::to_string(p.block) + ": a panel of " + std::to_string(b) + " x " +
                                     std::to_string(p.n) + " int32 (" + std::to_string(b * row_bytes) +
                                     " bytes) does not fit a slot of " + std::to_string(p.target.slot_bytes) +
                                     " bytes (at most " + std::to_string(max_rows) + ", or raise --slot-bytes)");
    return (p.n + b - 1) / b;
  }
  // Enough blocks for every tile to have about 8 (p*p >= 8 * tiles), and panels that fit a slot.
  const std::size_t fit = (p.n + max_rows - 1) / max_rows;
  const auto par = static_cast<std::size_t>(std::ceil(std::sqrt(8.0 * std::max(1u, p.target.tiles))));
  return std::max(fit, std::min(par, p.n));
}

Result<Graph> matmul_graph(const MatmulParams& params) {
  auto parts = matmul_parts(params);
  if (!parts.ok()) return parts.status();
  const std::size_t n = params.n, p = *parts, bytes = n * n * 4;
  Graph g("matmul");
  const DataId A = g.input("A", bytes), B = g.input("B", bytes);
  const DataId C = g.output("C", bytes);
  std::vector<DataId> a(p), b(p), rows(p);
  for (std::size_t i = 0; i < p; ++i) {
    const std::size_t r0 = bound(n, p, i), h = bound(n, p, i + 1) - r0;
    a[i] = g.inner("A" + std::to_string(i), h * n * 4);
    g.actor("splitA" + std::to_string(i), "rf.split", {A}, a[i]).args("offset=" + std::to_string(r0 * n * 4));
    b[i] = g.inner("B" + std::to_string(i), n * h * 4);
    g.actor("packB" + std::to_string(i), "mat.cols", {B}, b[i])
        .args("cols=" + std::to_string(n) + ",first=" + std::to_string(r0) + ",elem=4")
        .work(static_cast<double>(n * h) / 2);  // a strided copy: about 2 int32 per ns
  }
  for (std::size_t i = 0; i < p; ++i) {
    const std::size_t h = bound(n, p, i + 1) - bound(n, p, i);
    std::vector<DataId> blocks(p);
    for (std::size_t j = 0; j < p; ++j) {
      const std::size_t w = bound(n, p, j + 1) - bound(n, p, j);
      const std::string ij = std::to_string(i) + "_" + std::to_string(j);
      blocks[j] = g.inner("C" + ij, h * w * 4);
      // work in ns on one core: the kernel does ~32 multiply-adds per ns.
      g.actor("mm" + ij, "mm.block", {a[i], b[j]}, blocks[j])
          .args("k=" + std::to_string(n))
          .work(static_cast<double>(h) * static_cast<double>(w) * static_cast<double>(n) / 32);
    }
    rows[i] = g.inner("Crow" + std::to_string(i), h * n * 4);
    g.actor("hcat" + std::to_string(i), "mat.hcat", blocks, rows[i])
        .args("rows=" + std::to_string(h) + ",elem=4")
        .work(static_cast<double>(h * n) / 2);
  }
  g.actor("collectC", "rf.collect", rows, C);
  return g;
}

void register_matmul_actors(Registry& reg) {
  reg.add("mm.block", ActorSpec{run_block, check_block, false,
                                "C block = A panel (h x k) * B panel (k x w), int32 wrapping (args: k=K)"});
}

}  // namespace redflow::apps
