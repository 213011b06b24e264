// Case: one unit of differential testing. A graph, the runtime it is loaded
// into, and a sequence of executions (steps) of that one loaded graph, each
// with its own inputs, redundancy configuration and injected faults. Running
// several steps on one LoadedGraph is what exposes state left behind by an
// earlier execution (a failed one, or one under another configuration).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "redflow/redflow.hpp"

namespace redflow::difftest {

struct Step {
  std::map<std::string, std::vector<std::byte>> inputs;  // by input node name (FAIL included when the graph has it)
  Redundancy redundancy = Redundancy::kNone;             // the graph-wide configuration of this execution
  std::vector<std::string> inject;                       // --inject specs for this execution
  bool fail = false;                                     // FAIL is set: dt.fail_if actors fail on purpose
};

struct Case {
  std::uint64_t seed = 0;   // generator seed (0 for a case read from a reproducer)
  Graph graph;
  RuntimeOptions options;   // tiles, cores_per_tile, slots, slot_bytes, scheduler, seed, quarantine_after
  std::vector<Step> steps;
  // The known defect "stale work-stealing queue entries after a failed
  // execution" (docs/testing.md): under steal, stop after an execution fails.
  bool stop_after_steal_failure = false;
};

// The machine model `options` describes (what runs_on_driver needs).
MachineModel machine_of(const RuntimeOptions& options);

// FaultInjection of a step's --inject specs (the specs come from the generator or a reproducer).
Result<FaultInjection> step_faults(const Step& step, unsigned tiles);

// "12 actors, 30 data nodes".
std::string graph_size(const Graph& g);

// The configuration actor `a` of the user's graph really runs under in a
// step of configuration `r`: none on the driver, else its own or `r`.
Redundancy effective_redundancy(const Graph& g, ActorId a, Redundancy r, const MachineModel& m, const Registry& reg);

// Actor executions a fault-free, successful execution must report in
// ExecutionStats::actors_executed: one per plain actor, 2 or 3 per *-same
// actor, 2 or 3 replicas per *-diff actor. The compare actors the
// transformation adds vote on checksums and do not count; an rf.compare of the
// user's graph is an ordinary driver actor and counts once.
std::uint64_t expected_executions(const Graph& g, Redundancy r, const MachineModel& m, const Registry& reg);

}  // namespace redflow::difftest

namespace redflow::difftest {

// What the tester runs graphs with: the built-ins, the application actors and dt.mix / dt.fail_if.
Registry difftest_registry();

}  // namespace redflow::difftest
