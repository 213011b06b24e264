// `redflow job ID`: one job's state, command, workers and RunReport.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

Command add_job_command(CLI::App& app) {
  auto o = std::make_shared<ClientOptions>();
  auto id = std::make_shared<std::uint64_t>(0);
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("job", "Show one job: state, exit status, its workers and its report (RunReport JSON).");
  add_job_id(cmd, *id);
  add_server_flags(cmd, *o);
  cmd->add_flag("--json", *json, "Print only the job's RunReport JSON (nothing when it has none yet)");
  return {cmd, [o, id, json] {
            if (Status s = check_server_flags(*o); !s.ok()) return usage_error(s);
            auto client = Client::connect(*o);
            if (!client.ok()) return fail(client.status());
            auto job = client->status(*id);
            if (!job.ok()) return fail(job.status());
            if (*json) {
              fmt::print("{}", job->report_json);
              return 0;
            }
            fmt::print("{}", describe_job(*job, true));
            return 0;
          }};
}

}  // namespace redflow::cli
