// In-process compute tile: slot memory and the paper's tile messages as
// direct calls (its parallel loop is tile_loop.cpp).
#include "runtime/local_tile.hpp"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <exception>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define REDFLOW_HAVE_TSC 1
#endif

#include "fault/injector.hpp"
#include "redflow/actor_context.hpp"
#include "runtime/tile_loop.hpp"

namespace redflow::runtime {

namespace {

// The clock that times each actor for TileStats::busy_s. steady_clock::now()
// costs ~25-30 ns here (vDSO), twice per actor: a third of the runtime's whole
// per-actor overhead for empty actors (docs/performance.md). Where the kernel
// itself trusts the TSC (clocksource "tsc": invariant and synchronised across
// cores) we read it directly (~10 ns) and convert with a rate measured once per
// process against steady_clock; elsewhere we fall back to steady_clock.
class ActorClock {
 public:
  static const ActorClock& get() {
    static const ActorClock clock;
    return clock;
  }
  std::uint64_t now() const {
#ifdef REDFLOW_HAVE_TSC
    if (use_tsc_) return __rdtsc();
#endif
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  double seconds(std::uint64_t from, std::uint64_t to) const { return static_cast<double>(to - from) * seconds_per_tick_; }

 private:
  ActorClock() {
    using Steady = std::chrono::steady_clock;
    seconds_per_tick_ = std::chrono::duration<double>(Steady::duration(1)).count();
#ifdef REDFLOW_HAVE_TSC
    std::string source;
    std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> source;
    if (source != "tsc") return;
    // Measure the TSC rate over 2 ms: the error of reading both clocks (tens of ns) stays below 1e-4.
    const auto c0 = Steady::now();
    const std::uint64_t t0 = __rdtsc();
    Steady::time_point c1;
    std::uint64_t t1;
    do {
      c1 = Steady::now();
      t1 = __rdtsc();
    } while (c1 - c0 < std::chrono::milliseconds(2));
    if (t1 <= t0) return;
    seconds_per_tick_ = std::chrono::duration<double>(c1 - c0).count() / static_cast<double>(t1 - t0);
    use_tsc_ = true;
#endif
  }

  bool use_tsc_ = false;
  double seconds_per_tick_ = 0;
};

}  // namespace

LocalTile::LocalTile(unsigned slots, std::size_t slot_bytes, unsigned cores, unsigned index)
    : slot_bytes_(slot_bytes), cores_(cores == 0 ? 1 : cores), index_(index), slots_(slots) {
  // Untouched pages cost no physical memory, so a generous slot budget is cheap until used.
  const std::size_t stride = (slot_bytes + 63) / 64 * 64;
  if (slots != 0 && stride > (SIZE_MAX - 64) / slots) throw std::bad_alloc();  // the product would wrap
  memory_.reset(new std::byte[stride * slots + 64]);
  auto base = reinterpret_cast<std::uintptr_t>(memory_.get());
  auto* aligned = reinterpret_cast<std::byte*>((base + 63) / 64 * 64);
  for (unsigned i = 0; i < slots; ++i) slots_[i].memory = aligned + stride * i;
  loop_ = std::make_unique<TileLoop>(cores_);
  input_spans_.reserve(16);
  ActorClock::get();  // calibrate now, not during the first actor
}

LocalTile::~LocalTile() = default;

Status LocalTile::load_actors(const ActorTableMessage& table, const Registry& registry) {
  table_ = {};
  functions_.assign(table.functions.size(), nullptr);
  for (std::size_t f = 0; f < table.functions.size(); ++f)
    if (const ActorSpec* spec = registry.find(table.functions[f])) functions_[f] = &spec->function;
  for (const ActorTableEntry& e : table.actors) {
    if (e.function < functions_.size() && functions_[e.function] != nullptr) continue;
    functions_.clear();
    if (e.function >= table.functions.size())
      return Status::InvalidArgument("actor '" + std::string(e.name) + "' names function " + std::to_string(e.function) + " of a table of " +
                                     std::to_string(table.functions.size()) + " functions");
    return Status::NotFound("actor '" + std::string(e.name) + "': function '" + std::string(table.functions[e.function]) +
                            "' is not in tile " + std::to_string(index_) + "'s registry");
  }
  table_ = table.actors;
  return Status::Ok();
}

Status LocalTile::configure_faults(const FaultConfigMessage& f) {
  FaultInjection spec;
  spec.bitflip_probability = f.bitflip_probability;
  spec.seed = f.seed;
  if (f.faulty) spec.faulty_tiles.push_back(index_);
  if (f.slow_factor > 1) spec.slow_tiles.emplace_back(index_, f.slow_factor);
  faults_ = spec.any() ? std::make_unique<fault::FaultInjector>(spec) : nullptr;
  crash_after_ = f.crash_after;
  answered_ = 0;
  return Status::Ok();
}

Status LocalTile::check_placement(const DataNodeMessage& m) const {
  if (lost()) return Status::Internal("tile " + std::to_string(index_) + " is lost");
  if (m.slot >= slots_.size()) return Status::InvalidArgument("data node message names slot " + std::to_string(m.slot) + " of " + std::to_string(slots_.size()));
  if (m.bytes > slot_bytes_) return Status::ResourceExhausted("data node of " + std::to_string(m.bytes) + " bytes does not fit a slot of " + std::to_string(slot_bytes_) + " bytes");
  return Status::Ok();
}

Status LocalTile::data_node(const DataNodeMessage& m) {
  REDFLOW_RETURN_IF_ERROR(check_placement(m));
  clear_slot(m.slot);
  std::span<std::byte> dst{slots_[m.slot].memory, m.bytes};
  if (m.source_tile == kFromDriver) {
    if (m.payload.size() != m.bytes) return Status::InvalidArgument("data node message carries " + std::to_string(m.payload.size()) + " bytes, declares " + std::to_string(m.bytes));
    if (m.bytes != 0) std::memcpy(dst.data(), m.payload.data(), m.bytes);
  } else {
    if (m.source_tile < 0 || static_cast<std::size_t>(m.source_tile) >= peers_.size() || peers_[m.source_tile] == nullptr)
      return Status::InvalidArgument("data node message names source tile " + std::to_string(m.source_tile) + ", which tile " +
                                     std::to_string(index_) + " cannot reach");
    if (!peers_[m.source_tile]->read_slot(source_read(m), dst))
      return Status::NotFound("source slot " + std::to_string(m.source_slot) + " of tile " + std::to_string(m.source_tile) +
                              " no longer holds data node " + std::to_string(m.tag.data));
  }
  slots_[m.slot].bytes = m.bytes;
  publish(m.slot, m.tag);
  return Status::Ok();
}

Status LocalTile::write_piece(const DataNodeMessage& m, std::uint64_t offset, std::span<const std::byte> piece) {
  REDFLOW_RETURN_IF_ERROR(check_placement(m));
  if (offset > m.bytes || piece.size() > m.bytes - offset)
    return Status::InvalidArgument("a piece of " + std::to_string(piece.size()) + " bytes at " + std::to_string(offset) + " of a " +
                                   std::to_string(m.bytes) + "-byte data node");
  Slot& s = slots_[m.slot];
  if (offset == 0) {
    clear_slot(m.slot);
    s.next_piece = 0;
  } else if (s.next_piece != offset) {
    const std::string expected = s.next_piece == kEmpty ? "no value being placed" : "the next piece at " + std::to_string(s.next_piece);
    return Status::InvalidArgument("a piece at " + std::to_string(offset) + " of data node " + std::to_string(m.tag.data) + " in slot " +
                                   std::to_string(m.slot) + ", which has " + expected);
  }
  if (!piece.empty()) std::memcpy(s.memory + offset, piece.data(), piece.size());
  s.next_piece = offset + piece.size();
  if (s.next_piece == m.bytes) {
    s.next_piece = kEmpty;
    s.bytes = m.bytes;
    publish(m.slot, m.tag);
  }
  return Status::Ok();
}

void LocalTile::clear_slot(SlotId slot) {
  if (slot >= slots_.size()) return;
  Slot& s = slots_[slot];
  s.next_piece = kEmpty;  // a value half placed in pieces is abandoned
  if (s.tag.load(std::memory_order_relaxed) == kEmpty) return;
  s.tag.store(kEmpty, std::memory_order_seq_cst);
  // A reader that pinned before seeing the clear is mid-copy: let it finish
  // (a short spin, then sleep: the reader may be descheduled, see read_slot).
  std::uint32_t p = s.pins.load(std::memory_order_seq_cst);
  for (int spin = 0; spin < 64 && p != 0; ++spin) p = s.pins.load(std::memory_order_seq_cst);
  while (p != 0) {
    s.pins.wait(p, std::memory_order_seq_cst);
    p = s.pins.load(std::memory_order_seq_cst);
  }
}

void LocalTile::clear_all() {
  for (SlotId i = 0; i < slots_.size(); ++i) clear_slot(i);
}

bool LocalTile::read_slot(const ReadSlotMessage& m, std::span<std::byte> out) {
  if (out.size() != m.range()) return false;
  return with_slot(m, [&](std::span<const std::byte> value) {
    if (!value.empty()) std::memcpy(out.data(), value.data(), value.size());
  });
}

Completion LocalTile::die(ActorId actor) {
  lost_.store(true, std::memory_order_release);
  for (Slot& s : slots_) s.tag.store(kEmpty, std::memory_order_seq_cst);  // its memory is gone with it
  Completion c;
  c.actor = actor;
  c.ok = false;
  c.lost = true;
  c.error = "tile " + std::to_string(index_) + " is lost";
  return c;
}

bool LocalTile::run_once(const ActorMessage& m, const TableEntry& e, SlotId slot, unsigned run, unsigned round, Completion& done,
                         std::uint64_t& checksum, std::optional<std::uint64_t>& flipped) {
  flipped.reset();
  clear_slot(slot);
  std::span<std::byte> out{slots_[slot].memory, m.output_bytes};
  const ActorClock& clock = ActorClock::get();
  const std::uint64_t t0 = clock.now();
  ActorContext ctx(e.entry.name, e.entry.args, input_spans_, out, loop_.get());
  invoke_actor(e.function, ctx);
  double seconds = clock.seconds(t0, clock.now());
  ++done.executions;
  if (ctx.failure()) {
    done.ok = false;
    done.actor_failed = true;
    done.error = *ctx.failure();
    return false;
  }
  if (faults_ != nullptr) {
    // A real upset corrupts the result before anyone looks at it: flip first, then checksum.
    const std::uint64_t key = faults_->key(m.fault_execution, m.actor, m.replica * 4 + run, m.attempt * 64 + round);
    flipped = faults_->maybe_flip(key, index_, out);
    if (flipped) ++done.injected;
    const double factor = faults_->slow_factor(index_);
    if (factor > 1) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds * (factor - 1)));
      seconds *= factor;
    }
  }
  if (m.want_checksum || e.runs > 1) {
    const std::uint64_t c0 = clock.now();
    checksum = XXH3_64bits(out.data(), out.size());
    const double sum_seconds = clock.seconds(c0, clock.now());
    done.checksum_seconds += sum_seconds;
    seconds += sum_seconds;
  }
  done.seconds += seconds;
  slots_[slot].bytes = m.output_bytes;
  return true;
}

bool LocalTile::run_local(const ActorFunction& function, const Graph& graph, ActorId actor,
                          std::span<const std::span<const std::byte>> inputs, SlotId out_slot, DataTag tag, std::size_t bytes,
                          double* seconds, std::string& failure) {
  if ((out_slot != kNoSlot && out_slot >= slots_.size()) || bytes > slot_bytes_ || (out_slot == kNoSlot && bytes != 0)) {
    failure = "actor message names slot " + std::to_string(out_slot) + " for " + std::to_string(bytes) + " bytes";
    return false;
  }
  std::span<std::byte> out;
  if (out_slot != kNoSlot) {
    clear_slot(out_slot);
    out = {slots_[out_slot].memory, bytes};
  }
  if (!run_into(function, graph, actor, inputs, out, seconds, failure)) return false;
  if (out_slot != kNoSlot) {
    slots_[out_slot].bytes = bytes;
    publish(out_slot, tag);
  }
  return true;
}

bool LocalTile::run_into_timed(const ActorFunction& function, const Graph& graph, ActorId actor,
                               std::span<const std::span<const std::byte>> inputs, std::span<std::byte> out, double& seconds,
                               std::string& failure) {
  const ActorClock& clock = ActorClock::get();
  const std::uint64_t t0 = clock.now();
  const bool ok = run_into(function, graph, actor, inputs, out, nullptr, failure);
  seconds += clock.seconds(t0, clock.now());
  return ok;
}

Completion LocalTile::actor(const ActorMessage& m) {
  if (lost()) return die(m.actor);
  if (answered_ >= crash_after_) return die(m.actor);  // crash-tile: told to die after this many actors
  ++answered_;
  Completion done;
  done.actor = m.actor;
  done.output_slot = m.output_slot;
  if (m.actor >= table_.size()) {
    done.ok = false;
    done.error = "actor message names actor " + std::to_string(m.actor) + " of a table of " + std::to_string(table_.size());
    return done;
  }
  const TableEntry e{table_[m.actor], *functions_[table_[m.actor].function], std::clamp<unsigned>(table_[m.actor].runs, 1, 3)};  // sums[3] below
  const unsigned runs = e.runs;
  auto bad_slot = [&](SlotId slot) { return slot >= slots_.size() || m.output_bytes > slot_bytes_; };
  if (bad_slot(m.output_slot) || m.extra_output_slots.size() + 1 < runs) {
    done.ok = false;
    done.error = "actor message names slot " + std::to_string(m.output_slot) + " for " + std::to_string(m.output_bytes) + " bytes";
    return done;
  }
  for (SlotId slot : m.extra_output_slots)
    if (bad_slot(slot)) {
      done.ok = false;
      done.error = "actor message names slot " + std::to_string(slot) + " for " + std::to_string(m.output_bytes) + " bytes";
      return done;
    }
  for (SlotId s : m.input_slots) {
    if (s >= slots_.size()) {
      done.ok = false;
      done.error = "actor message names input slot " + std::to_string(s) + " of " + std::to_string(slots_.size());
      return done;
    }
    // A transfer into it failed: run nothing on a stale value. A pipelined
    // fetch from a peer that no longer held the value empties the slot; a
    // frame that arrived unreadable never said which slot it was for, so the
    // slot still holds what it held before, which the driver's directory
    // only lets be a value of an earlier execution (it frees every slot as
    // an execution starts, and clears what it frees within one).
    const std::uint64_t held = slots_[s].tag.load(std::memory_order_acquire);
    if (held == kEmpty || held >> 32 != m.execution) {
      done.ok = false;
      done.error = "input slot " + std::to_string(s) + " holds no value";
      if (held != kEmpty) done.error += " of execution " + std::to_string(m.execution);
      return done;
    }
  }
  input_spans_.clear();
  for (SlotId s : m.input_slots) input_spans_.emplace_back(slots_[s].memory, slots_[s].bytes);

  std::optional<std::uint64_t> flipped[3];
  if (runs == 1) {
    if (!run_once(m, e, m.output_slot, 0, 0, done, done.checksum, flipped[0])) return done;
    publish(m.output_slot, m.output_tag);
    return done;
  }

  // *-same: runs back to back into separate slots, keep a result two agree on.
  std::uint64_t sums[3] = {0, 0, 0};
  std::vector<std::uint64_t> rejected_rounds;  // checksums of rounds where none agreed (rare: allocation is fine)
  const unsigned rounds = std::max(1u, m.max_rounds);
  for (unsigned round = 0; round < rounds; ++round) {
    for (unsigned run = 0; run < runs; ++run) {
      const SlotId slot = run == 0 ? m.output_slot : m.extra_output_slots[run - 1];
      if (!run_once(m, e, slot, run, round, done, sums[run], flipped[run])) return done;
    }
    bool alike = false;
    for (unsigned i = 0; i < runs; ++i)
      for (unsigned j = i + 1; j < runs; ++j) alike = alike || (flipped[i] && flipped[i] == flipped[j]);
    done.alike_flips += alike;
    int kept = -1;
    for (unsigned i = 0; i < runs && kept < 0; ++i)
      for (unsigned j = i + 1; j < runs; ++j)
        if (sums[i] == sums[j]) {
          kept = static_cast<int>(i);
          break;
        }
    if (kept < 0) {
      rejected_rounds.insert(rejected_rounds.end(), sums, sums + runs);
      continue;
    }
    done.checksum = sums[kept];
    for (unsigned i = 0; i < runs; ++i) done.rejected += sums[i] != done.checksum;
    for (std::uint64_t c : rejected_rounds) done.rejected += c != done.checksum;
    done.output_slot = kept == 0 ? m.output_slot : m.extra_output_slots[kept - 1];
    publish(done.output_slot, m.output_tag);
    return done;
  }
  // No round agreed: every result is suspect; the driver decides what next.
  done.agreed = false;
  done.unconfirmed = std::move(rejected_rounds);
  return done;
}

}  // namespace redflow::runtime
