// Registration of all application actors.
#include "apps/apps.hpp"

#include <complex>
#include <cstring>
#include <random>

namespace redflow::apps {

void register_app_actors(Registry& reg) {
  register_rearrange_actors(reg);
  register_matmul_actors(reg);
  register_fft_actors(reg);
  register_bitonic_actors(reg);
  register_overhead_actors(reg);
  register_paper_actors(reg);
  register_workflow_actors(reg);
}

Registry app_registry() {
  Registry reg = Registry::with_builtins();
  register_app_actors(reg);
  return reg;
}

namespace {

std::vector<std::byte> random_i32_bytes(std::size_t count, std::mt19937_64& rng) {
  std::vector<std::byte> bytes(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = static_cast<std::uint32_t>(rng());
    std::memcpy(bytes.data() + 4 * i, &v, 4);
  }
  return bytes;
}

}  // namespace

Result<AppProblem> make_problem(std::string_view app, std::size_t n, std::size_t block, const Target& target,
                                std::uint64_t seed, Profile profile) {
  std::mt19937_64 rng(seed);
  AppProblem p;
  p.app = std::string(app);
  // The paper profile differs only in its graph; inputs and outputs are the same.
  auto graph = [&](auto fast) -> Result<Graph> {
    if (profile == Profile::kFast) return fast();
    if (block != 0)
      return Status::InvalidArgument("--block " + std::to_string(block) +
                                     " does not apply to --profile paper: its blocks are the paper's (docs/apps.md)");
    return paper_graph(app, n);
  };
  if (app == "matmul") {
    auto g = graph([&] { return matmul_graph({.n = n, .block = block, .target = target}); });
    if (!g.ok()) return g.status();
    p.graph = std::move(*g);
    p.inputs["A"] = random_i32_bytes(n * n, rng);
    p.inputs["B"] = random_i32_bytes(n * n, rng);
    p.output = "C";
  } else if (app == "fft") {
    auto g = graph([&] { return fft_graph({.n = n, .block = block, .target = target}); });
    if (!g.ok()) return g.status();
    p.graph = std::move(*g);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<std::complex<double>> x(n);
    for (auto& v : x) v = {u(rng), u(rng)};
    auto& bytes = p.inputs["X"];
    bytes.resize(n * sizeof(std::complex<double>));
    std::memcpy(bytes.data(), x.data(), bytes.size());
    p.output = "Y";
  } else if (app == "bitonic") {
    auto g = graph([&] { return bitonic_graph({.n = n, .block = block, .target = target}); });
    if (!g.ok()) return g.status();
    p.graph = std::move(*g);
    p.inputs["X"] = random_i32_bytes(n, rng);
    p.output = "Y";
  } else {
    return Status::InvalidArgument("unknown app '" + std::string(app) + "' (expected matmul, fft or bitonic)");
  }
  return p;
}

}  // namespace redflow::apps
