// Paper-profile FFT (apps/paper.hpp, the paper's Fig. 2 with P blocks):
// radix-2 decimation in time on blocks of 2^13 complex doubles. The driver
// bit-reverses the input (rf.reorder with a constant permutation), after
// which the first 13 stages stay inside a block (fft.local) and each of the
// remaining log2 P stages pairs block b with block b + 2^q. A butterfly has
// two results (u + w v and u - w v), and an actor has one output, so each
// pair of blocks is two actors (fft.half, side=0 and side=1) that read the
// same two inputs: the repeated work the paper mentions in section 6.2.
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "apps/actor_util.hpp"
#include "apps/paper.hpp"

namespace redflow::apps {

namespace {

using cd = std::complex<double>;
using detail::arg_u64;
using detail::expect_inputs;
using detail::is_power_of_two;

constexpr std::size_t kMaxLocal = kPaperFftBlock;       // fft.local: points per block, at most
constexpr std::size_t kMaxHalf = std::size_t{1} << 16;  // fft.half: points per block, at most
constexpr std::size_t kLo = 64;                         // fft.half: twiddles as hi[t / 64] * lo[t % 64]

// e^(-2 pi i j / m), FFTW's forward sign. j / m is exact (m a power of two).
cd twiddle(std::uint64_t j, std::uint64_t m) {
  return std::polar(1.0, -2.0 * std::numbers::pi * (static_cast<double>(j) / static_cast<double>(m)));
}

// w_{2^13}^u for u < 2^12, computed once per process (before the first
// actor runs: the shape check touches it), never on the heap.
const std::array<cd, kMaxLocal / 2>& local_twiddles() {
  static const std::array<cd, kMaxLocal / 2> table = [] {
    std::array<cd, kMaxLocal / 2> t{};
    for (std::size_t u = 0; u < t.size(); ++u) t[u] = twiddle(u, kMaxLocal);
    return t;
  }();
  return table;
}

std::string check_points(std::size_t bytes, std::size_t max, const char* what) {
  const std::size_t points = bytes / 16;
  if (bytes % 16 != 0 || !is_power_of_two(points) || points > max)
    return std::string(what) + " has " + std::to_string(bytes) + " bytes; it must hold a power of two of complex doubles up to " +
           std::to_string(max) + " (16 bytes each)";
  return "";
}

// fft.local: the DFT of a block given in bit-reversed order (stages 1..log2 B).
std::string check_local(const ActorShape& s) {
  local_twiddles();
  if (auto e = expect_inputs(s.input_bytes.size(), 1); !e.empty()) return e;
  if (auto e = check_points(s.input_bytes[0], kMaxLocal, "input 0"); !e.empty()) return e;
  if (s.output_bytes != s.input_bytes[0]) return "output must have the input's size, " + std::to_string(s.input_bytes[0]) + " bytes";
  return "";
}

void run_local(ActorContext& ctx) {
  const std::size_t in = ctx.num_inputs() > 0 ? ctx.input_bytes(0).size() : 0;
  if (auto e = check_local({{&in, ctx.num_inputs() > 0 ? 1u : 0u}, ctx.output_bytes().size(), ctx.args()}); !e.empty()) {
    ctx.fail(e);
    return;
  }
  const auto& w = local_twiddles();
  const std::size_t n = in / 16;
  cd* y = ctx.output<cd>().data();
  std::memcpy(static_cast<void*>(y), ctx.input_bytes(0).data(), in);
  for (std::size_t m = 2; m <= n; m *= 2) {
    const std::size_t half = m / 2, step = kMaxLocal / m;  // w_m^j = w_{2^13}^(j * step)
    for (std::size_t k = 0; k < n; k += m)
      for (std::size_t j = 0; j < half; ++j) {
        const cd t = w[j * step] * y[k + j + half], u = y[k + j];
        y[k + j] = u + t;
        y[k + j + half] = u - t;
      }
  }
}

// fft.half, args "m=LOG2M,j0=J,side=S": one side of the butterflies of size
// M = 2^LOG2M between block u (input 0) and block v (input 1), twiddle
// exponent j0 + t at position t: side 0 writes u + w v, side 1 u - w v.
struct HalfArgs {
  std::uint64_t log2m = 0, j0 = 0, side = 0;
};

std::string half_args(const ActorShape& s, HalfArgs* a) {
  if (auto e = expect_inputs(s.input_bytes.size(), 2); !e.empty()) return e;
  if (auto e = check_points(s.input_bytes[0], kMaxHalf, "input 0"); !e.empty()) return e;
  if (s.input_bytes[1] != s.input_bytes[0] || s.output_bytes != s.input_bytes[0])
    return "inputs and output must have the same size, " + std::to_string(s.input_bytes[0]) + " bytes";
  if (auto e = arg_u64(s.args, "m", &a->log2m); !e.empty()) return e;
  if (auto e = arg_u64(s.args, "j0", &a->j0); !e.empty()) return e;
  if (auto e = arg_u64(s.args, "side", &a->side); !e.empty()) return e;
  if (a->side > 1) return "arg 'side' must be 0 (u + w v) or 1 (u - w v)";
  const std::size_t points = s.input_bytes[0] / 16;
  if (a->log2m > 62 || a->j0 + points > (std::uint64_t{1} << a->log2m) / 2)
    return "twiddle exponents j0 + " + std::to_string(points) + " must stay below M/2 = 2^(m-1)";
  return "";
}

std::string check_half(const ActorShape& s) {
  HalfArgs a;
  return half_args(s, &a);
}

void run_half(ActorContext& ctx) {
  const std::size_t in[2] = {ctx.num_inputs() > 0 ? ctx.input_bytes(0).size() : 0,
                             ctx.num_inputs() > 1 ? ctx.input_bytes(1).size() : 0};
  HalfArgs a;
  if (auto e = half_args({{in, std::min<std::size_t>(ctx.num_inputs(), 2)}, ctx.output_bytes().size(), ctx.args()}, &a);
      !e.empty()) {
    ctx.fail(e);
    return;
  }
  const std::size_t n = in[0] / 16, lo_n = std::min(n, kLo), hi_n = n / lo_n;
  const std::uint64_t m = std::uint64_t{1} << a.log2m;
  // 192 sin/cos per block instead of one per point; each product is within 2 ulp.
  std::array<cd, kLo> lo;
  std::array<cd, kMaxHalf / kLo> hi;
  for (std::size_t t = 0; t < lo_n; ++t) lo[t] = twiddle(t, m);
  for (std::size_t t = 0; t < hi_n; ++t) hi[t] = twiddle(a.j0 + t * lo_n, m);
  const cd* u = ctx.input<const cd>(0).data();
  const cd* v = ctx.input<const cd>(1).data();
  cd* y = ctx.output<cd>().data();
  const double sign = a.side == 0 ? 1.0 : -1.0;
  ctx.parallel_chunks(0, hi_n, [&](std::size_t h0, std::size_t h1) {
    for (std::size_t h = h0; h < h1; ++h)
      for (std::size_t l = 0; l < lo_n; ++l) {
        const std::size_t t = h * lo_n + l;
        y[t] = u[t] + sign * (hi[h] * lo[l] * v[t]);
      }
  });
}

std::vector<std::byte> bit_reversal(std::size_t n) {
  // rev(i) from rev(i / 2): one step per index (2^24 indices at Table 1's largest size).
  const unsigned bits = detail::log2_exact(n);
  std::vector<std::uint32_t> rev(n, 0);
  for (std::size_t i = 1; i < n; ++i)
    rev[i] = (rev[i >> 1] >> 1) | (static_cast<std::uint32_t>(i & 1) << (bits - 1));
  std::vector<std::byte> bytes(n * 4);
  std::memcpy(bytes.data(), rev.data(), bytes.size());
  return bytes;
}

}  // namespace

Result<Graph> paper_fft_graph(std::size_t n) {
  auto blocks = paper_blocks("fft", n);
  if (!blocks.ok()) return blocks.status();
  const std::size_t P = *blocks, B = kPaperFftBlock, block_bytes = B * 16;
  const unsigned log2b = detail::log2_exact(B);
  Graph g("fft");
  const DataId X = g.input("X", n * 16), Y = g.output("Y", n * 16);
  const DataId R = g.constant("R", bit_reversal(n));
  const DataId Xr = g.inner("Xr", n * 16);
  g.actor("reorder", "rf.reorder", {X, R}, Xr).args("elem=16").work(static_cast<double>(n));  // ~1 ns per gathered point
  std::vector<DataId> cur(P);
  for (std::size_t b = 0; b < P; ++b) {
    const std::string bs = std::to_string(b);
    const DataId piece = g.inner("S" + bs, block_bytes);
    g.actor("split" + bs, "rf.split", {Xr}, piece).args("offset=" + std::to_string(b * block_bytes));
    cur[b] = g.inner("F0_" + bs, block_bytes);
    // ~2 ns per butterfly, B/2 butterflies per stage, log2 B stages.
    g.actor("fft" + bs, "fft.local", {piece}, cur[b]).work(static_cast<double>(B * log2b));
  }
  for (std::size_t q = 0, stride = 1; stride < P; ++q, stride *= 2) {
    std::vector<DataId> next(P);
    for (std::size_t b = 0; b < P; ++b) {
      const std::size_t low = b & ~stride, high = low | stride;
      const std::string name = std::to_string(q + 1) + "_" + std::to_string(b);
      next[b] = g.inner("F" + name, block_bytes);
      g.actor("half" + name, "fft.half", {cur[low], cur[high]}, next[b])
          .args("m=" + std::to_string(log2b + q + 1) + ",j0=" + std::to_string((low % stride) * B) +
                ",side=" + std::to_string(b == low ? 0 : 1))
          .work(static_cast<double>(B) * 1.5);  // ns: one complex multiply-add per point
    }
    cur = std::move(next);
  }
  g.actor("collect", "rf.collect", cur, Y);
  return g;
}

void register_paper_fft_actors(Registry& reg) {
  reg.add("fft.local", ActorSpec{run_local, check_local, false,
                                 "radix-2 DFT of a block of up to 2^13 complex doubles given in bit-reversed order"});
  reg.add("fft.half", ActorSpec{run_half, check_half, false,
                                "one side of the radix-2 butterflies between two blocks (args: m=LOG2M,j0=J,side=0|1)"});
}

}  // namespace redflow::apps
