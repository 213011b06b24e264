// `--report-json FILE`, the same flag on `run`, `spits`, `stream` and `rem`:
// what happened in the run in the one shape every model fills
// (redflow/report.hpp), written once the run succeeded.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "redflow/report.hpp"

namespace redflow::cli {

void add_report_flag(CLI::App* cmd, std::string& path);
// Writes to_json(report) to `path` (nothing when it is empty).
Status write_report(const std::string& path, const RunReport& report);

}  // namespace redflow::cli
