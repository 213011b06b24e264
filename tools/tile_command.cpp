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
  auto* sub = app.add_subcommand("tile", "Serve one remote tile to a driver (`redflow run --listen`) until it says BYE.");
  sub->footer("The driver prints the endpoint it listens on; start as many workers as its --min-tiles.\n"
              "A worker has the built-in actors and those of its --lib plugins (give it the driver's).\n"
              "Its --slots and --slot-bytes must be at least the driver's, or it is refused.\n"
              "Exit status: 0 after the driver's BYE; 1 when refused, when no driver welcomed it within\n"
              "--connect-timeout, or when the driver went silent (it does not reconnect by itself).\n"
              "Examples:\n"
              "  redflow run g.dot --listen tcp://127.0.0.1:5555 --min-tiles 2 -i X=x.bin &\n"
              "  redflow tile --connect tcp://127.0.0.1:5555 & redflow tile --connect tcp://127.0.0.1:5555\n"
              "  redflow tile --connect tcp://127.0.0.1:5555 --cores 4 --lib ./my_actors.so --name node7\n"
              "  redflow tile --connect tcp://driver:7000 --key node7.key --server-key driver.pub   (docs/security.md)\n"
              "  redflow tile --address-file /shared/job.addr");
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
            if (Status s = a->driver.resolve(); !s.ok()) return fail(s);
            a->worker.connect = a->driver.connect;
            a->worker.security = a->driver.security;
            a->worker.connect_timeout_s = a->driver.timeout_s;
            // Never destroyed (a static holds it, so leak checkers see it
            // reachable): a worker that leaves with an actor still running
            // (its driver went silent) leaves that actor running on these
            // functions until the process has ended.
            static Registry* const kept = new Registry(cli_registry());
            Registry& reg = *kept;
            if (Status s = load_libs(reg, a->libs); !s.ok()) return fail(s);
            std::string origin = "built-in";
            for (const auto& lib : a->libs) origin += "," + lib;
            if (Status s = net::run_tile_worker(a->worker, reg, origin); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
