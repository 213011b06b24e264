// Slots and main memory: placing an actor's inputs in its tile's slots,
// choosing a slot (displacing a live value if need be), and writing values
// back to main memory.
//
// A value is named by (execution, data node, voting round) everywhere: in a
// slot's tag, in the tile directory, and in main memory's validity word. A
// *-diff replica that is re-executed after a failed vote produces a new value
// of the same data node; copies of the rejected one may linger in slots and
// in main memory (written back when their slot was displaced), and because
// the round is part of their name, nothing can ever hand them out again.
#include <cstring>
#include <string>
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

bool Engine::home_valid(const Job& job, DataId d, std::uint32_t round) const {
  return job.state->home_state[d].load(std::memory_order_acquire) == home_word(round, kHomeValid);
}

// Waits while some thread writes `d`'s main-memory copy (of any round).
static void wait_for_home_writer(const GraphState& s, DataId d) {
  while (home_state_of(s.home_state[d].load(std::memory_order_acquire)) == kHomeWriting) std::this_thread::yield();
}

bool Engine::ensure_home(Job& job, DataId d) {
  const std::uint32_t round = job.round_of(d);
  if (home_valid(job, d, round)) return true;
  const std::uint64_t loc = job.state->location[d].load(std::memory_order_acquire);
  if (loc == kNowhere) return false;
  const unsigned t = static_cast<unsigned>(loc >> 32);
  write_home(job, DataTag{job.execution, d, round}, *tiles_[t], static_cast<SlotId>(loc & 0xffffffffu), driver_stats_);
  return home_valid(job, d, round);
}

// Copies the value `tag` from a slot to main memory, unless main memory
// already has it or a later round of the node (the value is then stale and
// nobody needs it). The writing state is a lock on the node's buffer.
void Engine::write_home(Job& job, DataTag tag, LocalTile& tile, SlotId slot, TileStats& stats) {
  GraphState& s = *job.state;
  const DataId d = tag.data;
  std::uint32_t word = s.home_state[d].load(std::memory_order_acquire);
  for (;;) {
    if (home_round(word) > tag.round || word == home_word(tag.round, kHomeValid)) return;
    if (home_state_of(word) == kHomeWriting) {
      std::this_thread::yield();
      word = s.home_state[d].load(std::memory_order_acquire);
      continue;
    }
    if (s.home_state[d].compare_exchange_weak(word, home_word(tag.round, kHomeWriting), std::memory_order_acq_rel)) break;
  }
  const std::size_t bytes = job.plan->data[d].bytes;
  const double start = job.tracing ? job.now() : 0;
  const bool ok = tile.read_slot(slot, tag, std::span<std::byte>(s.home_write[d], bytes));
  s.home_state[d].store(home_word(tag.round, ok ? kHomeValid : kHomeInvalid), std::memory_order_release);
  if (!ok) return;
  ++stats.transfers_in;
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) {
    // Recorded by the thread that moved the bytes: the tile's own runner, or the driver.
    TraceBuffer& buffer = &stats == &driver_stats_ ? driver_trace_->buffer : runners_[tile.index()]->trace;
    buffer.transfers.push_back(RawTransfer{d, static_cast<int>(tile.index()), kDriverTile, bytes, start, job.now()});
  }
}

bool Engine::allocate_slot(Runner& r, Job& job, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  const auto& data = job.plan->data;
  // Cost of reusing a slot: 0 free or dead, 1 droppable (main memory has it), 2 needs a write-back.
  int best = -1, best_cost = 3;
  std::uint64_t best_use = ~std::uint64_t{0};
  for (SlotId i = 0; i < dir.held.size(); ++i) {
    if (dir.stamp[i] == r.clock) continue;  // holds an input or output of the actor being placed
    int cost;
    if (!dir.occupied[i] || dir.held[i].execution != job.execution) {
      cost = 0;
    } else {
      const DataTag held = dir.held[i];
      // Dead: no consumer left, or a replica result a re-execution superseded.
      const bool dead = (s.remaining[held.data].load(std::memory_order_acquire) == 0 && data[held.data].kind == DataKind::kInner) ||
                        held.round != job.round_of(held.data);
      cost = dead ? 0 : (home_valid(job, held.data, held.round) ? 1 : 2);
    }
    if (cost < best_cost || (cost == best_cost && dir.last_use[i] < best_use)) {
      best = static_cast<int>(i);
      best_cost = cost;
      best_use = dir.last_use[i];
      if (cost == 0 && !dir.occupied[i]) break;
    }
  }
  if (best < 0) return false;
  slot = static_cast<SlotId>(best);
  if (dir.occupied[slot]) {
    const DataTag old = dir.held[slot];
    if (old.execution == job.execution) {
      if (best_cost == 2) {
        write_home(job, old, *r.tile, slot, r.stats);
        ++r.stats.displacements;
      }
      if (dir.slot_of[old.data] == static_cast<std::int32_t>(slot)) dir.slot_of[old.data] = -1;
    } else if (old.data < dir.slot_of.size() && dir.slot_of[old.data] == static_cast<std::int32_t>(slot)) {
      dir.slot_of[old.data] = -1;
    }
    r.tile->clear_slot(slot);
    dir.occupied[slot] = false;
  }
  dir.stamp[slot] = r.clock;
  dir.last_use[slot] = r.clock;
  return true;
}

bool Engine::place_input(Runner& r, Job& job, DataId d, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  const DataTag tag{job.execution, d, job.round_of(d)};
  const std::int32_t held = dir.slot_of[d];
  if (held >= 0 && dir.occupied[held] && dir.held[held] == tag) {
    slot = static_cast<SlotId>(held);
    dir.stamp[slot] = r.clock;
    dir.last_use[slot] = r.clock;
    return true;
  }
  if (!allocate_slot(r, job, slot)) return false;
  const std::size_t bytes = job.plan->data[d].bytes;
  DataNodeMessage m;
  m.tag = tag;
  m.slot = slot;
  m.bytes = bytes;
  bool placed = false;
  int from = kDriverTile;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
  if (loc != kNowhere && static_cast<unsigned>(loc >> 32) != r.index) {
    // Tile-to-tile transfer: fetch from the producer's slot (refused unless it holds this very value).
    m.from_tile = tiles_[loc >> 32].get();
    m.from_slot = static_cast<SlotId>(loc & 0xffffffffu);
    placed = r.tile->data_node(m).ok();
    m.from_tile = nullptr;
    from = static_cast<int>(loc >> 32);
  }
  if (!placed) {
    // Driver-to-tile transfer from main memory; the producer's copy was displaced, so main memory has it.
    from = kDriverTile;
    wait_for_home_writer(s, d);
    if (!home_valid(job, d, tag.round)) {
      fail(job, "internal error: data node '" + job.plan->graph->data(d).name + "' is in no memory");
      return false;
    }
    m.payload = s.home[d];
    if (Status st = r.tile->data_node(m); !st.ok()) {
      fail(job, "transfer of data node '" + job.plan->graph->data(d).name + "' failed: " + st.message());
      return false;
    }
  }
  ++r.stats.transfers_in;
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) r.trace.transfers.push_back(RawTransfer{d, from, static_cast<int>(r.index), bytes, start, job.now()});
  dir.held[slot] = tag;
  dir.occupied[slot] = true;
  dir.slot_of[d] = static_cast<std::int32_t>(slot);
  return true;
}

// Copies the confirmed replica's bytes to main memory for an output node.
void Engine::copy_voted_home(Job& job, DataId logical, DataId winner, TileStats& stats) {
  GraphState& s = *job.state;
  const std::size_t bytes = job.plan->data[logical].bytes;
  const DataTag tag{job.execution, winner, job.round_of(winner)};
  std::span<std::byte> dst(s.home_write[logical], bytes);
  bool ok = false;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[winner].load(std::memory_order_acquire);
  if (loc != kNowhere) ok = tiles_[loc >> 32]->read_slot(static_cast<SlotId>(loc & 0xffffffffu), tag, dst);
  if (!ok) {
    // Displaced meanwhile, so written back: copy from main memory.
    wait_for_home_writer(s, winner);
    if (!home_valid(job, winner, tag.round)) {
      fail(job, "internal error: confirmed data node '" + job.plan->graph->data(winner).name + "' is in no memory");
      return;
    }
    if (bytes != 0) std::memcpy(dst.data(), s.home[winner].data(), bytes);
  }
  ++stats.transfers_in;
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) {
    // Counted above, so traced too: stats and trace must agree on the transfers. Recorded by the calling thread.
    TraceBuffer* buffer = &driver_trace_->buffer;
    for (auto& r : runners_)
      if (&stats == &r->stats) buffer = &r->trace;
    buffer->transfers.push_back(RawTransfer{logical, ok ? static_cast<int>(loc >> 32) : kDriverTile, kDriverTile, bytes, start, job.now()});
  }
  s.home[logical] = dst;
  s.home_state[logical].store(home_word(0, kHomeValid), std::memory_order_release);
}

}  // namespace redflow::runtime
