// Helpers of Case: the machine model, step faults, and what a step promises.
#include "case.hpp"

#include "schedule/heft.hpp"

namespace redflow::difftest {

MachineModel machine_of(const RuntimeOptions& o) {
  MachineModel m;
  m.tiles = o.tiles;
  m.cores_per_tile = o.cores_per_tile;
  m.slots = o.slots;
  m.slot_bytes = o.slot_bytes;
  return m;
}

Result<FaultInjection> step_faults(const Step& step, unsigned tiles) {
  FaultInjection f;
  for (const auto& spec : step.inject) REDFLOW_RETURN_IF_ERROR(parse_fault_spec(spec, f));
  REDFLOW_RETURN_IF_ERROR(check_fault_tiles(f, tiles));
  return f;
}

std::string graph_size(const Graph& g) {
  return std::to_string(g.actors().size()) + " actors, " + std::to_string(g.data().size()) + " data nodes";
}

Redundancy effective_redundancy(const Graph& g, ActorId a, Redundancy r, const MachineModel& m, const Registry& reg) {
  if (runs_on_driver(g, a, m, reg)) return Redundancy::kNone;
  return g.actor(a).redundancy.value_or(r);
}

std::uint64_t expected_executions(const Graph& g, Redundancy r, const MachineModel& m, const Registry& reg) {
  std::uint64_t n = 0;
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    const Redundancy e = effective_redundancy(g, a, r, m, reg);
    n += replica_count(e);
  }
  return n;
}

}  // namespace redflow::difftest

#include "actors.hpp"
#include "apps/apps.hpp"

namespace redflow::difftest {

Registry difftest_registry() {
  Registry reg = apps::app_registry();
  register_difftest_actors(reg);
  return reg;
}

}  // namespace redflow::difftest
