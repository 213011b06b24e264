// `redflow tile --connect ADDR`: a worker process holding one remote tile
// (docs/remote.md). The loop itself is src/net/tile_worker.cpp.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "cluster_launch.hpp"
#include "net/tile_worker.hpp"

#include <chrono>

namespace redflow::cli {

namespace {
struct TileArgs {
  net::TileWorkerOptions worker;
  DriverConnection driver;
  std::vector<std::string> libs;
};
}  // namespace

Command add_tile_command(CLI::App& app) {
  auto a = std::make_shared<TileArgs>();
  auto* sub = app.add_subcommand("tile", "Alias of `redflow worker` that serves only as a tile (use `redflow worker`).");
  sub->footer("`redflow worker` serves every model (a tile, a stream node) with the same flags; this alias offers only the tile.\n"
              "Example: redflow worker --connect tcp://127.0.0.1:5555 --lib ./my_actors.so   (docs/remote.md)");
  a->driver.add_flags(sub);
  sub->add_option("--cores", a->worker.cores, "Threads of this tile (width of ctx.parallel_for)")->check(CLI::Range(1u, 256u))->capture_default_str();
  sub->add_option("--slots", a->worker.slots, "Memory slots of this tile")->check(CLI::Range(2u, 1u << 20))->capture_default_str();
  sub->add_option("--slot-bytes", a->worker.slot_bytes, "Bytes per slot")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  sub->add_option("--lib", a->libs, "Actor plugin .so to load (repeatable; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(readable_file());
  sub->add_option("--name", a->worker.name, "How the driver's logs and errors name this worker (default: HOST:PID)");
  return {sub, [a] {
            fmt::print(stderr, "redflow: `redflow tile` serves only as a tile; use `redflow worker` (same flags), which serves every model\n");
            if (Status s = a->driver.check(); !s.ok()) return usage_error(s);
            if (Status s = a->driver.resolve(); !s.ok()) return fail(s);
            a->worker.connect = a->driver.connect;
            a->worker.security = a->driver.security;
            a->worker.connect_timeout_s = a->driver.timeout_s;
            std::string origin;
            auto actors = worker_actors(a->libs, origin);
            if (!actors.ok()) return fail(actors.status());
            if (Status s = net::run_tile_worker(a->worker, **actors, origin); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
