// `redflow graph`: validate a graph; optionally write it back as DOT.
#include <fmt/format.h>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct GraphArgs {
  std::string graph, emit, out;
  std::vector<std::string> libs;
  std::string redundancy;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
};

int graph_main(const GraphArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.libs); !s.ok()) return fail(s);
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  if (Status s = validate(*graph, reg, RuntimeOptions{}); !s.ok()) return fail(s);
  if (!a.redundancy.empty()) {
    auto r = parse_redundancy(a.redundancy);
    if (!r) return fail(Status::InvalidArgument("--redundancy: unknown configuration '" + a.redundancy + "' (expected none, 2x-same, 3x-same, 2x-diff or 3x-diff)"));
    // The machine decides which actors run on the driver (never replicated).
    MachineModel m;
    m.tiles = 3;
    m.slots = a.slots;
    m.slot_bytes = a.slot_bytes;
    auto transformed = apply_redundancy(*graph, *r, m, reg);
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
  auto* sub = app.add_subcommand("graph", "Validate a graph; optionally write it back as normalised DOT, or as redundancy makes it.");
  sub->footer("Examples:\n"
              "  redflow graph g.dot\n"
              "  redflow graph g.dot --emit dot --out normalised.dot\n"
              "  redflow graph g.dot --redundancy 3x-diff --emit dot --out fig3.dot && dot -Tsvg fig3.dot -o fig3.svg");
  sub->add_option("graph", a->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(CLI::ExistingFile);
  sub->add_option("--emit", a->emit, "Write the graph in this format: dot (default: only validate)")->check(CLI::IsMember({"dot"}));
  sub->add_option("--out", a->out, "File for --emit (default: standard output)")->type_name("FILE");
  sub->add_option("--lib", a->libs, "Actor plugin .so to load (repeatable; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(CLI::ExistingFile);
  sub->add_option("--redundancy", a->redundancy,
                  "Apply the redundancy transformation first (none, 2x-same, 3x-same, 2x-diff, 3x-diff): replicas NAME.rK and compare actors NAME.compare (the paper's Fig. 3; default: not applied)");
  sub->add_option("--slots", a->slots, "Slots per tile of the machine the transformation assumes (actors too big for it stay single, on the driver)")
      ->capture_default_str();
  sub->add_option("--slot-bytes", a->slot_bytes, "Bytes per slot of that machine")->capture_default_str();
  return {sub, [a] { return graph_main(*a); }};
}

}  // namespace redflow::cli
