// Embedding redflow: register an actor, describe a graph in C++, load it once,
// execute it many times with new inputs, and feed one graph's output into
// another (Algorithm 1 of Kühbacher et al.). Exits non-zero if a result is wrong.
#include <redflow/redflow.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  constexpr std::size_t n = 1 << 16;

  redflow::Registry reg = redflow::Registry::with_builtins();
  reg.add("scale", [](redflow::ActorContext& ctx) {  // a pure actor: reads inputs, writes its whole output
    auto in = ctx.input<const double>(0);
    auto out = ctx.output<double>();
    ctx.parallel_for(0, in.size(), [&](std::size_t i) { out[i] = 2 * in[i]; });
  });

  // Y = scale(X) split in two halves, each scaled again, then collected.
  redflow::Graph g("embed");
  auto x = g.input("X", n * sizeof(double));
  auto doubled = g.inner("doubled", n * sizeof(double));
  g.actor("double", "scale", {x}, doubled).work(n);
  auto lo = g.inner("lo", n / 2 * sizeof(double)), hi = g.inner("hi", n / 2 * sizeof(double));
  g.actor("split_lo", "rf.split", {doubled}, lo).args("offset=0");
  g.actor("split_hi", "rf.split", {doubled}, hi).args("offset=" + std::to_string(n / 2 * sizeof(double)));
  auto lo4 = g.inner("lo4", n / 2 * sizeof(double)), hi4 = g.inner("hi4", n / 2 * sizeof(double));
  g.actor("quad_lo", "scale", {lo}, lo4).work(n / 2);
  g.actor("quad_hi", "scale", {hi}, hi4).work(n / 2);
  auto y = g.output("Y", n * sizeof(double));
  g.actor("join", "rf.collect", {lo4, hi4}, y);

  redflow::Runtime rt({.tiles = 2, .cores_per_tile = 1, .scheduler = redflow::Scheduler::kSteal});
  auto loaded = rt.load(g, reg);  // validates and computes the HEFT schedule once
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
    return 1;
  }

  std::vector<double> xs(n);
  for (int round = 0; round < 3; ++round) {
    std::iota(xs.begin(), xs.end(), round * 10.0);
    auto out = loaded->execute({{"X", redflow::as_bytes_of(xs)}});
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
      return 1;
    }
    const auto* ys = reinterpret_cast<const double*>(out->at("Y").data());
    for (std::size_t i = 0; i < n; ++i)
      if (ys[i] != 4 * xs[i]) {
        std::fprintf(stderr, "round %d: Y[%zu] = %g, expected %g\n", round, i, ys[i], 4 * xs[i]);
        return 1;
      }
    std::printf("round %d: Y[0..2] = %g %g %g in %.3f ms (%llu transfers, %llu steals)\n", round, ys[0], ys[1], ys[2],
                loaded->last_stats().makespan_s * 1e3,
                static_cast<unsigned long long>(loaded->last_stats().transfers),
                static_cast<unsigned long long>(loaded->last_stats().steals));
  }
  return 0;
}
