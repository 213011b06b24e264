// Flattening a validated graph into the arrays the engine runs on.
#include "runtime/plan.hpp"

#include <algorithm>
#include <atomic>

#include "schedule/heft.hpp"

namespace redflow::runtime {

std::string_view Plan::original(ActorId a) const {
  const ActorNode& node = graph->actor(a);
  auto of = node.extra.find(actors[a].is_vote ? "compare_of" : "replica_of");
  return of != node.extra.end() ? std::string_view(of->second) : std::string_view(node.name);
}

namespace {

// HEFT adapts (adaptive_heft.cpp) where its actors are coarse: the plan
// keeps each actor's estimated cost, and its walkers claim the actors they
// run. Fine-grained graphs (a chain of empty actors) walk the plan as made:
// there a tile that falls behind loses microseconds, less than what
// watching for it would cost every actor.
void keep_costs_if_coarse(Plan& plan, const MachineModel& machine) {
  if (!plan.heft_planned || plan.redundant || machine.tiles < 2) return;
  double sum = 0;
  std::size_t on_tiles = 0;
  for (ActorId a = 0; a < plan.heft.actors.size(); ++a) {
    if (plan.heft.actors[a].tile < 0) continue;
    sum += plan.heft.actors[a].finish - plan.heft.actors[a].start;
    ++on_tiles;
  }
  if (on_tiles == 0 || sum / static_cast<double>(on_tiles) < schedule::kCoarseMeanCostS) return;
  plan.planned_cost.resize(plan.heft.actors.size());
  plan.planned_start.resize(plan.heft.actors.size());
  for (ActorId a = 0; a < plan.heft.actors.size(); ++a) {
    plan.planned_cost[a] = static_cast<float>(plan.heft.actors[a].finish - plan.heft.actors[a].start);
    plan.planned_start[a] = static_cast<float>(plan.heft.actors[a].start);
  }
}

}  // namespace

Plan make_plan(const Graph& graph, const Registry& registry, const MachineModel& machine, Schedule heft, Redundancy same_default) {
  Plan plan;
  static std::atomic<std::uint64_t> next_id{1};
  plan.graph = &graph;
  plan.registry = &registry;
  plan.id = next_id.fetch_add(1, std::memory_order_relaxed);
  plan.heft = std::move(heft);
  plan.heft_planned = plan.heft.actors.size() == graph.actors().size() && !graph.actors().empty();
  plan.data.resize(graph.data().size());
  // Sized once: growing them edge by edge copies a large graph's edges ~twice.
  std::size_t edges = 0;
  for (const ActorNode& a : graph.actors()) edges += a.inputs.size();
  plan.inputs.reserve(edges);
  plan.consumers.reserve(edges);
  for (DataId d = 0; d < graph.data().size(); ++d) {
    const DataNode& node = graph.data(d);
    PlanData& pd = plan.data[d];
    pd.bytes = node.bytes;
    pd.kind = node.kind;
    pd.first_consumer = static_cast<std::uint32_t>(plan.consumers.size());
    pd.consumer_count = static_cast<std::uint32_t>(node.consumers.size());
    for (const Consumer& c : node.consumers) plan.consumers.push_back(c.actor);
    if (!node.producers.empty()) pd.producer = node.producers.front();
  }
  plan.actors.resize(graph.actors().size());
  plan.hot.resize(graph.actors().size());
  for (ActorId a = 0; a < graph.actors().size(); ++a) {
    const ActorNode& node = graph.actor(a);
    const ActorSpec* spec = registry.find(node.function);
    PlanActor& pa = plan.actors[a];
    ActorHot& h = plan.hot[a];
    h.function = spec ? &spec->function : nullptr;
    h.first_input = static_cast<std::uint32_t>(plan.inputs.size());
    h.input_count = static_cast<std::uint32_t>(node.inputs.size());
    for (DataId d : node.inputs) {
      plan.inputs.push_back(d);
      if (!graph.data(d).producers.empty()) ++h.initial_pending;
    }
    h.output = node.outputs.front();
    pa.on_driver = runs_on_driver(graph, a, machine, registry);
    if (a < plan.heft.actors.size()) h.heft_tile = plan.heft.actors[a].tile;
    // A compare actor is voted on checksums only over a replica group; any
    // other compare runs its function, which compares the bytes.
    if (spec != nullptr && pa.on_driver && spec->alias != ActorAlias::kVote) {
      pa.alias = spec->alias;
      pa.alias_offset = ActorContext::find_arg_u64(node.args, "offset").value_or(0);
    }
    pa.is_vote = votes_on_replicas(graph, a, machine, registry);
    const Redundancy own = node.redundancy.value_or(same_default);
    pa.runs = static_cast<std::uint8_t>(!pa.on_driver && !replicas_on_distinct_tiles(own) ? replica_count(own) : 1);
    if (h.initial_pending == 0 && !pa.is_vote) plan.initially_ready.push_back(a);
    plan.max_inputs = std::max<std::size_t>(plan.max_inputs, node.inputs.size());
  }
  // Replicas: the producers of a compare actor's inputs, numbered by port.
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    const ActorHot& h = plan.hot[a];
    if (!plan.actors[a].is_vote) continue;
    for (std::uint32_t i = 0; i < h.input_count; ++i) {
      const ActorId r = plan.data[plan.inputs[h.first_input + i]].producer;
      if (r == kNoActor) continue;
      plan.actors[r].vote = a;
      plan.actors[r].replica = static_cast<std::uint8_t>(i + 1);
      // A replica runs once: its compare actor votes. A graph-wide *-same
      // (the default `same_default` gave it) is not its configuration.
      plan.actors[r].runs = 1;
    }
  }
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    const PlanActor& pa = plan.actors[a];
    ActorHot& h = plan.hot[a];
    const PlanData& out = plan.data[h.output];
    h.flags = static_cast<std::uint8_t>((pa.on_driver ? ActorHot::kOnDriver : 0) | (pa.is_vote ? ActorHot::kIsVote : 0) |
                                        (pa.replica != 0 ? ActorHot::kReplica : 0) |
                                        (out.kind == DataKind::kInner && out.consumer_count != 0 && out.bytes <= kInlineBytes
                                             ? ActorHot::kSmallInner
                                             : 0) |
                                        (out.kind == DataKind::kInner && out.consumer_count == 0 ? ActorHot::kDeadInner : 0));
  }
  plan.max_runs = 1;
  for (const PlanActor& pa : plan.actors) {
    plan.redundant = plan.redundant || pa.runs > 1 || pa.replica != 0;
    plan.max_runs = std::max<unsigned>(plan.max_runs, pa.runs);
  }
  plan.chain_next.assign(plan.actors.size(), kNoActor);
  constexpr std::uint8_t kNotInPlace = ActorHot::kOnDriver | ActorHot::kIsVote | ActorHot::kReplica;
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    const ActorHot& h = plan.hot[a];
    if ((h.flags & kNotInPlace) != 0 || (h.flags & ActorHot::kSmallInner) == 0) continue;
    const PlanData& out = plan.data[h.output];
    if (out.consumer_count != 1) continue;
    const ActorId c = plan.consumers[out.first_consumer];
    const ActorHot& hc = plan.hot[c];
    if (hc.initial_pending != 1 || !plan.only_input(hc, h.output) || (hc.flags & kNotInPlace) != 0 ||
        (hc.flags & (ActorHot::kSmallInner | ActorHot::kDeadInner)) == 0)
      continue;
    plan.chain_next[a] = c;
  }
  plan.heft_chains.assign(plan.heft.tile_order.size(), 0);
  for (std::size_t t = 0; t < plan.heft.tile_order.size(); ++t) {
    const auto& order = plan.heft.tile_order[t];
    std::size_t links = 0;
    for (std::size_t i = 0; i + 1 < order.size(); ++i) links += plan.chain_next[order[i]] == order[i + 1];
    plan.heft_chains[t] = links != 0 && links * 4 >= order.size();
  }
  keep_costs_if_coarse(plan, machine);
  plan.heft.actors.clear();
  plan.heft.actors.shrink_to_fit();
  return plan;
}

}  // namespace redflow::runtime
