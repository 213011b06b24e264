// `redflow stream-worker --connect ADDR`: a node of a stream program run over
// worker processes (`redflow stream --listen`; docs/streams.md). The loop is
// src/stream/stream_worker.cpp.
#include <fmt/format.h>

#include <chrono>

#include "cli_common.hpp"
#include "cluster_launch.hpp"
#include "stream/stream_worker.hpp"

namespace redflow::cli {

namespace {
struct StreamWorkerArgs {
  stream::StreamWorkerOptions worker;
  DriverConnection driver;
};
}  // namespace

Command add_stream_worker_command(CLI::App& app) {
  auto a = std::make_shared<StreamWorkerArgs>();
  auto* sub = app.add_subcommand("stream-worker", "Alias of `redflow worker` that serves only as a stream node (use `redflow worker`).");
  sub->footer("`redflow worker` serves every model (a tile, a stream node); this alias offers only the node. Its --threads\n"
              "is the worker's --cores. Example: redflow worker --connect tcp://127.0.0.1:5555 --cores 4   (docs/streams.md)");
  a->driver.add_flags(sub);
  sub->add_option("--threads", a->worker.threads, "Pool threads for this node's operators (default: one per hardware thread)")->check(CLI::Range(1u, 1024u));
  sub->add_option("--name", a->worker.name, "How the driver's report and errors name this worker (default: HOST:PID)");
  return {sub, [a] {
            fmt::print(stderr, "redflow: `redflow stream-worker` serves only as a stream node; use `redflow worker` (--threads is --cores), which serves every model\n");
            if (Status s = a->driver.check(); !s.ok()) return usage_error(s);
            if (Status s = a->driver.resolve(); !s.ok()) return fail(s);
            a->worker.connect = a->driver.connect;
            a->worker.security = a->driver.security;
            a->worker.connect_timeout_s = a->driver.timeout_s;
            if (Status s = stream::run_stream_worker(a->worker, stream::OperatorRegistry::with_builtins()); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
