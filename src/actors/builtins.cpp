// The built-in actor functions (docs/actors.md has the table of semantics):
//   rf.split, rf.collect, rf.reorder  the paper's special actors (sec. 4.7),
//                                     run on the driver;
//   i32.add, i32.mul, i32.matmul,     int32 kernels for the benchmark graphs
//   i32.sort                          and the tests.
// Every actor follows the rules of sec. 3: it is pure, writes its whole
// output, allocates nothing on the heap (only its error message, on the
// failure path) and reports bad data with ctx.fail() instead of invoking UB.
// Each one comes with a shape check so that a graph that cannot work is
// rejected at load time, naming the actor; the functions still re-check what
// they rely on at run time, because they can be called without a validator.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "actors/multiversion.hpp"
#include "redflow/actor_context.hpp"
#include "redflow/registry.hpp"

namespace redflow {
namespace {

// ---------------------------------------------------------------------------
// Shape-check helpers. Messages say what is wrong and with which port; the
// validator prefixes the actor's name.

std::string plural(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string expect_inputs(const ActorShape& s, std::size_t n) {
  if (s.input_bytes.size() == n) return "";
  return "expects " + plural(n, "input") + ", got " + std::to_string(s.input_bytes.size());
}

std::string expect_int32s(const char* what, std::size_t bytes) {
  if (bytes % 4 == 0) return "";
  return std::string(what) + " has " + std::to_string(bytes) + " bytes, not a whole number of int32 (multiple of 4)";
}

std::string input_name(std::size_t port) { return "input " + std::to_string(port); }

// Parses a required positive-or-zero integer arg, returning an error message
// for a missing or malformed value.
std::string required_u64(std::string_view args, std::string_view key, std::uint64_t* out) {
  auto raw = ActorContext::find_arg(args, key);
  if (!raw) return "missing required arg '" + std::string(key) + "' (e.g. args=\"" + std::string(key) + "=4\")";
  auto v = ActorContext::find_arg_u64(args, key);
  if (!v) return "arg '" + std::string(key) + "' must be a non-negative integer, got '" + std::string(*raw) + "'";
  *out = *v;
  return "";
}

// ---------------------------------------------------------------------------
// rf.split: output = input[offset, offset + output_bytes).

std::string check_split(const ActorShape& s) {
  if (auto e = expect_inputs(s, 1); !e.empty()) return e;
  std::uint64_t offset = 0;
  if (auto e = required_u64(s.args, "offset", &offset); !e.empty()) return e;
  const std::size_t in = s.input_bytes[0];
  // Written without offset + output_bytes so that a huge offset cannot wrap.
  if (offset > in || s.output_bytes > in - offset) {
    return "offset " + std::to_string(offset) + " + " + std::to_string(s.output_bytes) +
           " output bytes runs beyond the input's " + std::to_string(in) + " bytes";
  }
  return "";
}

void run_split(ActorContext& ctx) {
  auto offset = ActorContext::find_arg_u64(ctx.args(), "offset");
  if (ctx.num_inputs() != 1 || !offset) {
    ctx.fail("needs one input and an integer arg 'offset'");
    return;
  }
  auto in = ctx.input_bytes(0);
  auto out = ctx.output_bytes();
  if (*offset > in.size() || out.size() > in.size() - *offset) {
    ctx.fail("range starting at offset " + std::to_string(*offset) + " lies beyond the input's " +
             std::to_string(in.size()) + " bytes");
    return;
  }
  if (!out.empty()) std::memcpy(out.data(), in.data() + *offset, out.size());
}

// ---------------------------------------------------------------------------
// rf.compare: the compare actor of the redundancy transformation (Fig. 3).
// The engine votes on checksums without running this; this is the reference
// semantics, used when a transformed graph runs without its replica metadata.

std::string check_compare(const ActorShape& s) {
  if (s.input_bytes.size() < 2 || s.input_bytes.size() > 3)
    return "expects 2 or 3 replica inputs, got " + std::to_string(s.input_bytes.size());
  for (std::size_t b : s.input_bytes)
    if (b != s.output_bytes)
      return "every replica input must have the output's " + std::to_string(s.output_bytes) + " bytes, one has " + std::to_string(b);
  return "";
}

void run_compare(ActorContext& ctx) {
  const std::size_t n = ctx.num_inputs();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      auto a = ctx.input_bytes(i), b = ctx.input_bytes(j);
      if (a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0)) {
        if (!a.empty()) std::memcpy(ctx.output_bytes().data(), a.data(), a.size());
        return;
      }
    }
  ctx.fail("no two of its " + std::to_string(n) + " replica inputs agree");
}

// ---------------------------------------------------------------------------
// rf.collect: output = input0 ++ input1 ++ ... in port order.

std::string check_collect(const ActorShape& s) {
  if (s.input_bytes.empty()) return "expects at least 1 input, got 0";
  std::size_t sum = 0;
  for (std::size_t b : s.input_bytes) {
    // Sizes come from the graph: two 2^63-byte inputs must not wrap to 0.
    if (__builtin_add_overflow(sum, b, &sum))
      return "inputs hold more than " + std::to_string(SIZE_MAX) + " bytes in total, more than any output can";
  }
  if (sum != s.output_bytes) {
    return "inputs hold " + std::to_string(sum) + " bytes in total but the output has " +
           std::to_string(s.output_bytes) + " (they must be equal)";
  }
  return "";
}

void run_collect(ActorContext& ctx) {
  auto out = ctx.output_bytes();
  std::size_t sum = 0;
  for (std::size_t p = 0; p < ctx.num_inputs(); ++p) sum += ctx.input_bytes(p).size();
  if (sum != out.size()) {
    ctx.fail("inputs hold " + std::to_string(sum) + " bytes but the output has " + std::to_string(out.size()));
    return;
  }
  std::size_t at = 0;
  for (std::size_t p = 0; p < ctx.num_inputs(); ++p) {
    auto in = ctx.input_bytes(p);
    if (!in.empty()) std::memcpy(out.data() + at, in.data(), in.size());
    at += in.size();
  }
}

// ---------------------------------------------------------------------------
// rf.reorder: output[i] = elements[perm[i]], elements of `elem` bytes.

std::string check_reorder(const ActorShape& s) {
  if (auto e = expect_inputs(s, 2); !e.empty()) return e;
  std::uint64_t elem = 0;
  if (auto e = required_u64(s.args, "elem", &elem); !e.empty()) return e;
  if (elem == 0) return "arg 'elem' must be > 0 (bytes per element)";
  if (s.input_bytes[0] % elem != 0) {
    return "input 0 has " + std::to_string(s.input_bytes[0]) + " bytes, not a whole number of " +
           std::to_string(elem) + "-byte elements";
  }
  if (s.input_bytes[1] % 4 != 0) {
    return "input 1 (the uint32 permutation) has " + std::to_string(s.input_bytes[1]) +
           " bytes, not a multiple of 4";
  }
  const std::size_t count = s.input_bytes[1] / 4;
  // Compare by division so that count * elem cannot overflow.
  if (s.output_bytes % elem != 0 || s.output_bytes / elem != count) {
    return "output has " + std::to_string(s.output_bytes) + " bytes but the permutation selects " +
           plural(count, "element") + " of " + std::to_string(elem) + " bytes";
  }
  return "";
}

// Copies the elements picked by perm[b, e) into out. Returns the first
// position in [b, e) whose index is >= n, or kNone; out-of-range positions
// are zero-filled so that the output is still fully written.
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

template <std::size_t kElem>
std::size_t gather_fixed(const std::byte* in, std::size_t n, const std::uint32_t* perm, std::byte* out, std::size_t b,
                         std::size_t e) {
  std::size_t bad = kNone;
  for (std::size_t i = b; i < e; ++i) {
    const std::uint32_t idx = perm[i];
    if (idx < n) {
      std::memcpy(out + i * kElem, in + std::size_t{idx} * kElem, kElem);  // constant size: becomes a move
    } else {
      std::memset(out + i * kElem, 0, kElem);
      if (bad == kNone) bad = i;
    }
  }
  return bad;
}

std::size_t gather_any(const std::byte* in, std::size_t n, std::size_t elem, const std::uint32_t* perm, std::byte* out,
                       std::size_t b, std::size_t e) {
  std::size_t bad = kNone;
  for (std::size_t i = b; i < e; ++i) {
    const std::uint32_t idx = perm[i];
    if (idx < n) {
      std::memcpy(out + i * elem, in + std::size_t{idx} * elem, elem);
    } else {
      std::memset(out + i * elem, 0, elem);
      if (bad == kNone) bad = i;
    }
  }
  return bad;
}

void run_reorder(ActorContext& ctx) {
  auto elem_arg = ActorContext::find_arg_u64(ctx.args(), "elem");
  if (ctx.num_inputs() != 2 || !elem_arg || *elem_arg == 0) {
    ctx.fail("needs two inputs and an integer arg 'elem' > 0");
    return;
  }
  const std::size_t elem = *elem_arg;
  auto in = ctx.input_bytes(0);
  auto perm = ctx.input<std::uint32_t>(1);
  auto out = ctx.output_bytes();
  if (in.size() % elem != 0 || ctx.input_bytes(1).size() % 4 != 0 || out.size() % elem != 0 ||
      out.size() / elem != perm.size()) {
    ctx.fail("input, permutation and output sizes do not agree with elem=" + std::to_string(elem));
    return;
  }
  const std::size_t n = in.size() / elem;
  // The first bad position over all chunks; chunks may run on several cores,
  // so it is kept in an atomic and reported once, after the loop.
  std::atomic<std::size_t> first_bad{kNone};
  ctx.parallel_chunks(0, perm.size(), [&](std::size_t b, std::size_t e) {
    std::size_t bad;
    switch (elem) {
      case 1: bad = gather_fixed<1>(in.data(), n, perm.data(), out.data(), b, e); break;
      case 2: bad = gather_fixed<2>(in.data(), n, perm.data(), out.data(), b, e); break;
      case 4: bad = gather_fixed<4>(in.data(), n, perm.data(), out.data(), b, e); break;
      case 8: bad = gather_fixed<8>(in.data(), n, perm.data(), out.data(), b, e); break;
      case 16: bad = gather_fixed<16>(in.data(), n, perm.data(), out.data(), b, e); break;
      default: bad = gather_any(in.data(), n, elem, perm.data(), out.data(), b, e); break;
    }
    std::size_t seen = first_bad.load(std::memory_order_relaxed);
    while (bad < seen && !first_bad.compare_exchange_weak(seen, bad, std::memory_order_relaxed)) {
    }
  });
  if (std::size_t bad = first_bad.load(); bad != kNone) {
    ctx.fail("permutation index " + std::to_string(perm[bad]) + " out of range (" + std::to_string(n) +
             " elements)");
  }
}

// ---------------------------------------------------------------------------
// i32.add, i32.mul: element-wise, wrapping. The arithmetic is done on
// uint32_t: signed overflow is UB, unsigned wraps, and the two's complement
// bits come out the same.

std::string check_binary_i32(const ActorShape& s) {
  if (auto e = expect_inputs(s, 2); !e.empty()) return e;
  for (std::size_t p = 0; p < 2; ++p) {
    if (auto e = expect_int32s(input_name(p).c_str(), s.input_bytes[p]); !e.empty()) return e;
  }
  if (s.input_bytes[0] != s.input_bytes[1]) {
    return "inputs differ in size (" + std::to_string(s.input_bytes[0]) + " and " +
           std::to_string(s.input_bytes[1]) + " bytes)";
  }
  if (s.output_bytes != s.input_bytes[0]) {
    return "output has " + std::to_string(s.output_bytes) + " bytes, the inputs " +
           std::to_string(s.input_bytes[0]) + " (they must be equal)";
  }
  return "";
}

bool binary_i32_sizes_ok(ActorContext& ctx) {
  if (ctx.num_inputs() != 2 || ctx.input_bytes(0).size() % 4 != 0 ||
      ctx.input_bytes(0).size() != ctx.input_bytes(1).size() || ctx.output_bytes().size() != ctx.input_bytes(0).size()) {
    ctx.fail("needs two int32 inputs and an output of the same size");
    return false;
  }
  return true;
}

template <typename Op>
void run_elementwise(ActorContext& ctx, Op op) {
  if (!binary_i32_sizes_ok(ctx)) return;
  const std::uint32_t* a = ctx.input<std::uint32_t>(0).data();
  const std::uint32_t* b = ctx.input<std::uint32_t>(1).data();
  std::uint32_t* out = ctx.output<std::uint32_t>().data();
  ctx.parallel_chunks(0, ctx.output<std::uint32_t>().size(), [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) out[i] = op(a[i], b[i]);
  });
}

// ---------------------------------------------------------------------------
// i32.matmul: C = A * B, square row-major n x n, wrapping.

// n with n * n == elems, or 0 with *ok = false if elems is not a perfect square.
std::size_t exact_sqrt(std::size_t elems, bool* ok) {
  auto n = static_cast<std::size_t>(std::sqrt(static_cast<double>(elems)));
  // The double may be off by one for large values; settle it with integers.
  while (n > 0 && n * n > elems) --n;
  while ((n + 1) * (n + 1) <= elems) ++n;
  *ok = n * n == elems;
  return n;
}

std::string check_matmul(const ActorShape& s) {
  if (auto e = expect_inputs(s, 2); !e.empty()) return e;
  for (std::size_t p = 0; p < 2; ++p) {
    if (auto e = expect_int32s(input_name(p).c_str(), s.input_bytes[p]); !e.empty()) return e;
  }
  if (s.input_bytes[0] != s.input_bytes[1] || s.output_bytes != s.input_bytes[0]) {
    return "inputs and output must be n*n int32 matrices of the same size, got " + std::to_string(s.input_bytes[0]) +
           ", " + std::to_string(s.input_bytes[1]) + " and " + std::to_string(s.output_bytes) + " bytes";
  }
  bool square = false;
  exact_sqrt(s.input_bytes[0] / 4, &square);
  if (!square) {
    return "matrices hold " + std::to_string(s.input_bytes[0] / 4) +
           " int32s, not a perfect square (expected n*n*4 bytes)";
  }
  return "";
}

// The micro-kernels below are written with GCC/Clang vector extensions so they
// vectorise at any optimisation level (-O2 does not auto-vectorise a loop of
// unknown length, and plain x86-64 has no 32-bit vector multiply for the cost
// model to like). REDFLOW_MULTIVERSION (multiversion.hpp) also compiles them
// for AVX2, picked at load time: about 4x faster than SSE2 on the same machine.

typedef std::uint32_t u32x8 __attribute__((vector_size(32)));

// c[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j] for j in [0, len): four
// steps of k at once, so each element of C is loaded and stored once per four
// multiply-adds instead of once per one.
REDFLOW_MULTIVERSION
void axpy4(std::uint32_t* __restrict c, const std::uint32_t* __restrict b0, const std::uint32_t* __restrict b1,
           const std::uint32_t* __restrict b2, const std::uint32_t* __restrict b3, std::uint32_t a0, std::uint32_t a1,
           std::uint32_t a2, std::uint32_t a3, std::size_t len) {
  std::size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    // memcpy: the rows have no alignment guarantee beyond 4 bytes.
    u32x8 x0, x1, x2, x3, acc;
    std::memcpy(&x0, b0 + j, sizeof x0);
    std::memcpy(&x1, b1 + j, sizeof x1);
    std::memcpy(&x2, b2 + j, sizeof x2);
    std::memcpy(&x3, b3 + j, sizeof x3);
    std::memcpy(&acc, c + j, sizeof acc);
    acc += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3;
    std::memcpy(c + j, &acc, sizeof acc);
  }
  for (; j < len; ++j) c[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
}

// c[j] += a0*b0[j]: the k steps left over when the block is not a multiple of 4.
REDFLOW_MULTIVERSION
void axpy1(std::uint32_t* __restrict c, const std::uint32_t* __restrict b0, std::uint32_t a0, std::size_t len) {
  std::size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    u32x8 x0, acc;
    std::memcpy(&x0, b0 + j, sizeof x0);
    std::memcpy(&acc, c + j, sizeof acc);
    acc += a0 * x0;
    std::memcpy(c + j, &acc, sizeof acc);
  }
  for (; j < len; ++j) c[j] += a0 * b0[j];
}

// Block sizes (measured on the dev machine, n = 1000: ~34 Gop/s on one core
// with AVX2): a kKBlock x kColBlock tile of B (128 KiB) stays in L2 while the
// kRowBlock rows of C that use it go by, and a C row segment (2 KiB) stays in
// L1 over the k loop.
constexpr std::size_t kRowBlock = 32;
constexpr std::size_t kKBlock = 64;
constexpr std::size_t kColBlock = 512;

// Computes rows [r0, r1) of C in i-k-j order. Rows of C are independent, so
// different cores can take disjoint row ranges with no synchronisation.
void matmul_rows(const std::uint32_t* A, const std::uint32_t* B, std::uint32_t* C, std::size_t n, std::size_t r0,
                 std::size_t r1) {
  std::fill(C + r0 * n, C + r1 * n, 0u);
  for (std::size_t ii = r0; ii < r1; ii += kRowBlock) {
    const std::size_t iend = std::min(ii + kRowBlock, r1);
    for (std::size_t kk = 0; kk < n; kk += kKBlock) {
      const std::size_t kend = std::min(kk + kKBlock, n);
      for (std::size_t jj = 0; jj < n; jj += kColBlock) {
        const std::size_t len = std::min(jj + kColBlock, n) - jj;
        for (std::size_t i = ii; i < iend; ++i) {
          const std::uint32_t* a = A + i * n;
          std::uint32_t* c = C + i * n + jj;
          const std::uint32_t* b = B + jj;
          std::size_t k = kk;
          for (; k + 4 <= kend; k += 4) {
            axpy4(c, b + k * n, b + (k + 1) * n, b + (k + 2) * n, b + (k + 3) * n, a[k], a[k + 1], a[k + 2], a[k + 3],
                  len);
          }
          for (; k < kend; ++k) axpy1(c, b + k * n, a[k], len);
        }
      }
    }
  }
}

void run_matmul(ActorContext& ctx) {
  bool square = false;
  const std::size_t bytes = ctx.output_bytes().size();
  const std::size_t n = exact_sqrt(bytes / 4, &square);
  if (ctx.num_inputs() != 2 || bytes % 4 != 0 || !square || ctx.input_bytes(0).size() != bytes ||
      ctx.input_bytes(1).size() != bytes) {
    ctx.fail("needs two n*n int32 matrices and an output of the same size");
    return;
  }
  const std::uint32_t* A = ctx.input<std::uint32_t>(0).data();
  const std::uint32_t* B = ctx.input<std::uint32_t>(1).data();
  std::uint32_t* C = ctx.output<std::uint32_t>().data();
  ctx.parallel_chunks(0, n, [&](std::size_t r0, std::size_t r1) { matmul_rows(A, B, C, n, r0, r1); });
}

// ---------------------------------------------------------------------------
// i32.sort: output = input sorted ascending (as signed int32).

std::string check_sort(const ActorShape& s) {
  if (auto e = expect_inputs(s, 1); !e.empty()) return e;
  if (auto e = expect_int32s("input 0", s.input_bytes[0]); !e.empty()) return e;
  if (s.output_bytes != s.input_bytes[0]) {
    return "output has " + std::to_string(s.output_bytes) + " bytes, the input " + std::to_string(s.input_bytes[0]) +
           " (they must be equal)";
  }
  return "";
}

// Below this many elements one core sorts faster than the partitioning pays.
constexpr std::size_t kParallelSortMin = 4096;

// Places the elements that belong at the chunk boundaries bound(lo..hi) with
// nth_element, so that every element of chunk k is <= every element of chunk
// k + 1. Precondition: boundaries lo and hi are already in place. In place and
// O(n log chunks): each recursion level touches every element about once.
void partition_chunks(std::int32_t* v, std::size_t n, std::size_t chunks, std::size_t lo, std::size_t hi) {
  if (hi - lo < 2) return;
  const std::size_t mid = lo + (hi - lo) / 2;
  auto bound = [&](std::size_t k) { return v + k * n / chunks; };
  std::nth_element(bound(lo), bound(mid), bound(hi));
  partition_chunks(v, n, chunks, lo, mid);
  partition_chunks(v, n, chunks, mid, hi);
}

void run_sort(ActorContext& ctx) {
  if (ctx.num_inputs() != 1 || ctx.input_bytes(0).size() % 4 != 0 ||
      ctx.output_bytes().size() != ctx.input_bytes(0).size()) {
    ctx.fail("needs one int32 input and an output of the same size");
    return;
  }
  auto in = ctx.input<std::int32_t>(0);
  auto out = ctx.output<std::int32_t>();
  const std::size_t n = out.size();
  if (n == 0) return;
  std::memcpy(out.data(), in.data(), n * sizeof(std::int32_t));
  const std::size_t chunks = ctx.cores();
  if (chunks <= 1 || n < kParallelSortMin) {
    std::sort(out.begin(), out.end());
    return;
  }
  // Sorting without scratch memory (no heap): split the output into one range
  // per core whose elements are ordered across ranges, then sort the ranges
  // in parallel. No merge is needed afterwards.
  std::int32_t* v = out.data();
  partition_chunks(v, n, chunks, 0, chunks);
  ctx.parallel_for(0, chunks, [&](std::size_t k) { std::sort(v + k * n / chunks, v + (k + 1) * n / chunks); });
}

}  // namespace

Registry Registry::with_builtins() {
  Registry reg;
  reg.add("rf.split", ActorSpec{run_split, check_split, /*on_driver=*/true,
                                "bytes [offset, offset + output size) of its input (args: offset=BYTES)",
                                ActorAlias::kInputRange});
  reg.add("rf.collect", ActorSpec{run_collect, check_collect, /*on_driver=*/true,
                                  "concatenation of its inputs in port order", ActorAlias::kConcatenation});
  reg.add("rf.compare", ActorSpec{run_compare, check_compare, /*on_driver=*/true,
                                  "the value at least two of its 2-3 replica inputs agree on (redundancy's compare actor)",
                                  ActorAlias::kVote});
  reg.add("rf.reorder", ActorSpec{run_reorder, check_reorder, /*on_driver=*/true,
                                  "output[i] = input0[perm[i]], perm = uint32 input 1 (args: elem=BYTES)"});
  reg.add("i32.add", ActorSpec{[](ActorContext& ctx) {
                                 run_elementwise(ctx, [](std::uint32_t a, std::uint32_t b) { return a + b; });
                               },
                               check_binary_i32, false, "element-wise int32 sum of two inputs (wrapping)"});
  reg.add("i32.mul", ActorSpec{[](ActorContext& ctx) {
                                 run_elementwise(ctx, [](std::uint32_t a, std::uint32_t b) { return a * b; });
                               },
                               check_binary_i32, false, "element-wise int32 product of two inputs (wrapping)"});
  reg.add("i32.matmul", ActorSpec{run_matmul, check_matmul, false,
                                  "C = A * B for square row-major int32 matrices (wrapping)"});
  reg.add("i32.sort", ActorSpec{run_sort, check_sort, false, "its int32 input sorted ascending"});
  return reg;
}

}  // namespace redflow
