// Plan: a loaded graph flattened for execution: per actor its function, input
// and output data nodes and where it may run; per data node its size, kind and
// consumer edges; the HEFT schedule. Built once per load, read-only while the
// graph executes, so the hot path touches only flat arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/runtime.hpp"
#include "redflow/schedule.hpp"

namespace redflow::runtime {

inline constexpr ActorId kNoActor = ~ActorId{0};

// What the engine reads of an actor off the per-actor path (aliases,
// redundancy), 24 bytes. What the per-actor path reads is in ActorHot; names
// and arguments stay in the graph (Plan::name, Plan::args), so a plan does
// not repeat them: at 10^6 actors every byte here is a megabyte.
struct PlanActor {
  std::size_t alias_offset = 0;          // kInputRange: the split's offset
  ActorId vote = kNoActor;               // *-diff replica: its compare actor
  bool on_driver = false;                // Algorithm 2's rule, or a special actor
  ActorAlias alias = ActorAlias::kNone;  // on the driver: run by setting pointers
  // Redundancy (section 5 of the paper), from the executed graph:
  std::uint8_t runs = 1;                 // *-same: executions back to back on one tile
  std::uint8_t replica = 0;              // *-diff: 1..3 for a replica, 0 otherwise
  bool is_vote = false;                  // a compare actor: voted where its last replica finishes
};
static_assert(sizeof(PlanActor) <= 24);

// What the per-actor path reads of an actor (readiness, the fast path), 32
// bytes: two actors per cache line, apart from PlanActor's cold fields
// (names, arguments, redundancy, aliases). A chain's successor costs one
// line here instead of two of PlanActor.
struct ActorHot {
  static constexpr std::uint8_t kOnDriver = 1, kIsVote = 2, kReplica = 4, kSmallInner = 8, kDeadInner = 16;
  const ActorFunction* function = nullptr;
  std::uint32_t first_input = 0;
  std::uint32_t input_count = 0;
  DataId output = 0;
  std::uint32_t initial_pending = 0;
  std::int32_t heft_tile = kDriverTile;
  // kSmallInner: the output is an inner node with consumers and at most
  // kInlineBytes, so the fast path writes it straight into main memory.
  // kDeadInner: the output is an inner node nobody reads (a tree's leaves):
  // the fast path lets the actor write it to its place in main memory, no slot.
  std::uint8_t flags = 0;
};
static_assert(sizeof(ActorHot) == 32);

// Values this small go straight to main memory on the fast path and are read
// there in place: copying a cache line costs less than keeping it in a slot
// (directory, LRU, displacement, tile-to-tile fetch with the pin protocol).
inline constexpr std::size_t kInlineBytes = 64;

// Every value an actor reads starts at a multiple of this (slots, main
// memory's arena, a split's range or its copy), so typed views
// (ActorContext::input<T>) of any fundamental type are aligned.
inline constexpr std::size_t kValueAlignment = alignof(std::max_align_t);

struct PlanData {
  std::size_t bytes = 0;
  DataKind kind = DataKind::kInner;
  std::uint32_t first_consumer = 0;  // into Plan::consumers, one entry per edge
  std::uint32_t consumer_count = 0;
  ActorId producer = kNoActor;
};
static_assert(sizeof(PlanData) <= 24);

struct Plan {
  const Graph* graph = nullptr;
  const Registry* registry = nullptr;  // where the actors' functions were found (tiles resolve the actor table in it)
  std::uint64_t id = 0;                // unique in the process: names the actor table a tile holds
  HugePageVector<PlanActor> actors;
  HugePageVector<ActorHot> hot;         // per actor, the same index as `actors`
  HugePageVector<DataId> inputs;
  HugePageVector<ActorId> consumers;
  HugePageVector<PlanData> data;
  std::vector<ActorId> initially_ready;
  // The HEFT schedule's orders (tile_order, driver_order, makespan): what
  // the HEFT walkers run. Its per-actor entries (tile, estimated start and
  // finish, 24 bytes an actor) are dropped once each actor's tile is in
  // ActorHot::heft_tile; LoadedGraph::heft_schedule() computes the whole
  // schedule again (HEFT is deterministic) when a caller asks for it.
  Schedule heft;
  bool heft_planned = false;         // made with a HEFT schedule (the HEFT scheduler runs it)
  // Per tile: at least a quarter of its HEFT order are chain links
  // (chain_next) whose consumer comes right after them (chains, which its
  // walk may run in place in one call: Runner::chaining). The walk of any
  // other order skips the chains' bookkeeping, which would cost its actors
  // more than the few links save.
  std::vector<char> heft_chains;
  // Per actor: the one consumer that may run straight after it, in place, on
  // the value it just wrote (a chain link), or kNoActor. A link holds when
  // the actor is a plain tile actor (no vote, replica or driver actor) whose
  // output is small and inner (ActorHot::kSmallInner) with one consumer, and
  // that consumer reads only it and may run in place itself. What may change
  // during an execution (an abort, a join, a tile out of service, the HEFT
  // order) is checked as the chain runs (Engine::run_links).
  HugePageVector<ActorId> chain_next;
  // HEFT's estimated seconds of each actor, kept only where HEFT adapts to a
  // tile that falls behind (adaptive_heft.cpp): a HEFT plan of 2 tiles or
  // more, without redundancy, whose tile actors are planned for at least
  // schedule::kCoarseMeanCostS on average. Empty otherwise.
  HugePageVector<float> planned_cost;
  HugePageVector<float> planned_start;  // HEFT's estimated start, seconds after the execution's
  bool adapts() const { return !planned_cost.empty(); }
  std::size_t max_inputs = 0;
  unsigned max_runs = 1;             // largest PlanActor::runs: output slots an actor may need
  bool redundant = false;            // any replica or *-same actor

  // Actor `h` has one input, and it is `d`.
  bool only_input(const ActorHot& h, DataId d) const { return h.input_count == 1 && inputs[h.first_input] == d; }
  // An actor's name and arguments, from the graph the plan was made of.
  std::string_view name(ActorId a) const { return graph->actor(a).name; }
  std::string_view args(ActorId a) const { return graph->actor(a).args; }
  // The user's actor that `a` stands for (a replica's or compare actor's
  // original; itself otherwise), for traces and messages.
  std::string_view original(ActorId a) const;
};

// Flattens `graph` (validated) for execution. `graph` and `registry` must outlive the plan.
// Driver placement follows Algorithm 2's rule (runs_on_driver), for HEFT and stealing alike.
// `same_default` (none, 2x-same or 3x-same) is the number of runs of every
// tile actor without its own `redundancy`.
Plan make_plan(const Graph& graph, const Registry& registry, const MachineModel& machine, Schedule heft,
               Redundancy same_default = Redundancy::kNone);

}  // namespace redflow::runtime
