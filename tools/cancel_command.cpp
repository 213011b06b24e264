// `redflow cancel ID`: take a queued job out of the queue, or stop a running one.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

Command add_cancel_command(CLI::App& app) {
  auto o = std::make_shared<ClientOptions>();
  auto id = std::make_shared<std::uint64_t>(0);
  auto* cmd = app.add_subcommand("cancel", "Cancel a job: a queued one never runs, a running one has its driver stopped.");
  add_job_id(cmd, *id);
  add_server_flags(cmd, *o);
  return {cmd, [o, id] {
            if (Status s = check_server_flags(*o); !s.ok()) return usage_error(s);
            auto client = Client::connect(*o);
            if (!client.ok()) return fail(client.status());
            auto job = client->cancel(*id);
            if (!job.ok()) return fail(job.status());
            if (job->state == JobState::kRunning)
              fmt::print("job {}: stopping its driver (`redflow wait {}` returns once it has)\n", *id, *id);
            else
              fmt::print("job {}: {}\n", *id, to_string(job->state));
            return 0;
          }};
}

}  // namespace redflow::cli
