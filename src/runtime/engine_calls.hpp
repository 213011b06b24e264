// EngineCalls: what the engine's parts (ReplicaPlacement, Voting,
// MainMemory, SlotDirectory) may ask of the Engine they serve, and nothing
// more: finish an actor (readiness.cpp), fail the execution, mark the trace,
// hand work to a tile's inbox, wake a tile that left service, copy a voted
// output to main memory, reach a tile, its runner or the driver's role,
// recompute a value lost with its tile, and the counters and random state of
// the calling thread (a runner's, or the driver's when `from` is null). Plain
// inline calls on the Engine (defined in engine_job.hpp), no virtual
// dispatch: a vote, a replica's placement and an input's placement are on
// the per-actor path.
//
// Thread-safety: that of the Engine functions it calls, each safe from any
// runner thread and the driver; counts() and rng() belong to the calling thread.
#pragma once

#include <cstdint>
#include <string>

#include "redflow/graph.hpp"
#include "redflow/status.hpp"

namespace redflow {
struct TileStats;
}

namespace redflow::runtime {

class Engine;
struct Job;
struct Runner;
struct RedundancyCounts;
struct TraceBuffer;
class Tile;
struct DriverRole;

class EngineCalls {
 public:
  explicit EngineCalls(Engine& engine) : engine_(engine) {}

  unsigned tiles() const;
  std::string out_of_service() const;
  ActorId complete(Job& job, ActorId a, Runner* from) const;
  void fail(Job& job, std::string message, Status::Code code) const;
  void mark(Job& job, std::string what, std::string detail, int tile) const;
  void push_inbox(unsigned tile, ActorId a) const;
  // The number of actors queued for `tile`, as a replica's placement weighs it.
  std::uint64_t queued(unsigned tile) const;
  // Tile `tile` left service: it wakes to hand its queue on, and idle tiles to take it.
  void wake_to_hand_on(unsigned tile) const;
  void copy_voted_home(Job& job, DataId logical, DataId winner, Runner* from) const;
  // Another run of `a` was booked (SpeculativeCopies).
  bool already_booked(const Job& job, ActorId a) const;
  // For MainMemory and SlotDirectory: tile `t`, its runner, the driver's role, whether `t` is
  // gone, and the recompute of a value that lived only on a lost tile.
  Tile& tile(unsigned t) const;
  Runner& runner(unsigned t) const;
  DriverRole& driver() const;
  bool gone(unsigned t) const;
  bool only_on_lost_tile(const Job& job, DataId d) const;
  bool recompute(Job& job, DataId d, TileStats& stats, TraceBuffer& trace) const;
  // The trace buffer of the thread whose counters are `stats` (a runner's, else the driver's).
  TraceBuffer& trace_of(const TileStats& stats) const;
  RedundancyCounts& counts(Runner* from) const;
  std::uint64_t& rng(Runner* from) const;

 private:
  Engine& engine_;
};

}  // namespace redflow::runtime
