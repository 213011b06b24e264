// MainMemory (main_memory.hpp): main memory's layout (section 4.4 of
// Kühbacher et al.) and the moves of values between tiles' slots and the
// homes. Values come back from tiles here (write) and go to the driver's
// actors from here (ensure).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "runtime/main_memory.hpp"

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

// Gives every inner and output node its place in main memory. Zero-copy for
// the paper's special actors: an inner node read only by a collect (once) is
// placed inside the collect's output, so writing it back is the collect; a
// split's output is a range of the split's input (zero-copy) when the range
// is aligned, and is copied to a home of its own when not (run_on_driver).
void MainMemory::assign(const Plan& plan, GraphState& s) {
  const std::size_t data = plan.data.size();
  constexpr DataId kNoParent = ~DataId{0};
  HugePageVector<DataId> parent(data, kNoParent);
  HugePageVector<std::size_t> offset(data, 0);
  // Every node gets a home, a split's output too: whether its range will be
  // aligned is known only when it runs (its input may itself be a range, or
  // a caller's buffer), and a home costs address space only (calloc) until
  // the driver copies a misaligned range there.
  std::vector<bool> own(data, false);
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    if (plan.actors[a].alias != ActorAlias::kConcatenation) continue;
    const ActorHot& hot = plan.hot[a];
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < hot.input_count; ++i) {
      const DataId d = plan.inputs[hot.first_input + i];
      const PlanData& pd = plan.data[d];
      const bool once = pd.consumer_count == 1;
      if (pd.kind == DataKind::kInner && once && parent[d] == kNoParent) {
        parent[d] = hot.output;
        offset[d] = at;
      }
      at += pd.bytes;
    }
  }
  // Resolve chains (a collect feeding a collect) from the outermost buffer
  // in, as offsets into one allocation made once every size is known.
  constexpr std::size_t kNone = ~std::size_t{0};
  HugePageVector<std::size_t> base(data, kNone);
  std::vector<bool> resolved(data, false);
  std::size_t total = 0;
  auto resolve = [&](auto&& self, DataId d) -> std::size_t {
    if (resolved[d]) return base[d];
    resolved[d] = true;
    const PlanData& pd = plan.data[d];
    if (pd.kind != DataKind::kInner && pd.kind != DataKind::kOutput) return base[d] = kNone;
    if (parent[d] != kNoParent) {
      const std::size_t outer = self(self, parent[d]);
      if (outer != kNone) return base[d] = outer + offset[d];
    }
    own[d] = true;
    if (pd.bytes == 0) return base[d] = kNone;
    const std::size_t align = pd.bytes >= 64 ? 64 : 16;
    base[d] = (total + align - 1) / align * align;
    total = base[d] + pd.bytes;
    return base[d];
  };
  for (DataId d = 0; d < data; ++d) resolve(resolve, d);
  std::byte* arena = nullptr;
  if (total > 0) {
    s.arena.reset(static_cast<std::byte*>(std::calloc(total + 64, 1)));
    if (s.arena == nullptr) throw std::bad_alloc();
    arena = s.arena.get() + (64 - reinterpret_cast<std::uintptr_t>(s.arena.get()) % 64) % 64;
  }
  for (DataId d = 0; d < data; ++d) {
    s.home_write[d] = base[d] == kNone ? nullptr : arena + base[d];
    if (s.home_write[d] != nullptr) s.home[d] = {s.home_write[d], plan.data[d].bytes};
  }
  s.write_through.assign(data, 0);
  for (DataId d = 0; d < data; ++d) {
    const PlanData& pd = plan.data[d];
    if (pd.kind == DataKind::kOutput) {
      s.outputs.push_back(d);
      s.own_output.push_back(own[d] ? s.home_write[d] : nullptr);
    }
    if (pd.kind == DataKind::kInput || pd.kind == DataKind::kConstant) s.given.push_back(d);
    if (own[d] || base[d] == kNone) continue;
    DataId root = parent[d];
    while (!own[root]) root = parent[root];
    if (plan.data[root].kind == DataKind::kOutput) s.nested_in_output.push_back({root, d, base[d] - base[root]});
  }
  for (DataId d = 0; d < data; ++d) {
    const PlanData& pd = plan.data[d];
    if (pd.kind != DataKind::kInner || pd.consumer_count == 0 || s.home_write[d] == nullptr) continue;
    bool driver_only = true;
    for (std::uint32_t i = 0; i < pd.consumer_count && driver_only; ++i) driver_only = plan.actors[plan.consumers[pd.first_consumer + i]].on_driver;
    s.write_through[d] = driver_only;
  }
}

// Where this execution's outputs go: the caller's buffers (output_to[i] not
// null, for output s.outputs[i]) or main memory's own, with the collect
// inputs nested in them.
void MainMemory::place_outputs(GraphState& s, std::span<std::byte* const> output_to) {
  for (std::size_t i = 0; i < s.outputs.size(); ++i) {
    const DataId d = s.outputs[i];
    if (s.own_output[i] == nullptr) continue;  // 0 bytes: nothing of its own
    std::byte* to = output_to.empty() ? nullptr : output_to[i];
    s.home_write[d] = to != nullptr ? to : s.own_output[i];
    s.home[d] = {s.home_write[d], s.home[d].size()};  // an owning output's home always spans all its bytes
  }
  for (const GraphState::Nested& n : s.nested_in_output) {
    // The root's place was set just above (its own buffer or the caller's).
    s.home_write[n.node] = s.home_write[n.root] + n.offset;
    s.home[n.node] = {s.home_write[n.node], s.home[n.node].size()};
  }
}

bool MainMemory::known_checksum(const Job& job, DataTag tag, std::uint64_t& sum) const {
  GraphState& s = *job.state;
  if (s.checksum_of.empty()) return false;
  // A value of an earlier voting round (a displaced copy written back while
  // its replica runs again) has no checksum kept: only the latest round's is.
  if (tag.round != job.round_of(tag.data)) return false;
  // Atomic: a recompute after a loss may forget the checksum, and a replica
  // of a later round may set it, while another runner reads it.
  const std::uint32_t of = std::atomic_ref<std::uint32_t>(s.checksum_of[tag.data]).load(std::memory_order_acquire);
  if (of != job.execution + 1) return false;
  sum = std::atomic_ref<std::uint64_t>(s.checksum[tag.data]).load(std::memory_order_relaxed);
  return true;
}

bool MainMemory::ensure(Job& job, DataId d) {
  const std::uint32_t round = job.round_of(d);
  if (valid(job, d, round)) return true;
  const std::uint64_t loc = job.state->location[d].load(std::memory_order_acquire);
  if (loc == kNowhere) return false;
  const unsigned t = static_cast<unsigned>(loc >> 32);
  DriverRole& driver = engine_.driver();
  if (!engine_.gone(t)) write(job, DataTag{job.execution, d, round}, engine_.tile(t), static_cast<SlotId>(loc & 0xffffffffu), driver.stats);
  if (!valid(job, d, round) && engine_.gone(t)) return engine_.recompute(job, d, driver.stats, driver.trace);
  return valid(job, d, round);
}

// Copies the value `tag` from a slot to main memory, unless main memory
// already has it or a later round of the node (the value is then stale and
// nobody needs it). The writing state is a lock on the node's buffer.
void MainMemory::write(Job& job, DataTag tag, Tile& tile, SlotId slot, TileStats& stats, TraceBuffer* trace) {
  GraphState& s = *job.state;
  const DataId d = tag.data;
  std::uint32_t word = s.home_state[d].load(std::memory_order_acquire);
  for (;;) {
    if (home_round(word) > tag.round || word == home_word(tag.round, kHomeValid)) return;
    if (home_state_of(word) == kHomeWriting) {
      word = wait_while(s.home_state[d], word);
      continue;
    }
    if (s.home_state[d].compare_exchange_weak(word, home_word(tag.round, kHomeWriting), std::memory_order_acq_rel)) break;
  }
  const std::size_t bytes = job.plan->data[d].bytes;
  const double start = job.tracing ? job.now() : 0;
  ReadSlotMessage read{slot, tag, bytes};
  read.checked = known_checksum(job, tag, read.checksum);
  const bool ok = tile.read_slot(read, std::span<std::byte>(s.home_write[d], bytes));
  s.home_state[d].store(home_word(tag.round, ok ? kHomeValid : kHomeInvalid), std::memory_order_release);
  s.home_state[d].notify_all();  // wait_while() sleepers
  if (!ok) return;
  // Into main memory: the driver's transfer when it pulled the value, the tile's write-back otherwise.
  DriverRole& driver = engine_.driver();
  if (&stats == &driver.stats) {
    ++stats.transfers_in;
    transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    ++stats.transfers_out;  // a write-back into main memory, counted by the runner that did it
    Runner& own = engine_.runner(tile.index());
    if (&stats == &own.stats) {
      own.transfer_bytes += bytes;  // the tile's own runner: its unshared counter
    } else {
      transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);  // another runner (a lost tile's recompute) pulled it
    }
  }
  if (job.tracing) {
    // Recorded by the thread that moved the bytes: the tile's own runner, or the driver.
    TraceBuffer& buffer = trace != nullptr ? *trace : &stats == &driver.stats ? driver.trace : engine_.runner(tile.index()).trace;
    buffer.transfers.push_back(RawTransfer{d, static_cast<int>(tile.index()), kDriverTile, bytes, start, job.now()});
  }
}

// Copies the confirmed replica's bytes to main memory for an output node.
void MainMemory::copy_voted(Job& job, DataId logical, DataId winner, TileStats& stats) {
  GraphState& s = *job.state;
  const std::size_t bytes = job.plan->data[logical].bytes;
  const DataTag tag{job.execution, winner, job.round_of(winner)};
  std::span<std::byte> dst(s.home_write[logical], bytes);
  bool ok = false;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[winner].load(std::memory_order_acquire);
  if (loc != kNowhere) {
    ReadSlotMessage read{static_cast<SlotId>(loc & 0xffffffffu), tag, bytes};
    read.checked = known_checksum(job, tag, read.checksum);
    ok = engine_.tile(static_cast<unsigned>(loc >> 32)).read_slot(read, dst);
  }
  if (!ok) {
    // Displaced meanwhile, so written back: copy from main memory (or recompute it, if its tile was lost).
    wait_for_home_writer(s, winner);
    if (!valid(job, winner, tag.round) && engine_.only_on_lost_tile(job, winner)) engine_.recompute(job, winner, stats, engine_.trace_of(stats));
    if (!valid(job, winner, tag.round)) {
      engine_.fail(job, "internal error: confirmed data node '" + job.plan->graph->data(winner).name + "' is in no memory", Status::Code::kInternal);
      return;
    }
    if (bytes != 0) std::memcpy(dst.data(), s.home[winner].data(), bytes);
  }
  ++(&stats == &engine_.driver().stats ? stats.transfers_in : stats.transfers_out);
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) {
    // Counted above, so traced too: stats and trace must agree on the transfers. Recorded by the calling thread.
    engine_.trace_of(stats).transfers.push_back(RawTransfer{logical, ok ? static_cast<int>(loc >> 32) : kDriverTile, kDriverTile, bytes, start, job.now()});
  }
  s.home[logical] = dst;
  s.home_state[logical].store(home_word(0, kHomeValid), std::memory_order_release);
  s.home_state[logical].notify_all();  // wait_while() sleepers
}

}  // namespace redflow::runtime
