// `redflow workers`: where workers connect, how many a job runs on by
// default, the workers waiting for a job now, those the last job ran on, and
// the allocations the server asked Slurm for (server --slurm-workers).
#include <fmt/format.h>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

Command add_workers_command(CLI::App& app) {
  auto o = std::make_shared<ClientOptions>();
  auto* cmd = app.add_subcommand("workers", "Show the server's workers: their endpoint, how many a job runs on, the idle ones, the last job's, its Slurm allocations.");
  add_server_flags(cmd, *o);
  return {cmd, [o] {
            if (Status s = check_server_flags(*o); !s.ok()) return usage_error(s);
            auto client = Client::connect(*o);
            if (!client.ok()) return fail(client.status());
            auto w = client->workers();
            if (!w.ok()) return fail(w.status());
            fmt::print("endpoint: {}   (redflow worker --connect {} --persist)\n", w->endpoint, w->endpoint);
            fmt::print("a job runs on: {} worker{} (unless it asks for another number: submit --workers N)\n", w->per_job, w->per_job == 1 ? "" : "s");
            fmt::print("idle now: {}\n", w->idle.size());
            for (const auto& name : w->idle) fmt::print("  {}\n", name);
            fmt::print("the last job ran on: {}\n", w->last.empty() ? std::string("(no job has reported yet)") : "");
            for (const auto& name : w->last) fmt::print("  {}\n", name);
            if (!w->allocating.empty()) {
              fmt::print("workers {}\n", w->allocating);
              for (const auto& a : w->allocations)
                fmt::print("  allocation {}: {}, {} of {} worker{} at the server, asked {:.0f} s ago{}\n", a.id, a.state, a.joined, a.workers,
                           a.workers == 1 ? "" : "s", a.age_s, a.why.empty() ? "" : "; cancelled: " + a.why);
            }
            return 0;
          }};
}

}  // namespace redflow::cli
