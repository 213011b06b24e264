// `redflow graph`: validate a graph; optionally write it back as DOT.
#include <fmt/format.h>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct GraphArgs {
  std::string graph, emit, out;
  std::vector<std::string> libs;
};

int graph_main(const GraphArgs& a) {
  Registry reg = Registry::with_builtins();
  if (Status s = load_libs(reg, a.libs); !s.ok()) return fail(s);
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  if (Status s = validate(*graph, reg, RuntimeOptions{}); !s.ok()) return fail(s);
  if (a.emit == "dot") {
    if (a.out.empty()) {
      fmt::print("{}", graph->to_dot());
    } else if (Status s = graph->write_dot_file(a.out); !s.ok()) {
      return fail(s);
    }
  } else {
    fmt::print("graph '{}': {} actors, {} data nodes: valid\n", graph->name(), graph->actors().size(), graph->data().size());
  }
  return 0;
}

}  // namespace

Command add_graph_command(CLI::App& app) {
  auto a = std::make_shared<GraphArgs>();
  auto* sub = app.add_subcommand("graph", "Validate a graph; optionally write it back as normalised DOT.");
  sub->footer("Examples:\n"
              "  redflow graph g.dot\n"
              "  redflow graph g.dot --emit dot --out normalised.dot");
  sub->add_option("graph", a->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(CLI::ExistingFile);
  sub->add_option("--emit", a->emit, "Write the graph in this format: dot (default: only validate)")->check(CLI::IsMember({"dot"}));
  sub->add_option("--out", a->out, "File for --emit (default: standard output)")->type_name("FILE");
  sub->add_option("--lib", a->libs, "Actor plugin .so to load (repeatable; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(CLI::ExistingFile);
  return {sub, [a] { return graph_main(*a); }};
}

}  // namespace redflow::cli
