// ExecutionTrace: what one execution actually did, recorded when asked
// (ExecuteOptions::trace): every actor execution with its tile and times,
// every transfer between memories, slot occupancy over time, and marks for
// votes that failed, injected faults and quarantines. Times are seconds from
// the start of the execution. Writers for Chrome/Perfetto traces and Gantt
// charts read this; nothing in it is needed to run a graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "redflow/graph.hpp"

namespace redflow {

struct TracedActor {
  ActorId actor = 0;          // in the executed graph (after the redundancy transformation)
  std::string name;           // the executed actor's name (a replica: NAME.r2)
  std::string original;       // the actor of the user's graph it stands for
  int tile = -1;              // kDriverTile (-1) = the driver
  unsigned replica = 0;       // 0 for a plain actor; 1..3 for a replica (diff: graph replica; same: run on the tile)
  unsigned attempt = 0;       // 0 = first execution; >0 = a re-execution after a failed vote
  double start_s = 0, end_s = 0;
  bool stolen = false;        // work stealing: this tile took it from another tile's queue
  bool faulty = false;        // a fault was injected into this execution's output
  // *-same: rounds in which injection flipped the same bit of two runs (they
  // agree on a wrong value: a double fault no vote can catch).
  unsigned alike_flips = 0;
};

struct TracedTransfer {
  std::string data;           // data node name
  int from_tile = -1;         // -1 = main memory (the driver)
  int to_tile = -1;           // -1 = main memory
  std::size_t bytes = 0;
  double start_s = 0, end_s = 0;
};

struct TracedSlots {
  int tile = 0;
  double time_s = 0;
  unsigned used = 0;          // occupied slots after the change at time_s
};

struct TracedMark {
  std::string what;           // "vote-failed", "quarantine", ...
  std::string detail;         // e.g. the actor name or the tile
  int tile = -1;
  double time_s = 0;
};

struct ExecutionTrace {
  unsigned tiles = 0;
  unsigned cores_per_tile = 1;
  unsigned slots = 0;
  std::string scheduler;
  std::string redundancy;
  double makespan_s = 0;
  std::string failure;        // empty, or why the execution failed (it is recorded up to the failure)
  std::vector<TracedActor> actors;
  std::vector<TracedTransfer> transfers;
  std::vector<TracedSlots> slot_use;
  std::vector<TracedMark> marks;
  // Per tile: "WORKER on HOST" for a tile in a worker process, "" for a local one.
  std::vector<std::string> tile_hosts{};
};

}  // namespace redflow
