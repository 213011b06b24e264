// `redflow wait ID`: block until a job ends; exit as its command did.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

Command add_wait_command(CLI::App& app) {
  auto o = std::make_shared<ClientOptions>();
  auto id = std::make_shared<std::uint64_t>(0);
  auto timeout = std::make_shared<double>(1e7);
  auto* cmd = app.add_subcommand("wait", "Wait for a job to end; exit with its exit status (as its one-shot command would).");
  cmd->footer("Exit status: the job's (0 succeeded, 1 failed, 3 fault tolerance gave up, 128+N its driver ended by signal N);\n"
              "1 when it was cancelled, the wait timed out or there is no such job.");
  add_job_id(cmd, *id);
  add_server_flags(cmd, *o);
  cmd->add_option("--timeout", *timeout, "Seconds to wait at most")->check(CLI::PositiveNumber);
  return {cmd, [o, id, timeout] {
            if (Status s = check_server_flags(*o); !s.ok()) return usage_error(s);
            auto client = Client::connect(*o);
            if (!client.ok()) return fail(client.status());
            auto job = client->wait(*id, *timeout);
            if (!job.ok()) return fail(job.status());
            fmt::print(stderr, "{}", describe_job(*job, false));
            if (job->state == JobState::kCancelled) return fail(Status::Internal(fmt::format("job {} was cancelled", *id)));
            return job->exit_status;
          }};
}

}  // namespace redflow::cli
