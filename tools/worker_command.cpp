// `redflow worker --connect ADDR`: the one worker process. It serves
// whichever role each driver's WELCOME names: a tile (`redflow run
// --listen`), a stream node (`redflow stream --listen`), a SPITS Task
// Manager (`redflow spits --listen`). The loop is
// src/net/worker_session.cpp; the roles are composed in src/worker/.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "cluster_launch.hpp"
#include "worker/run_worker.hpp"

namespace redflow::cli {

namespace {
struct WorkerArgs {
  WorkerOptions worker;
  DriverConnection driver;
  std::vector<std::string> libs;
};
}  // namespace

Result<const Registry*> worker_actors(const std::vector<std::string>& libs, std::string& origin) {
  static Registry* const kept = new Registry(cli_registry());
  REDFLOW_RETURN_IF_ERROR(load_libs(*kept, libs));
  origin = "built-in";
  for (const auto& lib : libs) origin += "," + lib;
  return kept;
}

Command add_worker_command(CLI::App& app) {
  auto a = std::make_shared<WorkerArgs>();
  auto* sub = app.add_subcommand("worker",
                                 "Serve drivers as whatever they need: a tile of a graph run, a node of a stream program, a SPITS Task Manager.");
  sub->footer("A driver started with --listen prints its endpoint (or publishes it in --address-file); a worker connects,\n"
              "says which roles it can serve and is given one: a remote tile for `redflow run --listen`, a node for\n"
              "`redflow stream --listen`, a Task Manager for `redflow spits JOB.so --listen`. With --persist it serves driver\n"
              "after driver (the same process for a graph run, then a SPITS job, then a stream program); without, it ends\n"
              "after the first driver's BYE.\n"
              "Its tiles have the built-in actors and those of its --lib plugins (give it the driver's); its nodes have the\n"
              "built-in operators; as a Task Manager it runs --cores Workers of the job the driver names, loading the job's\n"
              ".so from the driver's path (it must exist here too: a shared file system). --slots/--slot-bytes must be at\n"
              "least a graph driver's, or that driver refuses it.\n"
              "Exit status: 0 after the (last) driver's BYE; 1 when refused, when no driver welcomed it within\n"
              "--connect-timeout, when a driver went silent, or when the stream program it served a node of failed\n"
              "(a node lost: the driver says why); 2 on a wrong command line.\n"
              "Examples:\n"
              "  redflow worker --connect tcp://127.0.0.1:5555 & redflow worker --connect tcp://127.0.0.1:5555 &\n"
              "  redflow run g.dot --listen tcp://127.0.0.1:5555 --min-workers 2 -i X=x.bin   (the two serve as its tiles)\n"
              "  redflow spits /shared/job.so tasks=1000 --listen tcp://127.0.0.1:5555 --min-workers 2   (or as its Task Managers)\n"
              "  redflow worker --connect tcp://127.0.0.1:5555 --persist --cores 4 --lib ./my_actors.so --name node7\n"
              "  redflow worker --connect tcp://driver:7000 --key node7.key --server-key driver.pub   (docs/security.md)\n"
              "  redflow worker --address-file /shared/job.addr --persist");
  a->driver.add_flags(sub);
  sub->add_option("--cores", a->worker.cores, "Cores it offers: a tile's ctx.parallel_for width, a stream node's pool threads, a Task Manager's Workers")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--slots", a->worker.slots, "A tile's memory slots")->check(CLI::Range(2u, 1u << 20))->capture_default_str();
  sub->add_option("--slot-bytes", a->worker.slot_bytes, "Bytes per slot")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  sub->add_option("--lib", a->libs, "Actor plugin .so its tiles load (repeatable; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(readable_file());
  sub->add_option("--name", a->worker.name, "How drivers' logs, errors and reports name this worker (default: HOST:PID)");
  sub->add_option("--idle-timeout", a->worker.idle_timeout_s,
                  "Waiting at a `redflow server` for a job: end (exit 0) after this many seconds with none, e.g. to give a batch "
                  "allocation back (default 0: wait as long as the server is there)")
      ->check(CLI::Range(0.0, 1e9))
      ->type_name("SECONDS");
  sub->add_flag("--persist", a->worker.persist,
                "After a driver's BYE, wait for the next driver (at most --connect-timeout each; at a `redflow server`, as long as "
                "the server is there)");
  return {sub, [a] {
            if (Status s = a->driver.check(); !s.ok()) return usage_error(s);
            a->worker.connect = a->driver.connect;
            a->worker.address_file = a->driver.address_file;
            a->worker.key_file = a->driver.security.key_file;
            a->worker.server_key_file = a->driver.security.server_public_key_file;
            a->worker.connect_timeout_s = a->driver.timeout_s;
            // Said on stderr whatever the log level: the user who started it sees it found its driver.
            // The driver's address by value: capturing `a` would make `a` own itself (a leak).
            a->worker.on_welcome = [where = a->driver.connect.empty() ? a->driver.address_file : a->driver.connect](const std::string& role, unsigned id) {
              fmt::print(stderr, "redflow: worker: serving the driver at {} as {} {}\n", where, role, id);
            };
            std::string origin;
            auto actors = worker_actors(a->libs, origin);
            if (!actors.ok()) return fail(actors.status());
            static const stream::OperatorRegistry* const operators = new stream::OperatorRegistry(stream::OperatorRegistry::with_builtins());
            if (Status s = worker::run(a->worker, **actors, *operators, origin); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
