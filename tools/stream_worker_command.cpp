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
  auto* sub = app.add_subcommand("stream-worker", "Serve as one node of a stream program run over worker processes (`redflow stream --listen`).");
  sub->footer("The driver places operators on its nodes and sends each node its part; this process runs its part on a pool of\n"
              "--threads (or one thread per operator, as the driver says) and its main thread does all network traffic.\n"
              "It has the built-in operators; the driver refuses it if the program uses one it lacks.\n"
              "Exit status: 0 after the driver's BYE once its part finished; 1 when refused, when no driver welcomed it\n"
              "within --connect-timeout, when its part failed, or when the run ended early (another node failed or was lost).\n"
              "Examples:\n"
              "  redflow stream-worker --connect tcp://127.0.0.1:PORT   (the endpoint `redflow stream --listen` printed)\n"
              "  redflow stream examples/streams/sum.dot --listen 'tcp://127.0.0.1:*' --min-tiles 2 &   (then two workers)\n"
              "  redflow stream-worker --address-file /shared/job.addr --threads 4 --name node7\n"
              "  redflow stream-worker --connect tcp://driver:7000 --key node7.key --server-key driver.pub   (docs/security.md)");
  a->driver.add_flags(sub);
  sub->add_option("--threads", a->worker.threads, "Pool threads for this node's operators (default: one per hardware thread)")->check(CLI::Range(1u, 1024u));
  sub->add_option("--name", a->worker.name, "How the driver's report and errors name this worker (default: HOST:PID)");
  return {sub, [a] {
            if (Status s = a->driver.resolve(); !s.ok()) return fail(s);
            a->worker.connect = a->driver.connect;
            a->worker.security = a->driver.security;
            a->worker.connect_timeout_s = a->driver.timeout_s;
            if (Status s = stream::run_stream_worker(a->worker, stream::OperatorRegistry::with_builtins()); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
