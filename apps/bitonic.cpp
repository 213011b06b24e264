// Bitonic sort: the merge-split actors (sort.low, sort.high), the graph
// generator and the oneTBB baseline. See bitonic.hpp.
#include "apps/bitonic.hpp"

#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "apps/actor_util.hpp"

namespace redflow::apps {
namespace {

// Merge path: how many of the first `s` merged elements come from a (ties
// from a first, as the merge loop below takes them).
std::size_t co_rank(const std::int32_t* a, std::size_t na, const std::int32_t* b, std::size_t nb, std::size_t s) {
  std::size_t lo = s > nb ? s - nb : 0, hi = std::min(s, na);
  while (lo < hi) {
    const std::size_t i = lo + (hi - lo) / 2;  // take i from a, s - i from b
    // Too few from a if a[i] <= b[s - i - 1] (a[i] would come before b's last one taken).
    if (a[i] <= b[s - i - 1]) {
      lo = i + 1;
    } else {
      hi = i;
    }
  }
  return lo;
}

// Merges from positions (i, j) until m outputs are written.
void merge_from(const std::int32_t* a, std::size_t na, const std::int32_t* b, std::size_t nb, std::size_t i,
                std::size_t j, std::int32_t* out, std::size_t m) {
  std::size_t t = 0;
  while (t < m && i < na && j < nb) {
    const std::int32_t x = a[i], y = b[j];
    const bool take_a = x <= y;
    out[t++] = take_a ? x : y;  // branch-free: the comparison is data-dependent and unpredictable
    i += take_a;
    j += !take_a;
  }
  while (t < m && i < na) out[t++] = a[i++];
  while (t < m && j < nb) out[t++] = b[j++];
}

std::string merge_shape(std::span<const std::size_t> in, std::size_t out) {
  if (auto e = detail::expect_inputs(in.size(), 2); !e.empty()) return e;
  for (std::size_t p = 0; p < 2; ++p)
    if (in[p] % 4 != 0)
      return "input " + std::to_string(p) + " has " + std::to_string(in[p]) + " bytes, not a whole number of int32";
  if (out % 4 != 0 || out > in[0] + in[1])
    return "output has " + std::to_string(out) + " bytes; it must be whole int32 and at most the inputs' " +
           std::to_string(in[0] + in[1]);
  return "";
}

std::string check_merge(const ActorShape& s) { return merge_shape(s.input_bytes, s.output_bytes); }

// Like merge_range, but spread over the tile's cores by merge path.
template <bool kHigh>
void run_merge_parallel(ActorContext& ctx) {
  std::size_t in[2] = {0, 0};
  for (std::size_t p = 0; p < std::min<std::size_t>(2, ctx.num_inputs()); ++p) in[p] = ctx.input_bytes(p).size();
  if (auto e = merge_shape({in, ctx.num_inputs()}, ctx.output_bytes().size()); !e.empty()) {
    ctx.fail(e);
    return;
  }
  auto a = ctx.input<std::int32_t>(0), b = ctx.input<std::int32_t>(1);
  auto out = ctx.output<std::int32_t>();
  const std::size_t first = kHigh ? a.size() + b.size() - out.size() : 0;
  ctx.parallel_chunks(0, out.size(), [&](std::size_t lo, std::size_t hi) {
    merge_range(a.data(), a.size(), b.data(), b.size(), first + lo, out.data() + lo, hi - lo);
  });
}

std::size_t floor_pow2(std::size_t v) {
  std::size_t p = 1;
  while (p * 2 <= v && p * 2 != 0) p *= 2;
  return p;
}

}  // namespace

void merge_range(const std::int32_t* a, std::size_t na, const std::int32_t* b, std::size_t nb, std::size_t first,
                 std::int32_t* out, std::size_t m) {
  const std::size_t i = co_rank(a, na, b, nb, first);
  merge_from(a, na, b, nb, i, first - i, out, m);
}

void sort_direct(std::int32_t* data, std::size_t n, unsigned threads) {
  tbb::task_arena arena(static_cast<int>(std::max(1u, threads)));
  arena.execute([&] { tbb::parallel_sort(data, data + n); });
}

Result<std::size_t> bitonic_blocks(const BitonicParams& p) {
  if (!detail::is_power_of_two(p.n))
    return Status::InvalidArgument("--n must be a power of two for bitonic (the number of int32), got " +
                                   std::to_string(p.n));
  const std::size_t slot_elems = p.target.slot_bytes / 4;
  if (slot_elems == 0) return Status::InvalidArgument("--slot-bytes must hold at least one int32");
  if (p.block != 0) {
    if (!detail::is_power_of_two(p.block) || p.block > p.n || p.block > slot_elems)
      return Status::InvalidArgument("--block " + std::to_string(p.block) + ": for bitonic of " + std::to_string(p.n) +
                                     " elements it must be a power of two up to " +
                                     std::to_string(std::min(p.n, floor_pow2(slot_elems))) +
                                     " (elements per block; a block must fit a slot)");
    return p.n / p.block;
  }
  // Blocks fit a slot; at least two per tile so that every merge stage keeps all tiles busy.
  const std::size_t fit = p.n / std::min(p.n, floor_pow2(slot_elems));
  const std::size_t par = std::min(p.n, floor_pow2(2 * std::max(1u, p.target.tiles)));
  return std::max(fit, par);
}

Result<Graph> bitonic_graph(const BitonicParams& params) {
  auto blocks = bitonic_blocks(params);
  if (!blocks.ok()) return blocks.status();
  const std::size_t n = params.n, K = *blocks, B = n / K;
  Graph g("bitonic");
  const DataId X = g.input("X", n * 4), Y = g.output("Y", n * 4);
  if (K == 1) {
    g.actor("sort", "i32.sort", {X}, Y);
    return g;
  }
  const double b = static_cast<double>(B);
  std::vector<DataId> cur(K);
  for (std::size_t i = 0; i < K; ++i) {
    const std::string is = std::to_string(i);
    const DataId piece = g.inner("X" + is, B * 4);
    g.actor("split" + is, "rf.split", {X}, piece).args("offset=" + std::to_string(i * B * 4));
    cur[i] = g.inner("S" + is, B * 4);
    // std::sort: about 3 ns per element and level of log2 on the development machine.
    g.actor("sort" + is, "i32.sort", {piece}, cur[i]).work(b * std::log2(std::max(2.0, b)) * 3);
  }
  // The bitonic network on K blocks: for every size 2, 4, ..., K and stride
  // size/2, ..., 1, block i meets block i ^ stride; the pair is sorted
  // ascending if (i & size) == 0, and block min(i, partner) gets the lower half.
  std::size_t stage = 0;
  for (std::size_t size = 2; size <= K; size *= 2) {
    for (std::size_t stride = size / 2; stride >= 1; stride /= 2, ++stage) {
      std::vector<DataId> next(K);
      for (std::size_t i = 0; i < K; ++i) {
        const std::size_t partner = i ^ stride;
        const bool ascending = (i & size) == 0;
        const bool low = (i < partner) == ascending;
        const bool last = size == K && stride == 1;
        const std::string name = std::to_string(stage) + "_" + std::to_string(i);
        next[i] = g.inner((last ? "Y" : "M") + name, B * 4);
        g.actor((low ? "low" : "high") + name, low ? "sort.low" : "sort.high", {cur[i], cur[partner]}, next[i])
            .work(b * 1.5);  // ns: a branch-free merge step per element
      }
      cur = std::move(next);
    }
  }
  g.actor("collect", "rf.collect", cur, Y);
  return g;
}

void register_bitonic_actors(Registry& reg) {
  reg.add("sort.low", ActorSpec{run_merge_parallel<false>, check_merge, false,
                                "the smallest elements of two sorted int32 inputs, sorted (merge-split, lower half)"});
  reg.add("sort.high", ActorSpec{run_merge_parallel<true>, check_merge, false,
                                 "the largest elements of two sorted int32 inputs, sorted (merge-split, upper half)"});
}

}  // namespace redflow::apps
