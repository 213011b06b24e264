// TileConfiguration: what each tile was sent of a plan and an execution
// request, so that a tile hears it once: the plan's actor table (built once
// per plan for every tile, and kept: a local tile reads names and arguments
// from it until the next plan's) and the fault configuration (sent again
// only when it changed).
//
// Owned by the Engine. Not thread-safe: build() runs before any runner
// starts, and configure(t) only while no thread but the caller talks to
// tile t (before an execution, or t's own runner admitting a worker that
// joined mid-run, which only reads the table).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "redflow/huge_page_allocator.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/status.hpp"
#include "runtime/plan.hpp"
#include "runtime/tile.hpp"

namespace redflow::runtime {

class TileConfiguration {
 public:
  // Nothing sent yet to any of `tiles` tiles (once they exist).
  void reset(unsigned tiles);
  // The actor table of `plan`, for every tile (kept when it is the last plan's).
  void build(const Plan& plan);
  // Tile t (`tile`): the plan's actor table when it holds another's, the
  // fault configuration `spec` (null: none) asks of tile t when it changed.
  // A tile lost meanwhile is no error: its runner finds out.
  Status configure(unsigned t, Tile& tile, const Plan& plan, const FaultInjection* spec);

 private:
  std::vector<std::uint64_t> tile_table_;  // per tile: Plan::id of the actor table it holds (0: none)
  HugePageVector<ActorTableEntry> actor_table_;
  std::vector<std::string_view> actor_functions_;  // the table's distinct function names
  std::uint64_t actor_table_plan_ = 0;
  std::vector<FaultConfigMessage> tile_faults_;  // per tile: the fault configuration it was sent
};

}  // namespace redflow::runtime
