// SlotDirectory (slot_directory.hpp): placing an actor's inputs in its
// tile's slots and choosing a slot for a new value.
//
// A value is named by (execution, data node, voting round) everywhere: in a
// slot's tag, in the tile directory, and in main memory's validity word. A
// *-diff replica that is re-executed after a failed vote produces a new value
// of the same data node; copies of the rejected one may linger in slots and
// in main memory (written back when their slot was displaced), and because
// the round is part of their name, nothing can ever hand them out again.
#include <bit>
#include <string>

#include "runtime/slot_directory.hpp"

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

void SlotDirectory::prepare(GraphState& s, std::size_t tiles, std::size_t slots) {
  s.dirs.resize(tiles);
  for (auto& dir : s.dirs) {
    dir.slot_of.reset(slots);
    dir.held.assign(slots, DataTag{});
    dir.occupied_bits.assign((slots + 63) / 64, 0);
    dir.last_use.assign(slots, 0);
    dir.stamp.assign(slots, 0);
  }
}

// Free, or holding what nobody needs any more: no consumer left, a replica
// result a re-execution superseded, or a value of an earlier execution.
bool SlotDirectory::reusable(const Job& job, const GraphState::TileDirectory& dir, SlotId i) {
  if (!dir.occupied(i) || dir.held[i].execution != job.execution) return true;
  const DataTag held = dir.held[i];
  return (job.state->remaining[held.data].load(std::memory_order_acquire) == 0 && job.plan->data[held.data].kind == DataKind::kInner) ||
         held.round != job.round_of(held.data);
}

bool SlotDirectory::allocate(Runner& r, Job& job, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  // A free slot from the bitmap, if any (not one the actor being placed, or one in flight, already took).
  const SlotId slots = static_cast<SlotId>(dir.held.size());
  for (std::size_t w = 0; w < dir.occupied_bits.size(); ++w) {
    for (std::uint64_t free = ~dir.occupied_bits[w]; free != 0; free &= free - 1) {
      const SlotId i = static_cast<SlotId>(w * 64 + static_cast<unsigned>(std::countr_zero(free)));
      if (i >= slots) break;
      if (dir.stamp[i] >= r.pinned_from) continue;
      slot = i;
      dir.stamp[slot] = r.clock;
      dir.last_use[slot] = r.clock;
      forget_emptied(r, slot);
      return true;
    }
  }
  // Cost of reusing a slot: 0 dead, 1 droppable (main memory has it), 2 needs a write-back.
  int best = -1, best_cost = 3;
  std::uint64_t best_use = ~std::uint64_t{0};
  for (SlotId i = 0; i < slots; ++i) {
    // Holds an input or output of the actor being placed, or of one still in
    // flight to a pipelined tile (stamped since the oldest of them was sent).
    if (dir.stamp[i] >= r.pinned_from) continue;
    const int cost = reusable(job, dir, i) ? 0 : (memory_.valid(job, dir.held[i].data, dir.held[i].round) ? 1 : 2);
    if (cost < best_cost || (cost == best_cost && dir.last_use[i] < best_use)) {
      best = static_cast<int>(i);
      best_cost = cost;
      best_use = dir.last_use[i];
      if (cost == 0 && !dir.occupied(i)) break;
    }
  }
  if (best < 0) return false;
  slot = static_cast<SlotId>(best);
  if (dir.occupied(slot)) {
    const DataTag old = dir.held[slot];
    if (old.execution == job.execution && best_cost == 2) {
      memory_.write(job, old, *r.tile, slot, r.stats);
      ++r.stats.displacements;
    }
    dir.unindex(old.data, slot);
    r.tile->clear_slot(slot);
    dir.release(slot);
  }
  dir.stamp[slot] = r.clock;
  dir.last_use[slot] = r.clock;
  forget_emptied(r, slot);
  return true;
}

// A slot a failed fetch emptied (Runner::emptied) that is handed out again
// holds the new value once it is placed: an actor refused later must not
// count it among the inputs that fetch took away, or the directory would
// forget a value the worker holds (and place it again, or find it nowhere).
// Actors still in flight that read the slot as emptied are pinned, so it is
// never handed out under them.
void SlotDirectory::forget_emptied(Runner& r, SlotId slot) {
  if (!r.emptied.empty()) std::erase(r.emptied, slot);
}

bool SlotDirectory::place_input(Runner& r, Job& job, ActorId a, DataId d, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  const DataTag tag{job.execution, d, job.round_of(d)};
  if (const std::int32_t held = dir.slot_holding(tag); held >= 0) {
    slot = static_cast<SlotId>(held);
    dir.stamp[slot] = r.clock;
    dir.last_use[slot] = r.clock;
    return true;
  }
  const std::size_t bytes = job.plan->data[d].bytes;
  if (job.plain && (bytes == 0 || memory_.valid(job, d, 0))) {
    // The fast path reads main memory in place (a local tile can; data is
    // immutable within an execution), and a 0-byte value needs nothing: no
    // slot, no transfer (run_plain takes the bytes from GraphState::home).
    slot = kNoSlot;
    return true;
  }
  if (!allocate(r, job, slot)) return false;
  DataNodeMessage m;
  m.tag = tag;
  m.slot = slot;
  m.bytes = bytes;
  m.checked = memory_.known_checksum(job, tag, m.checksum);
  bool placed = false;
  int from = kDriverTile;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
  if (loc != kNowhere && static_cast<unsigned>(loc >> 32) != r.index && !r.relaying) {
    // Tile-to-tile transfer: fetch from the producer's slot (refused unless it holds this very value).
    m.source_tile = static_cast<std::int32_t>(loc >> 32);
    m.source_slot = static_cast<SlotId>(loc & 0xffffffffu);
    placed = r.tile->data_node(m).ok();
    m.source_tile = kFromDriver;
    from = static_cast<int>(loc >> 32);
  }
  if (!placed && r.tile->lost()) return false;  // this tile died: the caller hands the actor on
  if (!placed) {
    // Driver-to-tile transfer from main memory; the producer's copy was displaced, so main memory has it
    // (or its tile was lost, and it is recomputed there now).
    from = kDriverTile;
    wait_for_home_writer(s, d);
    if (!memory_.valid(job, d, tag.round) && loc != kNowhere && !engine_.gone(static_cast<unsigned>(loc >> 32))) {
      // The producer still holds it, but the copy from its slot failed (its
      // bytes did not match their checksum on the way, or a relay found the
      // slot busy): the driver reads it back, checked, and sends it from there.
      memory_.write(job, tag, engine_.tile(static_cast<unsigned>(loc >> 32)), static_cast<SlotId>(loc & 0xffffffffu), r.stats, &r.trace);
    }
    // Its only copy was on a tile now lost, or the producer's tile, alive,
    // could not give it back (the read-back was refused: its slot no longer
    // held this value): either way its producer runs again on the driver,
    // as for a lost tile, rather than the execution failing with the value
    // "in no memory".
    if (!memory_.valid(job, d, tag.round) && loc != kNowhere && (engine_.only_on_lost_tile(job, d) || !engine_.already_booked(job, a)))
      engine_.recompute(job, d, r.stats, r.trace);
    if (!memory_.valid(job, d, tag.round)) {
      // Another run of `a` (a speculative copy, or the original it copies)
      // was booked while the inputs were being placed here, and freed the
      // ones it was the last to read: this run is not needed any more.
      if (engine_.already_booked(job, a)) return false;
      engine_.fail(job, "internal error: data node '" + job.plan->graph->data(d).name + "' is in no memory", Status::Code::kInternal);
      return false;
    }
    m.payload = s.home[d];
    // What main memory holds may have been recomputed after a loss: the
    // transport hashes the bytes it sends rather than trust the producer's.
    m.checked = false;
    if (Status st = r.tile->data_node(m); !st.ok()) {
      if (r.tile->lost()) return false;
      engine_.fail(job, "transfer of data node '" + job.plan->graph->data(d).name + "' failed: " + st.message(), Status::Code::kInternal);
      return false;
    }
  }
  ++r.stats.transfers_in;
  r.transfer_bytes += bytes;
  if (job.tracing) r.trace.transfers.push_back(RawTransfer{d, from, static_cast<int>(r.index), bytes, start, job.now()});
  dir.held[slot] = tag;
  dir.occupy(slot);
  dir.index(d, slot);
  return true;
}

}  // namespace redflow::runtime
