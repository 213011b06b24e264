// The redundancy transformation (Fig. 3 of Kühbacher et al.): replicas and
// compare actors for *-diff actors, a per-actor configuration for *-same.
#include <algorithm>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "schedule/heft.hpp"

namespace redflow {

Result<Graph> apply_redundancy(const Graph& graph, Redundancy graph_default, const MachineModel& machine,
                               const Registry& registry) {
  Graph out(graph.name());
  out.set_base_dir(graph.base_dir());
  // The user's names, sorted once on first need. New names cannot collide with
  // each other (node names are unique, and the suffixes differ), only with these.
  std::vector<std::string_view> names;
  auto fresh = [&](const std::string& name) -> Status {
    if (names.empty()) {
      names.reserve(graph.data().size() + graph.actors().size());
      for (const DataNode& d : graph.data()) names.push_back(d.name);
      for (const ActorNode& a : graph.actors()) names.push_back(a.name);
      std::sort(names.begin(), names.end());
    }
    if (std::binary_search(names.begin(), names.end(), std::string_view(name)))
      return Status::InvalidGraph("the redundancy transformation needs the name '" + name +
                                  "' for a replica or compare node, but the graph already uses it");
    return Status::Ok();
  };

  // Data nodes keep their ids, so inputs and outputs are found as before.
  for (const DataNode& d : graph.data()) {
    DataNode copy = d;
    copy.producers.clear();
    copy.consumers.clear();
    out.add_data(std::move(copy));
  }
  for (ActorId id = 0; id < graph.actors().size(); ++id) {
    const ActorNode& a = graph.actor(id);
    const Redundancy r = a.redundancy.value_or(graph_default);
    ActorNode copy = a;
    if (runs_on_driver(graph, id, machine, registry)) {
      // Section 5.1: the driver never runs replicas; it would be the bottleneck.
      if (a.redundancy && *a.redundancy != Redundancy::kNone)
        return Status::InvalidGraph("actor '" + a.name + "' asks for redundancy=" + to_string(*a.redundancy) +
                                    " but runs on the driver (a special actor, or data larger than a slot), which never replicates actors");
      copy.redundancy.reset();
      out.add_actor(std::move(copy));
      continue;
    }
    if (!replicas_on_distinct_tiles(r)) {
      if (r == Redundancy::kNone) {
        copy.redundancy.reset();
      } else {
        copy.redundancy = r;
      }
      out.add_actor(std::move(copy));
      continue;
    }
    // *-diff: NAME.rK writes DATA.rK; NAME.compare votes and writes DATA.
    const DataId output = a.outputs.front();
    const DataNode& o = graph.data(output);
    ActorNode compare;
    compare.name = a.name + ".compare";
    compare.function = "rf.compare";
    compare.outputs = {output};
    compare.extra["compare_of"] = a.name;
    REDFLOW_RETURN_IF_ERROR(fresh(compare.name));
    for (unsigned k = 1; k <= replica_count(r); ++k) {
      DataNode replica_data;
      replica_data.name = o.name + ".r" + std::to_string(k);
      replica_data.kind = DataKind::kInner;
      replica_data.bytes = o.bytes;
      REDFLOW_RETURN_IF_ERROR(fresh(replica_data.name));
      const DataId rd = out.add_data(std::move(replica_data));
      ActorNode replica = a;
      replica.name = a.name + ".r" + std::to_string(k);
      replica.redundancy.reset();
      replica.outputs = {rd};
      replica.extra["replica_of"] = a.name;
      replica.extra["replica"] = std::to_string(k);
      REDFLOW_RETURN_IF_ERROR(fresh(replica.name));
      out.add_actor(std::move(replica));
      compare.inputs.push_back(rd);
    }
    out.add_actor(std::move(compare));
  }
  return out;
}

}  // namespace redflow
