// `redflow jobs`: every job the server knows, one line each.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

Command add_jobs_command(CLI::App& app) {
  auto o = std::make_shared<ClientOptions>();
  auto* cmd = app.add_subcommand("jobs", "List the server's jobs: id, state, exit status, command.");
  add_server_flags(cmd, *o);
  return {cmd, [o] {
            if (Status s = check_server_flags(*o); !s.ok()) return usage_error(s);
            auto client = Client::connect(*o);
            if (!client.ok()) return fail(client.status());
            auto jobs = client->list();
            if (!jobs.ok()) return fail(jobs.status());
            fmt::print("{:>5}  {:<9}  {:>4}  {}\n", "ID", "STATE", "EXIT", "COMMAND");
            for (const auto& j : *jobs)
              fmt::print("{:>5}  {:<9}  {:>4}  redflow {}\n", j.id, to_string(j.state), finished(j.state) ? std::to_string(j.exit_status) : "-",
                         fmt::join(j.args, " "));
            return 0;
          }};
}

}  // namespace redflow::cli
