// A program that embeds redflow and loads actor plugins at run time: linked
// with redflow::redflow like any other, so the plugin's calls into redflow
// (Registry::add) resolve against the libredflow.so this program loaded.
//   plugin_host PLUGIN.so      runs Y = cube(X) with the plugin's consumer.cube
#include <redflow/redflow.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: plugin_host PLUGIN.so\n");
    return 2;
  }
  redflow::Registry reg = redflow::Registry::with_builtins();
  if (redflow::Status s = reg.load_plugin(argv[1]); !s.ok()) {
    std::fprintf(stderr, "plugin_host: %s\n", s.ToString().c_str());
    return 1;
  }
  constexpr std::size_t n = 1024;
  redflow::Graph g("plugin_host");
  auto x = g.input("X", n * 4);
  auto y = g.output("Y", n * 4);
  g.actor("cube", "consumer.cube", {x}, y);
  redflow::Runtime rt({.tiles = 2});
  auto loaded = rt.load(g, reg);
  if (!loaded.ok()) {
    std::fprintf(stderr, "plugin_host: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  std::vector<std::int32_t> xs(n);
  std::iota(xs.begin(), xs.end(), -static_cast<std::int32_t>(n / 2));
  auto out = loaded->execute({{"X", redflow::as_bytes_of(xs)}});
  if (!out.ok()) {
    std::fprintf(stderr, "plugin_host: %s\n", out.status().ToString().c_str());
    return 1;
  }
  const auto* ys = reinterpret_cast<const std::int32_t*>(out->at("Y").data());
  for (std::size_t i = 0; i < n; ++i)
    if (ys[i] != xs[i] * xs[i] * xs[i]) {
      std::fprintf(stderr, "plugin_host: Y[%zu] = %d, expected %d\n", i, ys[i], xs[i] * xs[i] * xs[i]);
      return 1;
    }
  std::printf("plugin_host: ok, consumer.cube from %s\n", argv[1]);
  return 0;
}
