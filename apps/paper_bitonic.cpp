// Paper-profile bitonic sort (apps/paper.hpp): the bitonic sorting network on
// n = P * 2^15 int32 cut into P blocks. The network's stages with a stride of
// a block or more compare whole blocks element by element (pbit.cmp: the
// element-wise min or max of a block and its partner, one actor per block);
// the stages with a smaller stride stay inside a block: the first phases are
// a local sort (pbit.sort), and every later phase ends with a local bitonic
// merge (pbit.merge). Directions follow the network: within phase size s,
// element i sorts ascending iff (i & s) == 0.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "apps/actor_util.hpp"
#include "apps/paper.hpp"

namespace redflow::apps {

namespace {

using detail::arg_u64;
using detail::expect_inputs;

std::string check_block(const ActorShape& s, std::size_t inputs, const char* flag) {
  if (auto e = expect_inputs(s.input_bytes.size(), inputs); !e.empty()) return e;
  for (std::size_t i = 0; i < inputs; ++i)
    if (s.input_bytes[i] != s.output_bytes || s.output_bytes % 4 != 0)
      return "input " + std::to_string(i) + " and the output must be int32 blocks of the same size";
  std::uint64_t v = 0;
  if (auto e = arg_u64(s.args, flag, &v); !e.empty()) return e;
  if (v > 1) return "arg '" + std::string(flag) + "' must be 0 or 1";
  return "";
}

std::string check_sort(const ActorShape& s) { return check_block(s, 1, "desc"); }
std::string check_cmp(const ActorShape& s) { return check_block(s, 2, "max"); }
std::string check_merge(const ActorShape& s) {
  if (auto e = check_block(s, 1, "desc"); !e.empty()) return e;
  if (!detail::is_power_of_two(s.output_bytes / 4)) return "a bitonic merge needs a power-of-two number of int32";
  return "";
}

// Checks the shape at run time too (actors can be called without a validator); false after ctx.fail.
bool shape_ok(ActorContext& ctx, std::string (*check)(const ActorShape&)) {
  const std::size_t in[2] = {ctx.num_inputs() > 0 ? ctx.input_bytes(0).size() : 0,
                             ctx.num_inputs() > 1 ? ctx.input_bytes(1).size() : 0};
  const std::string e = check({{in, std::min<std::size_t>(ctx.num_inputs(), 2)}, ctx.output_bytes().size(), ctx.args()});
  if (!e.empty()) ctx.fail(e);
  return e.empty();
}

bool flag(const ActorContext& ctx, std::string_view key) { return ActorContext::find_arg_u64(ctx.args(), key).value_or(0) == 1; }

// pbit.sort, args "desc=0|1": the block sorted ascending or descending.
void run_sort(ActorContext& ctx) {
  if (!shape_ok(ctx, check_sort)) return;
  auto out = ctx.output<std::int32_t>();
  std::memcpy(out.data(), ctx.input_bytes(0).data(), out.size_bytes());
  if (flag(ctx, "desc")) {
    std::sort(out.begin(), out.end(), std::greater<>());
  } else {
    std::sort(out.begin(), out.end());
  }
}

// pbit.cmp, args "max=0|1": out[i] = min (or max) of input 0 [i] and input 1 [i].
void run_cmp(ActorContext& ctx) {
  if (!shape_ok(ctx, check_cmp)) return;
  const std::int32_t* a = ctx.input<const std::int32_t>(0).data();
  const std::int32_t* b = ctx.input<const std::int32_t>(1).data();
  auto out = ctx.output<std::int32_t>();
  const bool take_max = flag(ctx, "max");
  ctx.parallel_chunks(0, out.size(), [&](std::size_t lo, std::size_t hi) {
    if (take_max) {
      for (std::size_t i = lo; i < hi; ++i) out[i] = std::max(a[i], b[i]);
    } else {
      for (std::size_t i = lo; i < hi; ++i) out[i] = std::min(a[i], b[i]);
    }
  });
}

// pbit.merge, args "desc=0|1": a bitonic block sorted by the half-cleaner
// stages of the network (strides n/2, ..., 1), as the paper's in-place version does.
void run_merge(ActorContext& ctx) {
  if (!shape_ok(ctx, check_merge)) return;
  auto out = ctx.output<std::int32_t>();
  std::memcpy(out.data(), ctx.input_bytes(0).data(), out.size_bytes());
  const bool desc = flag(ctx, "desc");
  std::int32_t* y = out.data();
  const std::size_t n = out.size();
  for (std::size_t stride = n / 2; stride >= 1; stride /= 2)
    for (std::size_t base = 0; base < n; base += 2 * stride)
      for (std::size_t i = base; i < base + stride; ++i) {
        const std::int32_t lo = std::min(y[i], y[i + stride]), hi = std::max(y[i], y[i + stride]);
        y[i] = desc ? hi : lo;
        y[i + stride] = desc ? lo : hi;
      }
}

}  // namespace

Result<Graph> paper_bitonic_graph(std::size_t n) {
  auto blocks = paper_blocks("bitonic", n);
  if (!blocks.ok()) return blocks.status();
  const std::size_t P = *blocks, B = kPaperSortBlock, block_bytes = B * 4;
  const double b = static_cast<double>(B), log2b = static_cast<double>(detail::log2_exact(B));
  Graph g("bitonic");
  const DataId X = g.input("X", n * 4), Y = g.output("Y", n * 4);
  std::vector<DataId> cur(P);
  for (std::size_t i = 0; i < P; ++i) {
    const std::string is = std::to_string(i);
    const DataId piece = g.inner("X" + is, block_bytes);
    g.actor("split" + is, "rf.split", {X}, piece).args("offset=" + std::to_string(i * block_bytes));
    cur[i] = g.inner("S" + is, block_bytes);
    // Phases up to size B: block i ends sorted ascending iff (i * B) & B == 0.
    g.actor("sort" + is, "pbit.sort", {piece}, cur[i]).args(std::string("desc=") + ((i & 1) ? "1" : "0")).work(b * log2b * 3);
  }
  // Phase of size s = 2^k B (k = 1..L): strides s/2, ..., B between blocks i and
  // i ^ (stride / B), then strides B/2, ..., 1 inside each block.
  for (std::size_t k = 1; (std::size_t{1} << k) <= P; ++k) {
    const std::size_t size = std::size_t{1} << k;  // in blocks
    for (std::size_t stride = size / 2; stride >= 1; stride /= 2) {
      std::vector<DataId> next(P);
      for (std::size_t i = 0; i < P; ++i) {
        const std::size_t partner = i ^ stride;
        const bool ascending = (i & size) == 0, lower = i < partner;
        const std::string name = std::to_string(k) + "_" + std::to_string(stride) + "_" + std::to_string(i);
        next[i] = g.inner("C" + name, block_bytes);
        g.actor("cmp" + name, "pbit.cmp", {cur[i], cur[partner]}, next[i])
            .args(std::string("max=") + (lower == ascending ? "0" : "1"))
            .work(b * 0.5);  // ns: a vectorised min or max per element
      }
      cur = std::move(next);
    }
    std::vector<DataId> merged(P);
    for (std::size_t i = 0; i < P; ++i) {
      const std::string name = std::to_string(k) + "_" + std::to_string(i);
      merged[i] = g.inner("M" + name, block_bytes);
      g.actor("merge" + name, "pbit.merge", {cur[i]}, merged[i])
          .args(std::string("desc=") + ((i & size) ? "1" : "0"))
          .work(b * log2b / 2);  // ns: log2 B half-cleaner passes
    }
    cur = std::move(merged);
  }
  g.actor("collect", "rf.collect", cur, Y);
  return g;
}

void register_paper_bitonic_actors(Registry& reg) {
  reg.add("pbit.sort", ActorSpec{run_sort, check_sort, false, "an int32 block sorted ascending or descending (args: desc=0|1)"});
  reg.add("pbit.cmp", ActorSpec{run_cmp, check_cmp, false,
                                "element-wise min (max=0) or max (max=1) of two int32 blocks: a bitonic stage between blocks"});
  reg.add("pbit.merge", ActorSpec{run_merge, check_merge, false,
                                  "a bitonic int32 block sorted by half-cleaner stages (args: desc=0|1)"});
}

}  // namespace redflow::apps
