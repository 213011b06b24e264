// The reference: a plain sequential interpreter of a graph. It runs the actors
// one by one in topological order on ordinary heap buffers, calling each
// registered ActorFunction with an ActorContext that has no parallel loop. It
// shares nothing with the engine (no slots, no schedules, no redundancy, no
// voting), so what it computes is the meaning every execution must reproduce.
#pragma once

#include <string>
#include <vector>

#include "redflow/redflow.hpp"

namespace redflow::difftest {

struct Reference {
  bool failed = false;
  std::string error;                        // "actor 'f': message" when an actor failed
  std::vector<std::vector<std::byte>> data; // every data node's value by DataId (after a failure, those computed before it)
  Outputs outputs;                          // by output node name (only when !failed)
};

// `graph` must be valid for `reg` (the runner loads it into a Runtime first).
Reference interpret(const Graph& graph, const Registry& reg, const Inputs& inputs);

}  // namespace redflow::difftest
