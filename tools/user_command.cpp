// main() of the installed `redflow` command: the user's subcommands with the
// built-in actors (plugins add more with --lib), linked with libredflow.so.
// The paper reproductions and the developers' tools, which need the
// benchmark applications (BLAS, FFTW) and the differential tester, are in the
// build tree's command (developer_commands.cpp); asked for here, the error
// says where they are.
#include <cstdio>
#include <string_view>

#include "command_main.hpp"
#include "redflow/registry.hpp"

namespace redflow::cli {

Registry cli_registry() { return Registry::with_builtins(); }

}  // namespace redflow::cli

int main(int argc, char** argv) {
  // The first word that is not a flag: the subcommand, when one was given.
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.starts_with('-')) continue;
    for (std::string_view tool : {"gen", "bench", "table1", "difftest", "launch-probe"})
      if (word == tool) {
        std::fprintf(stderr,
                     "redflow: error: '%s' is not in the installed redflow command: the paper reproductions (gen, bench, "
                     "table1) and the developers' tools (difftest, launch-probe) are in the redflow command of a build tree "
                     "(build/redflow; docs/guide.md, section 1)\n",
                     argv[i]);
        return 2;
      }
    break;
  }
  return redflow::cli::command_main(argc, argv, nullptr);
}
