// Tile: the seam between the driver and a compute tile, exactly the paper's
// protocol (section 4.5 of Kühbacher et al.): a data node message (place a
// data node in a slot, with its bytes or with the tile and slot to fetch them
// from), clear one slot, clear all slots, and an actor message answered by a
// completion that carries the checksum of the output. An in-process tile
// implements it with direct calls (LocalTile); a remote tile will implement it
// with messages to a worker process. Nothing above this interface knows which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::fault {
class FaultInjector;
}

namespace redflow::runtime {

using SlotId = std::uint32_t;
// No slot: a 0-byte value on the local fast path needs none (nothing to hold or move).
inline constexpr SlotId kNoSlot = ~SlotId{0};

// Identifies one value of a data node: data is immutable, so (execution,
// data, round) names it everywhere, in any slot of any tile. The round is the
// voting round of a *-diff replica's result (0 otherwise): a re-execution
// after a failed vote makes a new value, and a copy of the rejected one must
// never pass for it.
struct DataTag {
  std::uint32_t execution = 0;
  DataId data = 0;
  std::uint32_t round = 0;
  friend bool operator==(const DataTag&, const DataTag&) = default;
};

class Tile;

struct DataNodeMessage {
  DataTag tag;
  SlotId slot = 0;
  std::size_t bytes = 0;
  // Either the driver sends the bytes along ...
  std::span<const std::byte> payload;
  // ... or the tile fetches them from another tile's slot (payload empty).
  Tile* from_tile = nullptr;
  SlotId from_slot = 0;
};

struct ActorMessage {
  ActorId actor = 0;
  std::uint32_t execution = 0;
  const ActorFunction* function = nullptr;
  std::string_view name;
  std::string_view args;
  std::span<const SlotId> input_slots;   // by port
  SlotId output_slot = 0;
  DataTag output_tag;
  std::size_t output_bytes = 0;
  bool want_checksum = false;            // redundancy and remote transfers need one; plain local runs do not
  // *-same redundancy (section 5.2): run the actor `runs` times back to back,
  // into output_slot and extra_output_slots, keep a result two runs agree on,
  // and re-run up to max_rounds times on the tile's own when none agree.
  unsigned runs = 1;
  std::span<const SlotId> extra_output_slots;
  unsigned max_rounds = 1;
  // Fault injection (--inject): applied to each run's output before its checksum.
  const fault::FaultInjector* faults = nullptr;
  std::uint64_t fault_execution = 0;
  unsigned replica = 0;                  // *-diff replica number, for the fault key
  unsigned attempt = 0;                  // re-execution number, for the fault key
};

struct Completion {
  ActorId actor = 0;
  bool ok = true;
  std::string error;        // when !ok: what the actor reported
  bool actor_failed = false;  // when !ok: the actor's own ctx.fail() (else a protocol error)
  std::uint64_t checksum = 0;  // XXH3-64 of the output, when asked for
  double seconds = 0;
  double checksum_seconds = 0;  // of `seconds`, spent computing checksums
  SlotId output_slot = 0;   // the slot holding the kept result (*-same: the one voted for)
  bool agreed = true;       // *-same: some two runs agreed (false: every round disagreed)
  unsigned executions = 0;  // runs performed, all rounds
  unsigned rejected = 0;    // *-same: runs whose result differed from the kept one
  unsigned injected = 0;    // runs whose output fault injection corrupted
  std::vector<std::uint64_t> unconfirmed;  // !agreed: every run's checksum, for counting later once a result is confirmed
};

// Calls an actor function; an exception it throws becomes ctx.fail(), so an
// actor's bug stops the execution with its name instead of the process.
inline void invoke_actor(const ActorFunction& function, ActorContext& ctx) {
  ActorCrashScope crash_scope(ctx.actor_name());  // a crash inside names the actor (report_actor_crashes)
  try {
    function(ctx);
  } catch (const std::exception& e) {
    ctx.fail(std::string("threw: ") + e.what());
  } catch (...) {
    ctx.fail("threw a non-standard exception");
  }
}

class Tile {
 public:
  virtual ~Tile() = default;
  virtual unsigned slot_count() const = 0;
  virtual std::size_t slot_bytes() const = 0;
  virtual unsigned cores() const = 0;

  virtual Status data_node(const DataNodeMessage& message) = 0;
  virtual void clear_slot(SlotId slot) = 0;
  virtual void clear_all() = 0;
  virtual Completion actor(const ActorMessage& message) = 0;

  // Copies the value held in `slot` into `out` if the slot still holds `tag`
  // (the driver pulling data back, or another tile fetching it). Returns false
  // when the slot has been cleared or reused meanwhile.
  virtual bool read_slot(SlotId slot, DataTag tag, std::span<std::byte> out) = 0;
};

}  // namespace redflow::runtime
