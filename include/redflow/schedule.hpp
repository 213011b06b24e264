// Schedule: where and in which order actors run. HEFT computes one offline
// when a graph is loaded (Algorithm 2 of Kühbacher et al.: HEFT with a driver
// tile); work stealing decides online and records what happened the same way.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "redflow/graph.hpp"

namespace redflow {

// Tile index of the driver in schedules; compute tiles are 0..tiles-1.
inline constexpr int kDriverTile = -1;

struct ScheduledActor {
  ActorId actor = 0;
  int tile = kDriverTile;
  double start = 0;    // estimated (HEFT) seconds from the start of the execution
  double finish = 0;
};

struct Schedule {
  HugePageVector<ScheduledActor> actors;         // indexed by ActorId
  std::vector<HugePageVector<ActorId>> tile_order;  // per compute tile, in start order (ties: depth-first)
  HugePageVector<ActorId> driver_order;          // actors on the driver, in start order
  double makespan = 0;                           // estimated
};

// The machine HEFT plans for: compute tiles of equal speed and a driver.
struct MachineModel {
  unsigned tiles = 1;
  unsigned cores_per_tile = 1;
  unsigned driver_cores = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  double ops_per_second_per_core = 1e9;   // turns `work` hints into seconds
  double bytes_per_second = 1e10;         // turns data sizes into transfer seconds
  double actor_overhead_s = 0;            // fixed seconds per actor execution (dispatch, slots); 0 = not modelled
  // Fixed seconds per transfer between two processors, on top of its bytes
  // at bytes_per_second: what moving even an empty data node to another
  // tile costs (a message, a slot, and the consumer's tile waiting on
  // another thread: a wake-up when it sleeps). It makes HEFT keep a
  // zero-cost successor with its producer instead of treating tiles as free
  // to switch. The paper's model is silent on it; 5 us is our estimate for
  // local tiles (docs/scheduling.md).
  double transfer_latency_s = 5e-6;
  // Tiles from this index on are worker processes (docs/remote.md). The
  // driver sends such a tile each actor once its inputs are ready and keeps
  // several on the wire, so an actor that reads the actor just before it on
  // its tile waits a round trip to the driver. Those tiles keep HEFT's
  // start-time order, which interleaves independent chains, where an
  // isolated local tile runs depth-first (docs/scheduling.md).
  unsigned first_remote_tile = std::numeric_limits<unsigned>::max();
};

}  // namespace redflow
