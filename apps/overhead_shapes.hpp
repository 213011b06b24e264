// Graph shapes of empty actors that measure what the runtime itself costs
// per actor, and the same shapes as oneTBB flow graphs of empty
// continue_nodes (the baseline of `redflow bench overhead`):
//   chain      X -> a0 -> d0 -> a1 -> ... -> a(n-1) -> Y
//   fanout     X -> src -> S; S -> m_i -> o_i (n of them); all o_i -> sink -> Y
//              (fan-out then fan-in; the sink has n inputs, so Algorithm 2
//              puts it on the driver)
//   tree       a complete binary tree of n actors: actor i's output feeds
//              actors 2i+1 and 2i+2; leaves write inner nodes nobody reads
//   wavefront  an m x m grid (m = round(sqrt(n))): actor (i, j) reads the
//              outputs of (i-1, j) and (i, j-1)
// Data nodes have `bytes` bytes (0 by default); actors run the function "noop".
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"

namespace redflow::apps {

enum class Shape { kChain, kFanout, kTree, kWavefront };
inline constexpr Shape kAllShapes[] = {Shape::kChain, Shape::kFanout, Shape::kTree, Shape::kWavefront};
const char* to_string(Shape shape);
std::optional<Shape> parse_shape(std::string_view text);

// About n actors (exactly n for chain and tree, n + 2 for fanout, m*m for wavefront).
Graph overhead_graph(Shape shape, std::size_t n, std::size_t bytes = 0);

// `width` independent chains of `actors / width` "noop" actors each, all
// reading X and each ending in an output Y<c>: what dispatch to worker
// processes is measured with (every actor on a tile, none read back before
// the end, several chains on the wire at once).
Graph independent_chains(std::size_t actors, std::size_t width, std::size_t bytes);

// The same shape as a oneTBB flow graph; run() executes it once and waits.
// TBB's thread count is whatever tbb::global_control allows around run().
class TbbShape {
 public:
  TbbShape(Shape shape, std::size_t n);
  ~TbbShape();
  TbbShape(const TbbShape&) = delete;
  TbbShape& operator=(const TbbShape&) = delete;
  void run();
  std::size_t nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

void register_overhead_actors(Registry& reg);

}  // namespace redflow::apps
