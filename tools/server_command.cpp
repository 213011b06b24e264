// `redflow server`: a long-lived process that runs submitted jobs on
// persistent workers, several at once (first come, first served, with
// backfilling), and keeps a journal to resume from (docs/server.md). The
// loop is src/server/.
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <filesystem>

#include "cli_common.hpp"
#include "cluster_flags.hpp"
#include "dashboard_flag.hpp"
#include "server/server.hpp"
#include "server_client.hpp"

namespace redflow::cli {

namespace {

std::atomic<bool> stop_server{false};
extern "C" void on_stop_signal(int) { stop_server.store(true); }

}  // namespace

Command add_server_command(CLI::App& app) {
  auto o = std::make_shared<server::ServerOptions>();
  auto dashboard = std::make_shared<DashboardArgs>();
  o->server_file = default_server_file();
  auto* cmd = app.add_subcommand("server", "Run jobs submitted to it (`redflow submit`) on workers that stay between jobs; survive its own crash with --journal.");
  cmd->footer("Workers are `redflow worker --connect ENDPOINT --persist --connect-timeout S` processes. They wait at the server;\n"
              "each job's driver is the one-shot command (`redflow run`, `spits` or `stream`) on a port of its own, and the server\n"
              "sends it the idle workers it asked for (`submit --workers N`, default --min-workers). Jobs start first come, first\n"
              "served; a younger job that fits on the idle workers starts while an older, bigger one waits (backfilling), so\n"
              "several run at once on disjoint workers. A `rem` job runs its own processes over its store. A worker waits for\n"
              "a job at most its --connect-timeout. With --journal, a server killed and started again on the same DIR keeps\n"
              "its queued and finished jobs and runs the ones that were running again (a SPITS job resumes from its commit\n"
              "log in DIR). docs/server.md.\n"
              "Examples:\n"
              "  redflow server --min-workers 2 --journal ~/redflow-journal &\n"
              "  redflow worker --connect tcp://127.0.0.1:7000 --persist --connect-timeout 3600 &   (twice; the port is printed)\n"
              "  redflow submit run g.dot -i X=x.bin -o Y=y.bin && redflow wait 1\n"
              "  redflow server --min-workers 2 --slurm-workers 8 --slurm-per-allocation 2 --slurm-arg=--time=02:00:00 &\n"
              "     (no workers of its own: it asks Slurm for 2 at a time while jobs wait, 8 at most; `redflow workers` lists them)\n"
              "  redflow server --min-workers 2 --dashboard   (its jobs and workers live in a browser: docs/dashboard.md)\n"
              "Exit status: 0 after SIGINT or SIGTERM; 1 an error (the journal damaged, an endpoint taken); 2 a usage error.");
  add_cluster_flags(cmd, o->cluster, {.workers = "workers per job (unless a job asks otherwise)", .min_default = "required"});
  cmd->add_option("--client-listen", o->client_listen, "Where clients (`redflow submit` and the others) connect: loopback only")
      ->type_name("ADDR")
      ->capture_default_str();
  cmd->add_option("--server-file", o->server_file, "Write the client endpoint (line 1) and the workers' (line 2) here, for the clients")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--journal", o->journal_dir, "Keep jobs, their states and SPITS commit logs in DIR, and resume from it (default: none)")
      ->type_name("DIR");
  auto& slurm = o->slurm;
  cmd->add_option("--slurm-workers", slurm.allocator.max_workers,
                  "Ask Slurm (sbatch) for workers when jobs wait for them, at most N at once; 0: never (docs/server.md)")
      ->type_name("N")
      ->group("Workers from Slurm")
      ->capture_default_str();
  cmd->add_option("--slurm-per-allocation", slurm.allocator.workers_per_allocation, "Workers (Slurm tasks) per allocation it asks for")
      ->type_name("K")
      ->group("Workers from Slurm")
      ->capture_default_str();
  cmd->add_option("--slurm-idle", slurm.worker_idle_s,
                  "Seconds a worker from Slurm waits for a job before it leaves (its allocation ends with its last worker)")
      ->type_name("S")
      ->group("Workers from Slurm")
      ->capture_default_str();
  cmd->add_option("--slurm-arg", slurm.sbatch_args, "One more sbatch argument for every allocation (repeatable): --slurm-arg=--partition=batch")
      ->type_name("ARG")
      ->group("Workers from Slurm");
  cmd->add_option("--slurm-worker-keys", slurm.key_dir,
                  "Beyond loopback: each worker from Slurm uses DIR/HOST.key, and the server's --key with .pub for .key as the server's key")
      ->type_name("DIR")
      ->group("Workers from Slurm");
  cmd->add_option("--slurm-join-timeout", slurm.allocator.join_timeout_s,
                  "Cancel a running allocation none of whose workers reached the server within S seconds, and back off")
      ->type_name("S")
      ->group("Workers from Slurm")
      ->capture_default_str();
  add_dashboard_flags(cmd, *dashboard);
  return {cmd, [o, dashboard] {
            if (o->cluster.listen.empty()) o->cluster.listen = "tcp://127.0.0.1:*";
            if (Status s = server::check_server_options(*o); !s.ok()) return usage_error(s);
            std::error_code ec;
            o->exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
            if (ec) return fail(Status::IOError("cannot find the redflow executable (/proc/self/exe): " + ec.message()));
            if (const auto parent = std::filesystem::path(o->server_file).parent_path(); !parent.empty())
              std::filesystem::create_directories(parent, ec);
            std::signal(SIGINT, on_stop_signal);
            std::signal(SIGTERM, on_stop_signal);
            o->on_listening = [](const std::string& client, const std::string& workers) {
              fmt::print(stderr, "redflow: server: clients at {}; workers: {} worker --connect {} --persist\n", client, command_name(), workers);
            };
            // The jobs page: the server's jobs and workers, from its loop.
            auto board = RunDashboard::start(*dashboard, "server", 0, "server");
            if (!board.ok()) return usage_error(board.status());
            if (RunDashboard* d = board->get())
              o->on_state = [d](const server::ServerState& state) { d->jobs(state.jobs, state.workers, state.idle); };
            const Status s = server::run_server(*o, stop_server);
            if (*board) (*board)->end(s);
            if (!s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
