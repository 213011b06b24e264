// Main memory (section 4.4 of Kühbacher et al.): where every data node has
// its home, zero-copy placement for split and collect, and the validity word
// (round << 2 | state) that says which value a home holds. Values come back
// from tiles here (write_home) and go to the driver's actors from here.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

std::unique_ptr<GraphState> Engine::prepare(const Plan& plan) {
  auto s = std::make_unique<GraphState>();
  const std::size_t actors = plan.actors.size(), data = plan.data.size();
  s->pending = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
  s->remaining = make_huge_page_array<std::atomic<std::uint32_t>>(data);
  s->home_state = make_huge_page_array<std::atomic<std::uint32_t>>(data);
  s->location = make_huge_page_array<std::atomic<std::uint64_t>>(data);
  s->home.resize(data);
  s->home_write.assign(data, nullptr);
  s->driver_inputs.reserve(plan.max_inputs);
  s->alias.resize(data);
  for (DataId d = 0; d < data; ++d) s->alias[d] = d;
  if (plan.redundant) {
    // Only a redundant plan votes, places replicas or bumps rounds: 49 bytes
    // per actor that a plan without redundancy (the default) does not hold.
    s->checksum.assign(data, 0);
    s->producer_tile.assign(data, -1);
    s->round = make_huge_page_array<std::atomic<std::uint32_t>>(data);
    s->replica_tile = make_huge_page_array<std::atomic<int>>(actors);
    s->skipped = make_huge_page_array<std::atomic<std::uint8_t>>(actors);
    s->vote_round.assign(actors, 0);
    s->vote_history.resize(actors);
  }
  if (checks_values()) {
    if (!plan.redundant) s->checksum.assign(data, 0);
    s->checksum_of.assign(data, 0);
  }
  // HEFT walkers claim actors only where a join can make a new schedule mid-run.
  if (options_.join_places() > 0 && !plan.redundant) s->claim = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
  if (!options_.cluster.listen.empty() && options_.speculate_after_s > 0 && !plan.redundant) {
    s->copied = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
    s->booked = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
    s->measured_s = make_huge_page_array<std::atomic<float>>(actors);
  }
  assign_main_memory(plan, *s);
  s->dirs.resize(tiles_.size());
  for (auto& dir : s->dirs) {
    dir.slot_of.reset(options_.slots);
    dir.held.assign(options_.slots, DataTag{});
    dir.occupied_bits.assign((options_.slots + 63) / 64, 0);
    dir.last_use.assign(options_.slots, 0);
    dir.stamp.assign(options_.slots, 0);
  }
  return s;
}

// Gives every inner and output node its place in main memory. Zero-copy for
// the paper's special actors: an inner node read only by a collect (once) is
// placed inside the collect's output, so writing it back is the collect; a
// split's output gets no buffer, it will be a range of the split's input.
void Engine::assign_main_memory(const Plan& plan, GraphState& s) {
  const std::size_t data = plan.data.size();
  constexpr DataId kNoParent = ~DataId{0};
  HugePageVector<DataId> parent(data, kNoParent);
  HugePageVector<std::size_t> offset(data, 0);
  std::vector<bool> split_output(data, false), own(data, false);
  for (ActorId a = 0; a < plan.actors.size(); ++a)
    if (plan.actors[a].alias == ActorAlias::kInputRange) split_output[plan.hot[a].output] = true;
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    if (plan.actors[a].alias != ActorAlias::kConcatenation) continue;
    const ActorHot& hot = plan.hot[a];
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < hot.input_count; ++i) {
      const DataId d = plan.inputs[hot.first_input + i];
      const PlanData& pd = plan.data[d];
      const bool once = pd.consumer_count == 1;
      if (pd.kind == DataKind::kInner && once && !split_output[d] && parent[d] == kNoParent) {
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
    if (split_output[d]) return base[d] = kNone;
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
void Engine::place_outputs(GraphState& s, std::span<std::byte* const> output_to) {
  for (std::size_t i = 0; i < s.outputs.size(); ++i) {
    const DataId d = s.outputs[i];
    if (s.own_output[i] == nullptr) continue;  // a split's range, or 0 bytes: nothing of its own
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

std::span<const std::byte> Engine::output(const GraphState& state, DataId d) const { return state.home[d]; }

bool Engine::home_valid(const Job& job, DataId d, std::uint32_t round) const {
  return job.state->home_state[d].load(std::memory_order_acquire) == home_word(round, kHomeValid);
}

bool Engine::checks_values() const {
  for (const auto& t : tiles_)
    if (t->checks_values()) return true;
  return !options_.cluster.listen.empty();  // workers may join later
}

bool Engine::known_checksum(const Job& job, DataTag tag, std::uint64_t& sum) const {
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

bool Engine::ensure_home(Job& job, DataId d) {
  const std::uint32_t round = job.round_of(d);
  if (home_valid(job, d, round)) return true;
  const std::uint64_t loc = job.state->location[d].load(std::memory_order_acquire);
  if (loc == kNowhere) return false;
  const unsigned t = static_cast<unsigned>(loc >> 32);
  if (!gone(t)) write_home(job, DataTag{job.execution, d, round}, *tiles_[t], static_cast<SlotId>(loc & 0xffffffffu), driver_.stats);
  if (!home_valid(job, d, round) && gone(t)) return recompute(job, d, driver_.stats, driver_.trace);
  return home_valid(job, d, round);
}

// Copies the value `tag` from a slot to main memory, unless main memory
// already has it or a later round of the node (the value is then stale and
// nobody needs it). The writing state is a lock on the node's buffer.
void Engine::write_home(Job& job, DataTag tag, Tile& tile, SlotId slot, TileStats& stats, TraceBuffer* trace) {
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
  if (&stats == &driver_.stats) {
    ++stats.transfers_in;
    transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    ++stats.transfers_out;  // a write-back into main memory, counted by the runner that did it
    if (&stats == &runners_[tile.index()]->stats) {
      runners_[tile.index()]->transfer_bytes += bytes;  // the tile's own runner: its unshared counter
    } else {
      transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);  // another runner (a lost tile's recompute) pulled it
    }
  }
  if (job.tracing) {
    // Recorded by the thread that moved the bytes: the tile's own runner, or the driver.
    TraceBuffer& buffer = trace != nullptr ? *trace : &stats == &driver_.stats ? driver_.trace : runners_[tile.index()]->trace;
    buffer.transfers.push_back(RawTransfer{d, static_cast<int>(tile.index()), kDriverTile, bytes, start, job.now()});
  }
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
  if (loc != kNowhere) {
    ReadSlotMessage read{static_cast<SlotId>(loc & 0xffffffffu), tag, bytes};
    read.checked = known_checksum(job, tag, read.checksum);
    ok = tiles_[loc >> 32]->read_slot(read, dst);
  }
  if (!ok) {
    // Displaced meanwhile, so written back: copy from main memory (or recompute it, if its tile was lost).
    wait_for_home_writer(s, winner);
    if (!home_valid(job, winner, tag.round) && only_on_lost_tile(job, winner)) {
      TraceBuffer* buffer = &driver_.trace;
      for (auto& r : runners_)
        if (&stats == &r->stats) buffer = &r->trace;
      recompute(job, winner, stats, *buffer);
    }
    if (!home_valid(job, winner, tag.round)) {
      fail(job, "internal error: confirmed data node '" + job.plan->graph->data(winner).name + "' is in no memory");
      return;
    }
    if (bytes != 0) std::memcpy(dst.data(), s.home[winner].data(), bytes);
  }
  ++(&stats == &driver_.stats ? stats.transfers_in : stats.transfers_out);
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) {
    // Counted above, so traced too: stats and trace must agree on the transfers. Recorded by the calling thread.
    TraceBuffer* buffer = &driver_.trace;
    for (auto& r : runners_)
      if (&stats == &r->stats) buffer = &r->trace;
    buffer->transfers.push_back(RawTransfer{logical, ok ? static_cast<int>(loc >> 32) : kDriverTile, kDriverTile, bytes, start, job.now()});
  }
  s.home[logical] = dst;
  s.home_state[logical].store(home_word(0, kHomeValid), std::memory_order_release);
  s.home_state[logical].notify_all();  // wait_while() sleepers
}

}  // namespace redflow::runtime
