// Paper-profile matrix multiplication (apps/paper.hpp): 200 x 200 int32
// blocks, k^3 + 2k^2 + 3 actors for k = n/200. Its actors: mm.acc (one link
// of the chain C_ij += A_il * B_lj) and mat.unblock (the driver's collect of
// block-major C into row-major C). The first link of each chain is the fast
// profile's mm.block, which computes a product without a previous sum.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "apps/actor_util.hpp"
#include "apps/matmul.hpp"
#include "apps/paper.hpp"

namespace redflow::apps {

namespace {

using detail::arg_positive;
using detail::expect_inputs;

// mm.acc, args "n=B": output = input 2 + input 0 * input 1, all B x B int32, row-major.
std::string check_acc(const ActorShape& s) {
  std::uint64_t b = 0;
  if (auto e = arg_positive(s.args, "n", &b); !e.empty()) return e;
  if (auto e = expect_inputs(s.input_bytes.size(), 3); !e.empty()) return e;
  const std::size_t bytes = b * b * 4;
  for (std::size_t i = 0; i < 3; ++i)
    if (s.input_bytes[i] != bytes)
      return "input " + std::to_string(i) + " has " + std::to_string(s.input_bytes[i]) + " bytes, a " + std::to_string(b) +
             " x " + std::to_string(b) + " int32 block has " + std::to_string(bytes);
  if (s.output_bytes != bytes)
    return "output has " + std::to_string(s.output_bytes) + " bytes, a " + std::to_string(b) + " x " + std::to_string(b) +
           " int32 block has " + std::to_string(bytes);
  return "";
}

void run_acc(ActorContext& ctx) {
  const std::size_t in[3] = {ctx.num_inputs() > 0 ? ctx.input_bytes(0).size() : 0,
                             ctx.num_inputs() > 1 ? ctx.input_bytes(1).size() : 0,
                             ctx.num_inputs() > 2 ? ctx.input_bytes(2).size() : 0};
  if (auto e = check_acc({{in, std::min<std::size_t>(ctx.num_inputs(), 3)}, ctx.output_bytes().size(), ctx.args()});
      !e.empty() || ctx.num_inputs() != 3) {
    ctx.fail(e.empty() ? "expects 3 inputs" : e);
    return;
  }
  const std::size_t b = *ActorContext::find_arg_u64(ctx.args(), "n");
  const std::int32_t* A = ctx.input<std::int32_t>(0).data();
  const std::int32_t* B = ctx.input<std::int32_t>(1).data();
  const std::int32_t* prev = ctx.input<std::int32_t>(2).data();
  std::int32_t* C = ctx.output<std::int32_t>().data();
  constexpr std::size_t kRows = 8;  // rows per chunk of the tile's parallel loop
  ctx.parallel_chunks(0, (b + kRows - 1) / kRows, [&](std::size_t lo, std::size_t hi) {
    const std::size_t r0 = lo * kRows, r1 = std::min(hi * kRows, b);
    matmul_kernel(A + r0 * b, b, B, b, C + r0 * b, b, r1 - r0, b, b);
    // Add the previous partial sum; uint32 so that overflow wraps instead of being UB.
    for (std::size_t i = r0 * b; i < r1 * b; ++i)
      C[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(C[i]) + static_cast<std::uint32_t>(prev[i]));
  });
}

// mat.unblock, args "block=B,elem=E": k^2 inputs, block (i, j) = input i*k + j,
// each B x B elements of E bytes; output the kB x kB row-major matrix.
std::string check_unblock(const ActorShape& s) {
  std::uint64_t b = 0, e = 0;
  if (auto m = arg_positive(s.args, "block", &b); !m.empty()) return m;
  if (auto m = arg_positive(s.args, "elem", &e); !m.empty()) return m;
  const std::size_t count = s.input_bytes.size();
  const auto k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(count))));
  if (count == 0 || k * k != count) return "expects k^2 inputs (the blocks of a k x k grid), got " + std::to_string(count);
  for (std::size_t i = 0; i < count; ++i)
    if (s.input_bytes[i] != b * b * e)
      return "input " + std::to_string(i) + " has " + std::to_string(s.input_bytes[i]) + " bytes, a block has " +
             std::to_string(b * b * e);
  if (s.output_bytes != count * b * b * e)
    return "output has " + std::to_string(s.output_bytes) + " bytes, the " + std::to_string(k * b) + " x " +
           std::to_string(k * b) + " matrix has " + std::to_string(count * b * b * e);
  return "";
}

void run_unblock(ActorContext& ctx) {
  // The shape check's conditions, re-checked without allocating (actors do not use the heap).
  auto b = ActorContext::find_arg_u64(ctx.args(), "block");
  auto elem = ActorContext::find_arg_u64(ctx.args(), "elem");
  const std::size_t count = ctx.num_inputs();
  const auto k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(count))));
  bool ok = b && elem && *b > 0 && *elem > 0 && count > 0 && k * k == count &&
            ctx.output_bytes().size() == count * *b * *b * *elem;
  for (std::size_t i = 0; ok && i < count; ++i) ok = ctx.input_bytes(i).size() == *b * *b * *elem;
  if (!ok) {
    ctx.fail("needs args block and elem, k^2 inputs of block^2 elements and an output of k^2 blocks");
    return;
  }
  const std::size_t row = k * *b * *elem, seg = *b * *elem;  // bytes of an output row, of a block row
  std::byte* out = ctx.output_bytes().data();
  ctx.parallel_for(0, count, [&](std::size_t blk) {
    const std::byte* src = ctx.input_bytes(blk).data();
    const std::size_t i = blk / k, j = blk % k;
    for (std::size_t r = 0; r < *b; ++r) std::memcpy(out + (i * *b + r) * row + j * seg, src + r * seg, seg);
  });
}

std::vector<std::byte> block_major_permutation(std::size_t k, std::size_t b) {
  // In units of one block row (b int32): block (I, J)'s row r comes from
  // matrix row I*b + r, column block J.
  std::vector<std::byte> bytes(k * k * b * 4);
  std::size_t at = 0;
  for (std::size_t I = 0; I < k; ++I)
    for (std::size_t J = 0; J < k; ++J)
      for (std::size_t r = 0; r < b; ++r, ++at) {
        const auto src = static_cast<std::uint32_t>((I * b + r) * k + J);
        std::memcpy(bytes.data() + 4 * at, &src, 4);
      }
  return bytes;
}

}  // namespace

Result<Graph> paper_matmul_graph(std::size_t n) {
  auto blocks = paper_blocks("matmul", n);
  if (!blocks.ok()) return blocks.status();
  const std::size_t k = *blocks, b = kPaperMatmulBlock, block_bytes = b * b * 4, bytes = n * n * 4;
  Graph g("matmul");
  const DataId A = g.input("A", bytes), B = g.input("B", bytes), C = g.output("C", bytes);
  // Section 6.1: the driver prepares the input so that blocks are contiguous (DMA-able).
  const DataId R = g.constant("R", block_major_permutation(k, b));
  const DataId Ab = g.inner("Ab", bytes), Bb = g.inner("Bb", bytes);
  const std::string reorder_args = "elem=" + std::to_string(b * 4);
  const double copy_ns = static_cast<double>(n * n) / 2;  // a gather: about 2 int32 per ns
  g.actor("reorderA", "rf.reorder", {A, R}, Ab).args(reorder_args).work(copy_ns);
  g.actor("reorderB", "rf.reorder", {B, R}, Bb).args(reorder_args).work(copy_ns);
  std::vector<DataId> a(k * k), bl(k * k);
  for (std::size_t i = 0; i < k * k; ++i) {
    const std::string off = "offset=" + std::to_string(i * block_bytes);
    a[i] = g.inner("A" + std::to_string(i / k) + "_" + std::to_string(i % k), block_bytes);
    g.actor("splitA" + std::to_string(i), "rf.split", {Ab}, a[i]).args(off);
    bl[i] = g.inner("B" + std::to_string(i / k) + "_" + std::to_string(i % k), block_bytes);
    g.actor("splitB" + std::to_string(i), "rf.split", {Bb}, bl[i]).args(off);
  }
  const double mm_ns = static_cast<double>(b * b * b) / 32;  // the kernel: ~32 multiply-adds per ns
  std::vector<DataId> result(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      const std::string ij = std::to_string(i) + "_" + std::to_string(j);
      DataId sum = g.inner("C" + ij + "_0", block_bytes);
      g.actor("mm" + ij + "_0", "mm.block", {a[i * k], bl[j]}, sum).args("k=" + std::to_string(b)).work(mm_ns);
      for (std::size_t l = 1; l < k; ++l) {
        const DataId next = g.inner("C" + ij + "_" + std::to_string(l), block_bytes);
        g.actor("mm" + ij + "_" + std::to_string(l), "mm.acc", {a[i * k + l], bl[l * k + j], sum}, next)
            .args("n=" + std::to_string(b))
            .work(mm_ns);
        sum = next;
      }
      result[i * k + j] = sum;
    }
  g.actor("collectC", "mat.unblock", result, C).args("block=" + std::to_string(b) + ",elem=4").work(copy_ns);
  return g;
}

void register_paper_matmul_actors(Registry& reg) {
  reg.add("mm.acc", ActorSpec{run_acc, check_acc, false,
                              "C block = previous sum + A block * B block, all n x n int32, wrapping (args: n=N)"});
  reg.add("mat.unblock", ActorSpec{run_unblock, check_unblock, /*on_driver=*/true,
                                   "k^2 blocks of a block-major matrix into one row-major matrix (args: block=B,elem=E)"});
}

}  // namespace redflow::apps
