// The profile every stream run writes (tokens per stream, busy time per
// operator) and what placement reads back from it: SCORE's back-annotation,
// by which Smart_min and Smart_max weigh streams and operators.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "redflow/stream.hpp"
#include "stream/placement.hpp"

namespace redflow::stream {

class TokenQueue;

// The run's profile as JSON text: {"seconds", "operators": [{name, firings,
// busy_s}], "streams": [{from, to, tokens}]}.
std::string profile_json(const RunResult& result);

// Each stream's tokens written and waiting, read from the counters of the
// queues this process writes (`queues`, by stream; null where the producer
// runs elsewhere): atomics, safe beside the operators.
std::vector<StreamProfile> sample_streams(const Program& program, const std::vector<std::unique_ptr<TokenQueue>>& queues);

// A firing from `start_s` to `end_s` into an operator's spans, not one per
// firing: within 50 us of the last span's end it extends that span, and past
// 20,000 spans the last absorbs the rest, so a long run's trace stays small.
void add_firing_span(std::vector<FiringSpan>& spans, double start_s, double end_s);

// The program as a placement graph with unit weights.
PlacementGraph placement_graph(const Program& program);

// Weights `g` (made by placement_graph from the same program) with a
// profile's busy times and token counts. Named errors: not JSON, an operator
// or stream the program does not have, or one of the program's missing.
Status annotate(PlacementGraph& g, const Program& program, const std::string& profile_text, const std::string& source);

// The program placed on `nodes` nodes by `algo` (parse_place_algo's names),
// weighted by a profile when one is given (`profile_text`, read from
// `source`): `redflow place` and run_cluster() both place through here.
// smart_min and smart_max without a profile are a named error.
struct ProgramPlacement {
  PlacementGraph graph;
  Placement placement;
};
Result<ProgramPlacement> place_program(const Program& program, unsigned nodes, std::string_view algo, const std::string& profile_text,
                                       const std::string& source, std::uint64_t seed);

}  // namespace redflow::stream
