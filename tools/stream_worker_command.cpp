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
  std::string address_file;
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
              "  redflow stream examples/streams/sum.dot --listen 'tcp://127.0.0.1:*' --min-tiles 2 &\n"
              "  redflow stream-worker --connect tcp://127.0.0.1:PORT & redflow stream-worker --connect tcp://127.0.0.1:PORT\n"
              "  redflow stream-worker --address-file /shared/job.addr --threads 4 --name node7\n"
              "  redflow stream-worker --connect tcp://driver:7000 --key node7.key --server-key driver.pub   (docs/security.md)");
  auto* connect = sub->add_option("--connect", a->worker.connect, "The driver's endpoint (tcp://HOST:PORT)")->type_name("ADDR");
  auto* address = sub->add_option("--address-file", a->address_file, "Read the driver's endpoint (and public key) from the file it published")->type_name("FILE");
  connect->excludes(address);
  sub->add_option("--threads", a->worker.threads, "Pool threads for this node's operators (default: one per hardware thread)")->check(CLI::Range(1u, 1024u));
  sub->add_option("--name", a->worker.name, "How the driver's report and errors name this worker (default: HOST:PID)");
  sub->add_option(net::kKeyFlag, a->worker.security.key_file, "This worker's secret key (redflow keygen); the driver must list its .pub")->type_name("FILE.key");
  sub->add_option(net::kServerKeyFlag, a->worker.security.server_public_key_file, "The driver's public key (default with --address-file: the one it published)")
      ->type_name("FILE.pub");
  sub->add_option("--connect-timeout", a->worker.connect_timeout_s, "Seconds to wait for the driver's WELCOME")
      ->check(CLI::Range(0.01, 86400.0))
      ->capture_default_str();
  return {sub, [a] {
            if (a->worker.connect.empty() == a->address_file.empty())
              return fail(Status::InvalidArgument("give the driver's endpoint: --connect ADDR or --address-file FILE"));
            if (!a->address_file.empty())
              if (Status s = read_driver_address(a->address_file, a->worker.connect_timeout_s, a->worker.connect, a->worker.security); !s.ok())
                return fail(s);
            if (Status s = stream::run_stream_worker(a->worker, stream::OperatorRegistry::with_builtins()); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
