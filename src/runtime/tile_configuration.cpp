// TileConfiguration (tile_configuration.hpp): the actor table and fault
// configuration each tile holds.
#include "runtime/tile_configuration.hpp"

#include <algorithm>
#include <unordered_map>

namespace redflow::runtime {

void TileConfiguration::reset(unsigned tiles) {
  tile_table_.assign(tiles, 0);
  tile_faults_.assign(tiles, FaultConfigMessage{});
}

// Once per plan, for every tile, before any runner starts: runners that
// admit a joining worker mid-run (configure) only read it, and local
// tiles keep views of it until the next plan's.
void TileConfiguration::build(const Plan& plan) {
  if (actor_table_plan_ == plan.id) return;
  // Every tile's table views the one being rebuilt: each must be sent this
  // one, even a tile that last held this plan's and sat out the plans
  // between (out of service, then tested on probation).
  std::fill(tile_table_.begin(), tile_table_.end(), 0);
  actor_table_.resize(plan.actors.size());
  actor_functions_.clear();
  std::unordered_map<std::string_view, std::uint32_t> index;
  std::uint32_t last = 0;
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    const std::string_view f = plan.graph->actor(a).function;
    if (actor_functions_.empty() || f != actor_functions_[last]) {  // graphs use few functions, often in runs
      auto [it, added] = index.emplace(f, static_cast<std::uint32_t>(actor_functions_.size()));
      if (added) actor_functions_.push_back(f);
      last = it->second;
    }
    actor_table_[a] = ActorTableEntry{plan.name(a), plan.args(a), last, plan.actors[a].runs};
  }
  actor_table_plan_ = plan.id;
}

Status TileConfiguration::configure(unsigned t, Tile& tile, const Plan& plan, const FaultInjection* spec) {
  if (tile_table_[t] != plan.id) {
    if (plan.registry == nullptr) return Status::Internal("internal error: a plan without its registry");
    if (actor_table_plan_ != plan.id) return Status::Internal("internal error: the actor table was not built for this plan");
    const Status s = tile.load_actors(ActorTableMessage{static_cast<std::uint32_t>(plan.id), actor_functions_, actor_table_}, *plan.registry);
    tile_table_[t] = s.ok() ? plan.id : 0;
    if (!s.ok() && !tile.lost()) return s;
    // Nothing in its slots belongs to this graph: the directory of the graph
    // that ran before is not this one's, so the slots start empty.
    tile.clear_all();
  }
  FaultConfigMessage f;
  if (spec != nullptr) {
    f.bitflip_probability = spec->bitflip_probability;
    f.seed = spec->seed;
    for (unsigned x : spec->faulty_tiles) f.faulty = f.faulty || x == t;
    for (const auto& [x, factor] : spec->slow_tiles)
      if (x == t) f.slow_factor = std::max(f.slow_factor, factor);
    for (const auto& [x, after] : spec->crash_tiles)
      if (x == t) f.crash_after = std::min(f.crash_after, after);
  }
  if (!(f == tile_faults_[t])) {
    const Status s = tile.configure_faults(f);
    if (!s.ok() && !tile.lost()) return s;
    tile_faults_[t] = f;
  }
  return Status::Ok();
}

}  // namespace redflow::runtime
