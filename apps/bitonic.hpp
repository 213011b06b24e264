// Bitonic sort of 2^L int32 (section 6 of Kühbacher et al.): the input is cut
// into K = 2^k blocks (rf.split, zero-copy), each block is sorted on a tile
// (the built-in i32.sort), and the blocks are merged by the k(k+1)/2 stages of
// the bitonic sorting network on K elements, in which a compare-exchange of
// two sorted blocks is a merge-split: one actor keeps the lower half of their
// union (sort.low), another the upper half (sort.high), each writing one
// sorted block, so every actor still has one output. The last stage's blocks
// are the sorted output, collected without copying (rf.collect).
#pragma once

#include <cstddef>
#include <cstdint>

#include "apps/target.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::apps {

struct BitonicParams {
  std::size_t n = 0;      // elements, a power of two (--n)
  std::size_t block = 0;  // elements per block, a power of two (--block); 0 = choose from the target
  Target target;
};

// Input "X" and output "Y" (n * 4 bytes each); Y is X sorted ascending (signed).
Result<Graph> bitonic_graph(const BitonicParams& params);
Result<std::size_t> bitonic_blocks(const BitonicParams& params);

// Baseline: oneTBB parallel_sort of data[0, n) on `threads` threads.
void sort_direct(std::int32_t* data, std::size_t n, unsigned threads);

// out = elements [first, first + m) of the ascending merge of sorted a and b.
// sort.low is first = 0, sort.high first = na + nb - m. Exposed for tests.
void merge_range(const std::int32_t* a, std::size_t na, const std::int32_t* b, std::size_t nb, std::size_t first,
                 std::int32_t* out, std::size_t m);

void register_bitonic_actors(Registry& reg);

}  // namespace redflow::apps
