// add_report_flag and write_report (report_flag.hpp).
#include "report_flag.hpp"

#include "cli_common.hpp"

namespace redflow::cli {

void add_report_flag(CLI::App* cmd, std::string& path) {
  cmd->add_option("--report-json", path,
                  "Write what ran, where, what failed and what was recovered as JSON, in the shape every model shares "
                  "(docs/guide.md, \"One report\"; default: none)")
      ->type_name("FILE.json");
}

Status write_report(const std::string& path, const RunReport& report) {
  if (path.empty()) return Status::Ok();
  const std::string json = to_json(report);
  return write_file(path, json.data(), json.size());
}

}  // namespace redflow::cli
