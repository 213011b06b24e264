// The REM stencil benchmark (the REM paper's section on coalescing): a vectorised
// 2D Jacobi (5-point) over many time steps, the grid cut into tiles, each
// tile-step a task. A tile-step task produces five labels: the tile, and its
// four edges, which are all its neighbours need (a task may produce several
// labels). Also the plain std::thread version of the same stencil and the
// triad bandwidth it is compared against.
// A benchmark, not API: bench/rem_stencil.cpp and the tests use it, and it
// is not installed.
#pragma once

#include <cstddef>
#include <vector>

#include "redflow/rem.hpp"

namespace redflow::rem::stencil {

struct Params {
  std::size_t n = 1024;        // grid is n x n floats; its outer ring is fixed (Dirichlet boundary)
  std::size_t tiles = 4;       // tiles per side: tiles x tiles tasks per step
  std::size_t steps = 10;
};
// Validates (n divisible by tiles, at least one step, ...), naming the bad parameter.
Status check(const Params& p);

// The REM program. Result labels "u{steps}_{i}_{j}" hold the final tiles.
Result<Program> program(const Params& p);
// The initial grid (what the program's init tasks write), row-major n x n.
std::vector<float> initial_grid(const Params& p);
// Reassembles the final grid from the result labels of a finished run.
Result<std::vector<float>> gather(const Params& p, const std::map<std::string, Value>& results);

// One Jacobi step on rows x cols cells: out = 0.2 * (c + n + s + w + e). `in`
// points at the first cell; the rows above/below and columns left/right of
// the block must be readable. Vectorised (AVX2 where the CPU has it).
void jacobi5(const float* in, std::size_t in_stride, float* out, std::size_t out_stride, std::size_t rows, std::size_t cols);

// The same stencil with `threads` std::threads over row bands and a barrier
// per step; returns the final grid.
std::vector<float> run_threads(const Params& p, unsigned threads);

// Flops of a run: 5 per updated cell per step.
double flops(const Params& p);

// STREAM triad a = b + s * c on `threads` threads over `elems` doubles;
// returns the best bandwidth in bytes/s over `repeats` (24 bytes per element).
double triad_bandwidth(std::size_t elems, unsigned threads, int repeats);

}  // namespace redflow::rem::stencil
