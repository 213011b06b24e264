// The two builds of the `redflow` command (CMakeLists.txt): the build tree's,
// with the developers' and paper reproductions' subcommands, and the installed
// one, without them. Both run command_main(); each defines its own main(),
// cli_registry() and apply_machine_profile() (cli_common.hpp). Declarations
// only, so that a main() file compiles without CLI11.
#pragma once

#include <vector>

namespace CLI {
class App;
}

namespace redflow::cli {

struct Command;

// Adds subcommands (with their help groups) beyond the user's.
using AddCommands = void (*)(CLI::App& app, std::vector<Command>& commands);

// Parses the command line and runs the subcommand given: the user's
// subcommands, then those `more` adds (none if it is null). Returns the exit
// status (docs/guide.md, "Exit statuses").
int command_main(int argc, char** argv, AddCommands more);

// The build tree's additions: "Reproduce the papers" (gen, bench, table1) and
// "Develop redflow" (difftest, launch-probe).
void add_developer_commands(CLI::App& app, std::vector<Command>& commands);

}  // namespace redflow::cli
