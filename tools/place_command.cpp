// `redflow place PROGRAM.dot --nodes K --algo A`: where SCORE's load-time
// placement puts each operator of a stream program, with its edge cut and
// balance (docs/streams.md). The algorithms are src/stream/placement.cpp.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "cli_common.hpp"
#include "redflow/stream.hpp"
#include "stream/profile.hpp"

namespace redflow::cli {

namespace {
struct PlaceArgs {
  std::string program, algo = "smart", profile;
  unsigned nodes = 2;
  std::uint64_t seed = 1;
};
}  // namespace

Command add_place_command(CLI::App& app) {
  auto a = std::make_shared<PlaceArgs>();
  auto* sub = app.add_subcommand("place", "Place a stream program's operators on K nodes and print the placement, its edge cut and its balance.");
  sub->footer("Algorithms (SCORE on Millennium): naive (seeded pseudo-random), topological (cycles clustered, then packed\n"
              "breadth-first), smart (METIS recursive bisection, unit weights), smart_min and smart_max (weights from a\n"
              "profile that `redflow stream --profile` wrote: tokens per stream, busy time per operator; min-cut and\n"
              "max-cut, docs/streams.md says how max-cut is had from METIS).\n"
              "Examples:\n"
              "  redflow place examples/streams/sum.dot --nodes 2 --algo smart\n"
              "  redflow stream prog.dot --profile prof.json && redflow place prog.dot --nodes 4 --algo smart_min --profile prof.json");
  sub->add_option("program", a->program, "The stream program (.dot)")->required()->check(readable_file());
  sub->add_option("--nodes,-k", a->nodes, "Nodes to place on")->check(CLI::Range(1u, 65536u))->capture_default_str();
  sub->add_option("--algo", a->algo, "naive, topological, smart, smart_min, smart_max")->capture_default_str();
  sub->add_option("--profile", a->profile, "A run's profile (redflow stream --profile): needed by smart_min and smart_max")
      ->check(readable_file())
      ->type_name("FILE.json");
  sub->add_option("--seed", a->seed, "Seed of naive's pseudo-random choice and of METIS")->capture_default_str();
  return {sub, [a] {
            auto algo = stream::parse_place_algo(a->algo);
            if (!algo.ok()) return usage_error(Status::InvalidArgument("--algo: " + algo.status().message()));
            if ((*algo == stream::PlaceAlgo::kSmartMin || *algo == stream::PlaceAlgo::kSmartMax) && a->profile.empty())
              return usage_error(Status::InvalidArgument("--algo " + a->algo + " needs --profile FILE.json (written by `redflow stream --profile`)"));
            auto reg = stream::OperatorRegistry::with_builtins();
            auto program = stream::Program::from_dot_file(a->program, reg);
            if (!program.ok()) return fail(program.status());
            std::string profile;
            if (!a->profile.empty()) {
              auto bytes = read_file(a->profile);
              if (!bytes.ok()) return fail(bytes.status());
              profile.assign(reinterpret_cast<const char*>(bytes->data()), bytes->size());
            }
            auto placed = stream::place_program(*program, a->nodes, a->algo, profile, a->profile, a->seed);
            if (!placed.ok()) return fail(placed.status());
            const stream::PlacementGraph& g = placed->graph;
            const stream::Placement* placement = &placed->placement;
            fmt::print("placement of {} ({} operators, {} streams) on {} nodes by {}: edge cut {}, balance {:.3f}\n", a->program,
                       g.operators.size(), g.streams.size(), a->nodes, stream::place_algo_name(*algo),
                       // Whole tokens (or streams) as an integer: {:g} would print 2.6e+06.
                       placement->edge_cut == std::floor(placement->edge_cut) ? fmt::format("{:.0f}", placement->edge_cut)
                                                                              : fmt::format("{:.2f}", placement->edge_cut),
                       placement->balance);
            for (unsigned n = 0; n < a->nodes; ++n) {
              fmt::print("  node {}:", n);
              for (std::size_t i = 0; i < g.operators.size(); ++i)
                if (placement->node_of[i] == n) fmt::print(" {}", g.operators[i]);
              fmt::print("\n");
            }
            return 0;
          }};
}

}  // namespace redflow::cli
