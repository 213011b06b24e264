// `redflow schedule`'s calibration: measures what one actor execution costs on
// this machine beyond its work (dispatch, slot bookkeeping, transfers), so
// HEFT's estimates come out in the same range as measured makespans. The
// measurement (a chain of tiny actors, best of several executions) takes a
// fraction of a second and is cached per machine in
// $XDG_CACHE_HOME/redflow/ (default ~/.cache/redflow/).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

// Seconds per actor of a chain of `n` 4-byte i32.add actors on one tile: their work is negligible, so this is overhead.
Result<double> measure() {
  constexpr unsigned n = 64;
  Graph g("calibrate");
  DataId prev = g.input("x", 4);
  for (unsigned i = 0; i < n; ++i) {
    // Formatted, not `"d" + std::to_string(i)`: GCC 12 at -O3 reports a false
    // -Wstringop-overflow and -Warray-bounds in the inlined operator+.
    DataId next = i + 1 == n ? g.output("y", 4) : g.inner(fmt::format("d{}", i), 4);
    g.actor(fmt::format("a{}", i), "i32.add", {prev, prev}, next);
    prev = next;
  }
  Runtime rt({.tiles = 1});
  auto loaded = rt.load(g, Registry::with_builtins());
  if (!loaded.ok()) return loaded.status();
  std::vector<std::int32_t> x = {1};
  double best = 1e9;
  for (int i = 0; i < 30; ++i) {
    auto out = loaded->execute({{"x", as_bytes_of(x)}});
    if (!out.ok()) return out.status();
    best = std::min(best, loaded->last_stats().makespan_s);
  }
  return best / n;
}

}  // namespace

Result<CalibratedOverhead> actor_overhead(bool remeasure) {
  const std::filesystem::path file = host_cache_file("actor-overhead");
  if (!remeasure) {
    std::ifstream in(file);
    double cached = 0;
    if (in >> cached && cached > 0) return CalibratedOverhead{cached, file.string(), true};
  }
  auto measured = measure();
  if (!measured.ok()) return measured.status();
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const std::string text = fmt::format("{:.9g}\n", *measured);
  // The cache is a convenience: a directory we cannot write only costs a new measurement next time.
  if (!ec) (void)write_file(file.string(), text.data(), text.size());
  return CalibratedOverhead{*measured, file.string(), false};
}

}  // namespace redflow::cli
