// The REM stencil benchmark (the REM paper's section on coalescing): a vectorised
// 2D Jacobi (5-point) over many time steps, the grid cut into tiles, each
// tile-step a task. A tile-step task produces five labels: the tile, and its
// four edges, which are all its neighbours need (a task may produce several
// labels). With a depth d > 1 a task advances its tile by d steps from
// strips d cells deep around it (its neighbours' sides and corners), so the
// store holds every d-th step's tiles only. Also the plain std::thread
// version of the same stencil and the triad bandwidth it is compared against.
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
  // Steps per task: a task reads strips this deep from its neighbours and
  // computes that many steps (recomputing a shrinking ring of its
  // neighbours' cells), so the store holds every depth-th step's tiles.
  // At most a tile's side; above --steps it is --steps.
  std::size_t depth = 1;
};
// Validates (n divisible by tiles, at least one step, ...), naming the bad parameter.
Status check(const Params& p);

// The REM program. Result labels "u{steps}_{i}_{j}" hold the final tiles;
// the same bits for every depth.
Result<Program> program(const Params& p);
// The initial grid (what the program's init tasks write), row-major n x n.
std::vector<float> initial_grid(const Params& p);
// Reassembles the final grid from the result labels of a finished run.
Result<std::vector<float>> gather(const Params& p, const std::map<std::string, Value>& results);

// The depth chosen for the stencil on `store` (docs/rem.md, "Deep tasks"):
// the store's round trip and cost per byte (measured as choose_coalescing
// does) give S, what a depth-1 task costs of the store; C, one tile-step of
// the kernel, is timed here. A step of a depth-d task is modelled as
// S / d + C (h + d)(w + d) / (h w) (the store's share spread over d steps,
// and the ring of neighbours' cells the task recomputes), and the power of
// two that costs least, at most a tile's side and the steps, is taken.
// `coalescing` is then chosen for the program of that depth.
struct DepthChoice {
  std::size_t depth = 1;
  double tile_step_us = 0;   // one tile-step of the kernel, measured here
  double task_store_us = 0;  // a depth-1 task's round trips and bytes at the store's measured costs
  CoalesceChoice coalescing;
};
Result<DepthChoice> choose_depth(const Params& p, Store& store);

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
