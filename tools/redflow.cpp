// The `redflow` command: run, check and convert dataflow graphs. Each
// subcommand lives in its own tools/*_command.cpp and registers itself here.
#include <CLI/CLI.hpp>

#include <vector>

#include "cli_common.hpp"

int main(int argc, char** argv) {
  CLI::App app{"redflow: run coarse-grain dataflow graphs on every core, with HEFT or work stealing.\n"
               "Examples:\n"
               "  redflow run examples/demo/pipeline.dot --input A=examples/demo/A.bin --print\n"
               "  redflow run g.dot --input X=x.bin --output Y=y.bin --scheduler steal --tiles 4 --stats s.json"};
  app.require_subcommand(1);
  std::vector<redflow::cli::Command> commands = {
      redflow::cli::add_run_command(app),
      redflow::cli::add_graph_command(app),
      redflow::cli::add_actors_command(app),
      redflow::cli::add_campaign_command(app),
  };
  CLI11_PARSE(app, argc, argv);
  for (const auto& c : commands)
    if (c.parser->parsed()) return c.main();
  return 0;
}
