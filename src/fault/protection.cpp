// Which actors a redundancy configuration asked to protect but cannot: they
// run once, on the driver, because their data does not fit a tile slot or they
// read more inputs than a tile has slots (Algorithm 2's rule). The driver
// never replicates actors (section 5.1 of the paper), so such an actor's
// result is never voted on; users must hear about it instead of believing
// they are protected.
#include <string>
#include <vector>

#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "schedule/heft.hpp"

namespace redflow {

std::vector<UnprotectedActor> unprotected_actors(const Graph& graph, Redundancy graph_default, const MachineModel& machine,
                                                 const Registry& registry) {
  std::vector<UnprotectedActor> out;
  for (ActorId id = 0; id < graph.actors().size(); ++id) {
    const ActorNode& a = graph.actor(id);
    if (a.redundancy.value_or(graph_default) == Redundancy::kNone) continue;
    // Special actors (split, collect, reorder) only move bytes the voted
    // actors around them computed; they are on the driver by design.
    const ActorSpec* spec = registry.find(a.function);
    if (spec != nullptr && spec->on_driver) continue;
    std::string reason = driver_reason(graph, id, machine, registry);
    if (!reason.empty()) out.push_back({a.name, std::move(reason)});
  }
  return out;
}

std::string describe_unprotected(const std::vector<UnprotectedActor>& actors, Redundancy r) {
  if (actors.empty()) return "";
  std::string text = std::to_string(actors.size()) + " actor(s) run once on the driver, without the protection of redundancy " +
                     to_string(r) + ":";
  for (const UnprotectedActor& a : actors) text += " '" + a.name + "' (" + a.reason + ");";
  text.back() = '.';
  return text;
}

}  // namespace redflow
