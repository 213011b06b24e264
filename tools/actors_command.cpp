// `redflow actors`: list the actor functions a graph may name.
#include <fmt/format.h>

#include "cli_common.hpp"

namespace redflow::cli {

Command add_actors_command(CLI::App& app) {
  auto libs = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("actors", "List the actor functions a graph may name.");
  sub->footer("Examples:\n"
              "  redflow actors\n"
              "  redflow actors --lib ./my_actors.so");
  sub->add_option("--lib", *libs, "Actor plugin .so to load (repeatable; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(readable_file());
  return {sub, [libs] {
            Registry reg = cli_registry();
            if (Status s = load_libs(reg, *libs); !s.ok()) return fail(s);
            for (const auto& name : reg.names()) {
              const auto* spec = reg.find(name);
              fmt::print("{:<14} {}{}\n", name, spec->on_driver ? "[driver] " : "", spec->summary);
            }
            return 0;
          }};
}

}  // namespace redflow::cli
