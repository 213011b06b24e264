// Flattening a validated graph into the arrays the engine runs on.
#include "runtime/plan.hpp"

#include "schedule/heft.hpp"

namespace redflow::runtime {

Plan make_plan(const Graph& graph, const Registry& registry, const MachineModel& machine, Schedule heft, Redundancy same_default) {
  Plan plan;
  plan.graph = &graph;
  plan.heft = std::move(heft);
  plan.data.resize(graph.data().size());
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
  for (ActorId a = 0; a < graph.actors().size(); ++a) {
    const ActorNode& node = graph.actor(a);
    const ActorSpec* spec = registry.find(node.function);
    PlanActor& pa = plan.actors[a];
    pa.function = spec ? &spec->function : nullptr;
    pa.name = node.name;
    pa.args = node.args;
    pa.first_input = static_cast<std::uint32_t>(plan.inputs.size());
    pa.input_count = static_cast<std::uint32_t>(node.inputs.size());
    for (DataId d : node.inputs) {
      plan.inputs.push_back(d);
      if (!graph.data(d).producers.empty()) ++pa.initial_pending;
    }
    pa.output = node.outputs.front();
    pa.on_driver = runs_on_driver(graph, a, machine, registry);
    if (a < plan.heft.actors.size()) pa.heft_tile = plan.heft.actors[a].tile;
    if (spec != nullptr && pa.on_driver) {
      pa.alias = spec->alias;
      pa.alias_offset = ActorContext::find_arg_u64(node.args, "offset").value_or(0);
    }
    pa.is_vote = spec != nullptr && spec->alias == ActorAlias::kVote;
    const Redundancy own = node.redundancy.value_or(same_default);
    pa.runs = static_cast<std::uint8_t>(!pa.on_driver && !replicas_on_distinct_tiles(own) ? replica_count(own) : 1);
    if (pa.is_vote) pa.alias = ActorAlias::kNone;  // voted on checksums, never run as a driver actor
    auto of = node.extra.find(pa.is_vote ? "compare_of" : "replica_of");
    pa.original = of != node.extra.end() ? std::string_view(of->second) : std::string_view(node.name);
    plan.max_runs = std::max<unsigned>(plan.max_runs, pa.runs);
    if (pa.initial_pending == 0 && !pa.is_vote) plan.initially_ready.push_back(a);
    plan.max_inputs = std::max<std::size_t>(plan.max_inputs, node.inputs.size());
  }
  // Replicas: the producers of a compare actor's inputs, numbered by port.
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    PlanActor& pa = plan.actors[a];
    if (!pa.is_vote) continue;
    for (std::uint32_t i = 0; i < pa.input_count; ++i) {
      const ActorId r = plan.data[plan.inputs[pa.first_input + i]].producer;
      if (r == kNoActor) continue;
      plan.actors[r].vote = a;
      plan.actors[r].replica = static_cast<std::uint8_t>(i + 1);
    }
  }
  for (const PlanActor& pa : plan.actors) plan.redundant = plan.redundant || pa.runs > 1 || pa.replica != 0;
  return plan;
}

}  // namespace redflow::runtime
