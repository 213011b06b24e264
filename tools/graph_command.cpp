// `redflow graph`: validate a graph; optionally write it back as DOT.
#include <fmt/format.h>

#include <optional>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct GraphArgs {
  std::string graph, emit, out;
  RuntimeArgs runtime;
  std::string redundancy;
};

int graph_main(const GraphArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.runtime.libs); !s.ok()) return fail(s);
  std::optional<Redundancy> r;
  if (!a.redundancy.empty()) {
    r = parse_redundancy(a.redundancy);
    if (!r) return usage_error(Status::InvalidArgument("--redundancy: unknown configuration '" + a.redundancy + "' (expected none, 2x-same, 3x-same, 2x-diff or 3x-diff)"));
  }
  auto options = runtime_options(a.runtime);
  if (!options.ok()) return usage_error(options.status());
  options->redundancy = r.value_or(Redundancy::kNone);
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  // What `run` would check with the same flags (memory fit, shapes, tiles for *-diff, ...), without running.
  const Runtime rt(*options);
  if (Status s = rt.check(*graph, reg); !s.ok()) return load_refused(s);
  if (r) {
    // The machine decides which actors run on the driver (never replicated).
    auto transformed = apply_redundancy(*graph, *r, rt.machine(), reg);
    if (!transformed.ok()) return fail(transformed.status());
    *graph = std::move(*transformed);
  }
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
  auto* sub = app.add_subcommand("graph", "Check a graph as `run` would with the same flags; optionally write it back as normalised DOT, or as redundancy makes it.");
  sub->footer("Examples:\n"
              "  redflow graph g.dot\n"
              "  redflow graph g.dot --emit dot --out normalised.dot\n"
              "  redflow graph g.dot --redundancy 3x-diff --tiles 3 --emit dot --out fig3.dot && dot -Tsvg fig3.dot -o fig3.svg");
  sub->add_option("graph", a->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(readable_file());
  sub->add_option("--emit", a->emit, "Write the graph in this format: dot (default: only validate)")->check(CLI::IsMember({"dot"}));
  sub->add_option("--out", a->out, "File for --emit (default: standard output)")->type_name("FILE");
  sub->add_option("--redundancy", a->redundancy,
                  "Apply the redundancy transformation first (none, 2x-same, 3x-same, 2x-diff, 3x-diff): replicas NAME.rK and compare actors NAME.compare (the paper's Fig. 3; default: not applied)");
  // The machine flags of `run`: the graph is checked as `run` would check it with them.
  add_runtime_options(sub, a->runtime);
  return {sub, [a] { return graph_main(*a); }};
}

}  // namespace redflow::cli
