// The client subcommands' shared flags and text (server_client.hpp).
#include "server_client.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

namespace redflow::cli {

std::string default_server_file() {
  if (const char* f = std::getenv("REDFLOW_SERVER_FILE"); f != nullptr && *f) return f;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home ? home : ".") + "/.redflow/server";
}

void add_server_flags(CLI::App* cmd, ClientOptions& options) {
  options.server_file = default_server_file();
  cmd->add_option("--server", options.endpoint, "The server's client endpoint, as `redflow server` prints it (default: read from --server-file)")
      ->type_name("ENDPOINT");
  cmd->add_option("--server-file", options.server_file, "The file `redflow server` wrote its endpoints to ($REDFLOW_SERVER_FILE, else ~/.redflow/server)")
      ->type_name("FILE")
      ->capture_default_str();
}

Status check_server_flags(const ClientOptions& options) {
  if (options.endpoint.empty() && options.server_file.empty())
    return Status::InvalidArgument("no server given: --server ENDPOINT or --server-file FILE (--server-file '' names none)");
  return Status::Ok();
}

CLI::Option* add_job_id(CLI::App* cmd, std::uint64_t& id) {
  const CLI::Validator job_id(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && text.find_first_not_of('0') != std::string::npos && text.size() <= 19) return {};
        return "'" + text + "' is not a job id: a whole number from 1, as `redflow submit` printed it";
      },
      "ID");
  return cmd->add_option("id", id, "The job's id, as `redflow submit` printed it")->type_name("ID")->required()->check(job_id);
}

std::string describe_job(const JobInfo& j, bool with_report) {
  std::string s = fmt::format("job {}: {}", j.id, to_string(j.state));
  if (finished(j.state) && j.state != JobState::kCancelled) s += fmt::format(" (exit status {})", j.exit_status);
  s += fmt::format(", started {} time{}\n", j.starts, j.starts == 1 ? "" : "s");
  s += fmt::format("  command: redflow {}\n  in: {}\n", fmt::join(j.args, " "), j.cwd);
  if (j.workers_asked != 0 || j.time_limit_s > 0) {
    s += "  asked for:";
    if (j.workers_asked != 0) s += fmt::format(" {} worker{}", j.workers_asked, j.workers_asked == 1 ? "" : "s");
    if (j.time_limit_s > 0) s += fmt::format(" {}a time limit of {:g} s", j.workers_asked != 0 ? "and " : "", j.time_limit_s);
    s += "\n";
  }
  if (!j.message.empty()) s += "  message: " + j.message + "\n";
  if (!j.workers.empty()) s += fmt::format("  workers: {}\n", fmt::join(j.workers, ", "));
  if (with_report && !j.report_json.empty()) s += "  report: " + j.report_json + (j.report_json.back() == '\n' ? "" : "\n");
  return s;
}

}  // namespace redflow::cli
