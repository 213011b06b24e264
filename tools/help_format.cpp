// How `redflow --help` lays out its commands (CommandListFormatter).
#include <sstream>

#include "cli_common.hpp"

namespace redflow::cli {

std::string CommandListFormatter::make_subcommand(const CLI::App* sub) const {
  // The description's first sentence, which may span lines; what follows
  // (examples, details) is in the command's own --help.
  std::istringstream lines(sub->get_description());
  std::string summary;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Examples")) break;
    summary += (summary.empty() ? "" : " ") + line;
    if (line.ends_with('.')) break;
  }
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true), summary, column_width_);
  return out.str();
}

}  // namespace redflow::cli
