// A program outside the redflow tree that uses an installed redflow: it
// registers an actor, describes a graph in C++, runs it on two tiles, checks
// the result and, if asked, writes the execution as a Perfetto trace and a
// Gantt chart. Exits non-zero if anything is wrong.
//   consumer [TRACE.json GANTT.svg]
#include <redflow/redflow.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  constexpr std::size_t n = 4096;
  redflow::Registry reg = redflow::Registry::with_builtins();
  reg.add("square", [](redflow::ActorContext& ctx) {
    auto in = ctx.input<const std::int32_t>(0);
    auto out = ctx.output<std::int32_t>();
    ctx.parallel_for(0, in.size(), [&](std::size_t i) { out[i] = in[i] * in[i]; });
  });

  // Y = sort(square(X)) + X
  redflow::Graph g("consumer");
  auto x = g.input("X", n * 4);
  auto sq = g.inner("sq", n * 4), sorted = g.inner("sorted", n * 4);
  auto y = g.output("Y", n * 4);
  g.actor("square", "square", {x}, sq).work(n);
  g.actor("sort", "i32.sort", {sq}, sorted);
  g.actor("add", "i32.add", {sorted, x}, y);

  redflow::Runtime rt({.tiles = 2, .slots = 4, .slot_bytes = 1 << 16, .trace = true});
  auto loaded = rt.load(g, reg);
  if (!loaded.ok()) {
    std::fprintf(stderr, "consumer: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  std::vector<std::int32_t> xs(n);
  std::iota(xs.begin(), xs.end(), -static_cast<std::int32_t>(n / 2));
  auto out = loaded->execute({{"X", redflow::as_bytes_of(xs)}});
  if (!out.ok()) {
    std::fprintf(stderr, "consumer: %s\n", out.status().ToString().c_str());
    return 1;
  }
  std::vector<std::int32_t> squares(n);
  for (std::size_t i = 0; i < n; ++i) squares[i] = xs[i] * xs[i];
  std::sort(squares.begin(), squares.end());
  const auto* ys = reinterpret_cast<const std::int32_t*>(out->at("Y").data());
  for (std::size_t i = 0; i < n; ++i)
    if (ys[i] != squares[i] + xs[i]) {
      std::fprintf(stderr, "consumer: Y[%zu] = %d, expected %d\n", i, ys[i], squares[i] + xs[i]);
      return 1;
    }
  if (argc == 3) {
    std::ofstream(argv[1]) << redflow::to_chrome_trace(loaded->last_trace(), &loaded->graph());
    std::ofstream(argv[2]) << redflow::to_gantt_svg(loaded->last_trace(), &loaded->graph());
  }
  std::printf("consumer: ok, %llu actors in %.3f ms\n", static_cast<unsigned long long>(loaded->last_stats().actors_executed),
              loaded->last_stats().makespan_s * 1e3);
  return 0;
}
