// main() of the build tree's `redflow` command (build/redflow): the user's
// subcommands, plus those that reproduce the papers and those that develop
// redflow, and the benchmark applications' actors in every subcommand. The
// installed command is user_command.cpp.
#include "apps/apps.hpp"
#include "cli_common.hpp"
#include "command_main.hpp"

namespace redflow::cli {

Registry cli_registry() { return apps::app_registry(); }

void add_developer_commands(CLI::App& app, std::vector<Command>& commands) {
  add_group(commands, "Reproduce the papers", {add_gen_command(app), add_bench_command(app), add_table1_command(app)});
  add_group(commands, "Import real workloads", {add_import_command(app)});
  add_group(commands, "Develop redflow", {add_difftest_command(app), add_launch_probe_command(app)});
}

}  // namespace redflow::cli

int main(int argc, char** argv) { return redflow::cli::command_main(argc, argv, redflow::cli::add_developer_commands); }
