// The overhead shapes as redflow graphs and as oneTBB flow graphs. See overhead_shapes.hpp.
#include "apps/overhead_shapes.hpp"

#include <tbb/flow_graph.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace redflow::apps {
namespace {

// prefix + i (+ "_" + j): built by appending (GCC 12 at -O3 warns falsely,
// -Wrestrict, about `"w" + std::string` here).
std::string node_name(const char* prefix, std::size_t i, std::size_t j = SIZE_MAX) {
  std::string s(prefix);
  s += std::to_string(i);
  if (j != SIZE_MAX) {
    s += '_';
    s += std::to_string(j);
  }
  return s;
}

std::size_t grid_side(std::size_t n) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(n)))));
}

}  // namespace

const char* to_string(Shape shape) {
  switch (shape) {
    case Shape::kChain: return "chain";
    case Shape::kFanout: return "fanout";
    case Shape::kTree: return "tree";
    case Shape::kWavefront: return "wavefront";
  }
  return "?";
}

std::optional<Shape> parse_shape(std::string_view text) {
  for (Shape s : kAllShapes)
    if (text == to_string(s)) return s;
  return std::nullopt;
}

Graph overhead_graph(Shape shape, std::size_t n, std::size_t bytes) {
  Graph g(to_string(shape));
  const DataId x = g.input("X", bytes);
  n = std::max<std::size_t>(n, 1);
  switch (shape) {
    case Shape::kChain: {
      DataId prev = x;
      for (std::size_t i = 0; i < n; ++i) {
        const DataId next = i + 1 == n ? g.output("Y", bytes) : g.inner(node_name("d", i), bytes);
        g.actor(node_name("a", i), "noop", {prev}, next);
        prev = next;
      }
      break;
    }
    case Shape::kFanout: {
      const DataId s = g.inner("S", bytes);
      g.actor("src", "noop", {x}, s);
      std::vector<DataId> mids(n);
      for (std::size_t i = 0; i < n; ++i) {
        mids[i] = g.inner(node_name("o", i), bytes);
        g.actor(node_name("m", i), "noop", {s}, mids[i]);
      }
      g.actor("sink", "noop", mids, g.output("Y", bytes));
      break;
    }
    case Shape::kTree: {
      // Actor i reads the output of its parent (i - 1) / 2; the root reads X.
      std::vector<DataId> out(n);
      for (std::size_t i = 0; i < n; ++i) {
        // The root's output is the graph's result (an output node may have consumers).
        out[i] = i == 0 ? g.output("Y", bytes) : g.inner(node_name("t", i), bytes);
        g.actor(node_name("a", i), "noop", {i == 0 ? x : out[(i - 1) / 2]}, out[i]);
      }
      break;
    }
    case Shape::kWavefront: {
      const std::size_t m = grid_side(n);
      std::vector<DataId> out(m * m);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) {
          const bool last = i + 1 == m && j + 1 == m;
          out[i * m + j] = last ? g.output("Y", bytes) : g.inner(node_name("w", i, j), bytes);
          std::vector<DataId> in;
          if (i > 0) in.push_back(out[(i - 1) * m + j]);
          if (j > 0) in.push_back(out[i * m + j - 1]);
          if (in.empty()) in.push_back(x);
          g.actor(node_name("a", i, j), "noop", in, out[i * m + j]);
        }
      break;
    }
  }
  return g;
}

struct TbbShape::Impl {
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
  tbb::flow::graph graph;
  std::vector<std::unique_ptr<Node>> nodes;
};

TbbShape::TbbShape(Shape shape, std::size_t n) : impl_(std::make_unique<Impl>()) {
  using Node = Impl::Node;
  n = std::max<std::size_t>(n, 1);
  const std::size_t count = shape == Shape::kFanout ? n + 2 : shape == Shape::kWavefront ? grid_side(n) * grid_side(n) : n;
  impl_->nodes.reserve(count);
  // Empty bodies, like redflow's noop actors: both sides measure only scheduling.
  for (std::size_t i = 0; i < count; ++i)
    impl_->nodes.push_back(std::make_unique<Node>(impl_->graph, [](const tbb::flow::continue_msg&) {}));
  auto& v = impl_->nodes;
  switch (shape) {
    case Shape::kChain:
      for (std::size_t i = 0; i + 1 < count; ++i) tbb::flow::make_edge(*v[i], *v[i + 1]);
      break;
    case Shape::kFanout:
      for (std::size_t i = 1; i <= n; ++i) {
        tbb::flow::make_edge(*v[0], *v[i]);
        tbb::flow::make_edge(*v[i], *v[n + 1]);
      }
      break;
    case Shape::kTree:
      for (std::size_t i = 1; i < count; ++i) tbb::flow::make_edge(*v[(i - 1) / 2], *v[i]);
      break;
    case Shape::kWavefront: {
      const std::size_t m = grid_side(n);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) {
          if (i + 1 < m) tbb::flow::make_edge(*v[i * m + j], *v[(i + 1) * m + j]);
          if (j + 1 < m) tbb::flow::make_edge(*v[i * m + j], *v[i * m + j + 1]);
        }
      break;
    }
  }
}

TbbShape::~TbbShape() = default;

void TbbShape::run() {
  impl_->nodes[0]->try_put(tbb::flow::continue_msg());
  impl_->graph.wait_for_all();
}

std::size_t TbbShape::nodes() const { return impl_->nodes.size(); }

Graph independent_chains(std::size_t actors, std::size_t width, std::size_t bytes) {
  Graph g("chains");
  const DataId x = g.input("X", bytes);
  const std::size_t length = actors / width;
  for (std::size_t c = 0; c < width; ++c) {
    DataId prev = x;
    for (std::size_t i = 0; i < length; ++i) {
      const DataId next = i + 1 == length ? g.output(node_name("Y", c), bytes) : g.inner(node_name("d", c, i), bytes);
      g.actor(node_name("a", c, i), "noop", {prev}, next);
      prev = next;
    }
  }
  return g;
}

void register_overhead_actors(Registry& reg) {
  reg.add("noop", ActorSpec{[](ActorContext&) {}, nullptr, false, "does nothing (overhead benchmarks)"});
}

}  // namespace redflow::apps
