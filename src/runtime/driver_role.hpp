// DriverRole: the driver tile's state for one execution. The thread that
// calls Engine::execute() plays the driver: it runs driver-only and
// oversized actors on main memory, from its queue of ready actors, and
// sleeps on its notifier. Also the per-thread trace records and redundancy
// counts that the driver and every runner keep (merged after the run).
//
// Owned by the Engine, reset by execute() before the runners start.
// Thread-safety: `queue` is under `mutex` (any tile pushes what it made
// ready for the driver); the notifier is thread-safe; stats, rng, trace and
// counts belong to the driver's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/runtime.hpp"
#include "runtime/notifier.hpp"

namespace redflow::runtime {

// Trace records and redundancy counters, kept per thread and merged after the run.
struct RawActor {
  ActorId actor;
  int tile;
  unsigned replica, attempt;
  double start, end;
  bool stolen, faulty;
  unsigned alike_flips;
};
struct RawTransfer {
  DataId data;
  int from, to;
  std::size_t bytes;
  double start, end;
};
struct RawSlots {
  double time;
  unsigned used;
};

// Per-thread trace buffers, merged into the ExecutionTrace after the run.
struct TraceBuffer {
  std::vector<RawActor> actors;
  std::vector<RawTransfer> transfers;
  std::vector<RawSlots> slots;
  void clear() {
    actors.clear();
    transfers.clear();
    slots.clear();
  }
};

// Counters of the redundancy mechanism, per thread.
struct RedundancyCounts {
  std::uint64_t injected = 0, detected = 0, reexecutions = 0;
};

struct DriverRole {
  Notifier notifier;            // the driver waiting for work or for the end
  std::mutex mutex;             // guards `queue`
  std::vector<ActorId> queue;   // ready driver actors
  TileStats stats;
  std::uint64_t rng = 1;
  TraceBuffer trace;
  RedundancyCounts counts;
};

}  // namespace redflow::runtime
