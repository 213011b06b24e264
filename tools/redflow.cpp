// The `redflow` command: run, check, schedule and convert dataflow graphs.
// Each subcommand lives in its own tools/*_command.cpp and registers itself
// here; main() is in developer_commands.cpp (the build tree's command) or
// user_command.cpp (the installed one).
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <vector>

#include "cli_common.hpp"
#include "command_main.hpp"
#include "redflow/huge_page_allocator.hpp"

namespace redflow::cli {

int command_main(int argc, char** argv, AddCommands more) {
  // Values sent and received as whole blocks are reused, not faulted in anew
  // (a worker's and a driver's large messages; docs/remote.md, "Copies").
  redflow::reuse_freed_buffers();
  if (argc > 0) set_command_name(argv[0]);
  CLI::App app{"redflow: run coarse-grain dataflow graphs on every core, with HEFT or work stealing.\n"
               "Examples:\n"
               "  redflow run examples/demo/pipeline.dot --input A=examples/demo/A.bin --print\n"
               "  redflow run g.dot --input X=x.bin --output Y=y.bin --scheduler steal --tiles 4 --trace t.json --gantt g.svg\n"
               "Run 'redflow COMMAND --help' for a command's flags and examples; docs/guide.md is the user guide."};
  app.require_subcommand(1);
  app.fallthrough();  // global options (--log-level) may follow the subcommand
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "Messages on stderr from this level up: trace, debug, info, warn, error, critical, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  // The help lists the commands by what a user does with them, in this order;
  // the developers' tools come last.
  app.formatter(std::make_shared<redflow::cli::CommandListFormatter>());
  std::vector<Command> commands;
  auto group = [&](const char* title, std::initializer_list<Command> list) { add_group(commands, title, list); };
  group("Run a program", {add_run_command(app), add_stream_command(app), add_spits_command(app), add_rem_command(app),
                          add_campaign_command(app)});
  group("Inspect a program", {add_graph_command(app), add_actors_command(app), add_schedule_command(app), add_place_command(app),
                              add_view_command(app)});
  group("Run on a cluster", {add_worker_command(app), add_keygen_command(app), add_tile_command(app), add_stream_worker_command(app),
                             add_spits_worker_command(app)});
  group("Use a server", {add_server_command(app), add_submit_command(app), add_jobs_command(app), add_job_command(app), add_wait_command(app),
                         add_fetch_command(app), add_cancel_command(app), add_workers_command(app)});
  if (more != nullptr)
    more(app, commands);
  else
    app.footer("The paper reproductions (gen, bench, table1) and the developers' tools (difftest, launch-probe) are in the\n"
               "redflow command of a build tree (build/redflow; docs/guide.md, section 1).");
  // A repeatable flag (--input, --inject, --lib, ...) takes one value each
  // time it is given: `--inject SPEC g.dot` leaves the graph to the
  // positional, where CLI11 would take every word up to the next flag.
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* opt : sub->get_options())
      if (!opt->get_positional()) opt->allow_extra_args(false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e, argc, argv);
  }
  report_actor_crashes();  // a crashing plugin actor is named, not a silent SIGSEGV
  auto logger = spdlog::stderr_color_mt("redflow");
  logger->set_pattern("redflow: %^%l%$: %v");
  // Each line out at once: a worker's or driver's log redirected to a file
  // (a batch job's) shows what happened up to now, also if it is killed.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));
  for (const auto& c : commands)
    if (c.parser->parsed()) return c.main();
  return 0;
}

}  // namespace redflow::cli
