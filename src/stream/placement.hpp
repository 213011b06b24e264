// Load-time operator placement for SCORE stream programs ("SCORE on
// Millennium", section 4.2). Placement is decided once, before any operator
// runs, so it is a pure function of the graph, its profile and a seed: the same
// program on the same cluster lands the same way every time, and tests and
// the CLI can compare algorithms without starting a cluster.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/status.hpp"

namespace redflow::stream {

struct PlacementGraph {
  std::vector<std::string> operators;  // names, for error messages
  // Per operator: busy time from a previous run's profile, or empty for unit
  // weights. Must be finite and >= 0.
  std::vector<double> busy;
  // tokens: how many tokens a previous run sent over the stream, or 1 when
  // there is no profile. Must be finite and >= 0.
  struct Stream { unsigned from = 0, to = 0; double tokens = 1; };
  std::vector<Stream> streams;  // directed; cycles, self-loops and parallel streams allowed
};

// The paper's partition algorithms (section 4.2.2).
enum class PlaceAlgo { kNaive, kTopological, kSmart, kSmartMin, kSmartMax };

struct Placement {
  std::vector<unsigned> node_of;  // per operator, in [0, nodes)
  double edge_cut = 0;            // tokens over streams whose ends are on different nodes
  double balance = 0;             // max node load / mean node load; 1 = perfect
};

// "naive", "topological", "smart", "smart_min", "smart_max".
Result<PlaceAlgo> parse_place_algo(std::string_view name);
const char* place_algo_name(PlaceAlgo a);

// Assigns every operator of g to one of `nodes` cluster nodes. seed drives
// Naive's pseudo-random assignment and METIS's internal randomness, so a
// given (g, nodes, algo, seed) always gives the same placement. Errors (never
// a crash) for nodes == 0, an empty graph, a stream naming a missing
// operator, a bad profile, or a METIS failure.
Result<Placement> place(const PlacementGraph& g, unsigned nodes, PlaceAlgo algo, std::uint64_t seed = 1);

// Fills p.edge_cut and p.balance from p.node_of. Load is the sum of busy
// times, or the operator count when g.busy is empty; when every load is zero
// balance is 1. If p.node_of, nodes or g's streams are not a valid placement
// of g, both are set to NaN rather than reading out of range.
void score(const PlacementGraph& g, unsigned nodes, Placement& p);

}  // namespace redflow::stream
