// Tile: the seam between the driver and a compute tile, the paper's protocol
// (section 4.5 of Kühbacher et al.) with every message and answer plain data
// (tile_protocol.hpp): place a data node in a slot (its bytes along, or the
// tile and slot to take them from), clear one slot, clear all slots, read a
// slot back, the actor table and fault configuration once per load, and an
// actor message answered by a completion. The engine holds Tiles, never a
// concrete tile: LocalTile (local_tile.hpp) answers with direct calls on the
// caller's thread, WireTile (wire_tile.hpp) encodes every message and answer
// and hands it to the tile's own executor thread; a tile in a worker process
// (WorkerTile, remote_tiles.hpp) speaks the same frames. A tile that is gone
// answers `lost`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <span>
#include <string>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"
#include "runtime/current_actor.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::runtime {

// Thrown by ActorContext::input_bytes for a port the actor does not have
// (crash_report.cpp): its message names the actor and the port.
class ActorPortError : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

// Calls an actor function; an exception it throws becomes ctx.fail(), so an
// actor's bug stops the execution with its name instead of the process. The
// caller has made ctx the thread's current actor (RunningActor).
[[gnu::always_inline]] inline void call_actor(const ActorFunction& function, ActorContext& ctx) {
  try {
    function(ctx);
  } catch (const ActorPortError& e) {
    ctx.fail(e.what());
  } catch (const std::exception& e) {
    ctx.fail(std::string("threw: ") + e.what());
  } catch (...) {
    ctx.fail("threw a non-standard exception");
  }
}

// call_actor with ctx the current actor while it runs: a crash inside names
// the actor (report_actor_crashes).
inline void invoke_actor(const ActorFunction& function, ActorContext& ctx) {
  RunningActor running(ctx);
  call_actor(function, ctx);
}

// One ActorContext moved along a chain of actors run one after the other on
// one thread (Engine::run_links): each link only points it at the
// next actor, its input and its output, and the thread's current actor is
// set once for the whole chain (a crash report asks the context, which names
// the actor it points at). Not thread-safe: it lives on its runner's stack.
struct ChainedContext {
  static void point_at(ActorContext& ctx, std::uint32_t actor, std::span<const std::span<const std::byte>> inputs,
                       std::span<std::byte> output) {
    ctx.actor_ = actor;
    ctx.inputs_ = inputs;
    ctx.output_ = output;
  }
};

class Tile {
 public:
  virtual ~Tile() = default;
  // The tile's id: what a transfer from it names. (Its slot count and size
  // are the RuntimeOptions the engine made it with; nothing asks the tile.)
  virtual unsigned index() const = 0;
  // The tiles a transfer to this one may name as its source, by id: the
  // engine's tiles, set once before any message and valid for the tile's life.
  virtual void set_peers(std::span<Tile* const> peers) = 0;

  // Once per loaded graph (and again when another graph runs): the actor
  // table, resolved in `registry`, the Registry of the process the tile runs
  // in (an in-process tile shares the loader's; a worker process has its own
  // and ignores this one). The sender keeps the table's entries and the
  // strings they view valid until its next load_actors to this tile, so a
  // tile may keep views into them. Then the fault injection this tile applies.
  virtual Status load_actors(const ActorTableMessage& table, const Registry& registry) = 0;
  virtual Status configure_faults(const FaultConfigMessage& faults) = 0;

  // Not OK when the slot or size is wrong, the source no longer holds the
  // value (NotFound), or the tile is lost (lost() then says so).
  virtual Status data_node(const DataNodeMessage& message) = 0;
  virtual void clear_slot(SlotId slot) = 0;
  virtual void clear_all() = 0;
  virtual Completion actor(const ActorMessage& message) = 0;
  // Copies the value in the slot into `out` (message.bytes == out.size()) if
  // the slot still holds message.tag; false when it does not, or the tile is lost.
  virtual bool read_slot(const ReadSlotMessage& message, std::span<std::byte> out) = 0;

  // The tile is gone (it crashed, or its transport broke) and stays gone.
  virtual bool lost() const = 0;

  // Values to and from this tile cross a process boundary (or are framed as
  // if they did), so they are checked end to end: the engine asks for the
  // checksum of every output it makes and hands the checksums it knows along
  // with every transfer to or from it (DataNodeMessage::checked,
  // ReadSlotMessage::checked), and the side that receives the bytes verifies
  // them. An in-process tile's values never leave memory, so it says false
  // and pays nothing.
  virtual bool checks_values() const { return false; }

  // Pipelining: how many actor messages the engine may have sent
  // before it takes the first completion back. A tile behind a link (a
  // worker process) answers in the order it was sent, so keeping several on
  // the wire hides the round trip; an in-process tile answers at once and
  // says 1, and the engine then only calls actor().
  virtual unsigned pipeline_depth() const { return 1; }
  // Sends an actor message; next_completion() returns the completions in the
  // order the messages were sent. Everything the message's spans point to is
  // copied before send_actor() returns. Data node, clear and read messages
  // sent after it are handled after it. This default runs the actor at once.
  virtual void send_actor(const ActorMessage& message) { answered_.push_back(actor(message)); }
  virtual Completion next_completion() {
    Completion c = std::move(answered_.front());
    answered_.pop_front();
    return c;
  }
  // Speculation: whether the next completion has come (or the
  // tile was lost), waiting at most `timeout_s`; and giving up on it: its
  // answer is dropped when it comes, and next_completion() returns the one
  // after. The default answers at once, so it is always there.
  virtual bool completion_within(double /*timeout_s*/) { return true; }
  virtual void abandon_completion() { answered_.pop_front(); }
  // Deadlines (docs/remote.md): completion `i` not yet taken (0: the
  // oldest) may take `seconds` once the tile starts it (0: no bound of its
  // own) before a tile behind a link is given up as lost. Tiles in this
  // process answer at once and ignore it.
  virtual void bound_completion(std::size_t /*i*/, double /*seconds*/) {}

 private:
  std::deque<Completion> answered_;  // the default send_actor()'s completions, not yet taken
};

}  // namespace redflow::runtime
