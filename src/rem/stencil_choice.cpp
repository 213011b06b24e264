// The stencil's depth chosen from what the store costs here against what a
// tile-step costs to compute (docs/rem.md, "Deep tasks").
#include <algorithm>
#include <chrono>

#include "rem/stencil.hpp"

namespace redflow::rem::stencil {

namespace {

// One tile-step of the kernel on an h x w tile, best of three, in microseconds.
double time_tile_step(std::size_t h, std::size_t w) {
  std::vector<float> in((h + 2) * (w + 2), 0.5f), out(h * w);
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const auto t = std::chrono::steady_clock::now();
    jacobi5(&in[w + 3], w + 2, out.data(), w, h, w);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
    if (r == 0 || us < best) best = us;
  }
  return std::max(best, 0.01);
}

}  // namespace

Result<DepthChoice> choose_depth(const Params& p, Store& store) {
  REDFLOW_RETURN_IF_ERROR(check(p));
  Params fine = p;
  fine.depth = 1;
  auto fine_program = program(fine);
  if (!fine_program.ok()) return fine_program.status();
  auto costs = choose_coalescing(*fine_program, store);
  if (!costs.ok()) return costs.status();
  DepthChoice c;
  const std::size_t side = p.n / p.tiles;
  c.tile_step_us = time_tile_step(side, side);
  c.task_store_us = costs->task_round_trips * costs->round_trip_us + costs->task_bytes * costs->us_per_mb / 1e6;
  // A step of a depth-d task costs the store's share S / d and the compute
  // C (h + d)(w + d) / (h w): the task recomputes a ring of its neighbours'
  // cells that shrinks from d to 0 over its d steps. The power of two that
  // costs least, at most a tile's side and the steps.
  const auto modelled = [&](std::size_t d) {
    const double grow = static_cast<double>(side + d) / static_cast<double>(side);
    return c.task_store_us / static_cast<double>(d) + c.tile_step_us * grow * grow;
  };
  const std::size_t most = std::min(side, p.steps);
  c.depth = 1;
  for (std::size_t d = 2; d <= most; d *= 2)
    if (modelled(d) < modelled(c.depth)) c.depth = d;
  Params deep = p;
  deep.depth = c.depth;
  auto deep_program = program(deep);
  if (!deep_program.ok()) return deep_program.status();
  auto coalescing = choose_coalescing(*deep_program, store);
  if (!coalescing.ok()) return coalescing.status();
  c.coalescing = *coalescing;
  return c;
}

}  // namespace redflow::rem::stencil
