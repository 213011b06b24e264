// Integer matrix multiplication (section 6 of Kühbacher et al.): C = A * B for
// square row-major int32 matrices of any side n, wrapping like uint32.
//
// The graph cuts A into p row panels (rf.split, zero-copy) and B into p column
// panels (mat.cols on the driver, which makes each one contiguous), computes
// the p x p blocks of C on the tiles (mm.block), joins each row of blocks
// (mat.hcat) and the rows (rf.collect, zero-copy) into C:
//
//   A -> split_i -> A_i  +
//                        +-> mm.block -> C_ij -> hcat_i -> Crow_i -> collect -> C
//   B -> cols_j  -> B_j  +
//
// Panels fit a slot of the target; p is at least large enough for every tile
// to have several blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/target.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::apps {

struct MatmulParams {
  std::size_t n = 0;      // matrix side (--n)
  std::size_t block = 0;  // at most this many rows (columns) per panel (--block); 0 = choose from the target
  Target target;
};

// Inputs "A" and "B", output "C", each n*n*4 bytes.
Result<Graph> matmul_graph(const MatmulParams& params);
// The number of panels per side the graph uses (for reports).
Result<std::size_t> matmul_parts(const MatmulParams& params);

// The block kernel: C (m x cols, leading dimension ldc) = A (m x k, lda) *
// B (k x cols, ldb), int32 wrapping. Cache-blocked, register-blocked, built
// for AVX-512, AVX2 and plain x86-64 (chosen at run time).
void matmul_kernel(const std::int32_t* A, std::size_t lda, const std::int32_t* B, std::size_t ldb, std::int32_t* C,
                   std::size_t ldc, std::size_t m, std::size_t cols, std::size_t k);

// Baseline: the same kernel directly on the whole matrices with `threads`
// oneTBB threads. Each run packs B into contiguous column panels (as the
// graph's driver does; measured ~10 % faster than reading B in place, for the
// TLB) into a buffer allocated once, then splits the rows of C over the threads.
class MatmulDirect {
 public:
  MatmulDirect(std::size_t n, unsigned threads);
  void run(const std::int32_t* A, const std::int32_t* B, std::int32_t* C);

 private:
  std::size_t n_;
  unsigned threads_;
  std::vector<std::int32_t> packed_;
};
// Reference for tests: the textbook triple loop.
void matmul_naive(const std::int32_t* A, const std::int32_t* B, std::int32_t* C, std::size_t n);
// OpenBLAS sgemm on the same sizes: a float ceiling, for reference only.
// False when OpenBLAS cannot be opened (it is loaded on first use, not linked).
bool sgemm_ceiling(const float* A, const float* B, float* C, std::size_t n, unsigned threads);

void register_matmul_actors(Registry& reg);

}  // namespace redflow::apps
