// Lost tiles: a tile whose completion says `lost` (it crashed, or its
// transport broke) is out of service for the runtime's life, like a
// quarantined one, and what lived only in its slots is recomputed from its
// producers when someone still needs it. Actors are pure, so re-running the
// producer on main memory, with its inputs from main memory (inputs and
// constants are always there; inner values are read back from a live tile or
// recomputed in turn), gives the same bytes. The home's writing state is the
// claim: each value is recomputed once, whoever needs it first.
#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "redflow/actor_context.hpp"
#include "runtime/engine_job.hpp"

namespace redflow::runtime {

void Engine::lose_tile(Job& job, unsigned t) {
  if (!places_.lose(t)) return;  // lost already
  job.losses.count_lost_tile();
  mark(job, "tile-lost", "tile " + std::to_string(t), static_cast<int>(t));
  runners_[t]->notifier.notify_all();
  steal_notifier_.notify_all();
}

// "'a': 1 of 3 (tile 2 lost under it)", built out of line (GCC 12's -O3 string warnings).
namespace {
std::string strike_detail(std::string_view actor, std::size_t strikes, unsigned limit, unsigned tile) {
  std::string s = "'";
  s += actor;
  s += "': ";
  s += std::to_string(strikes);
  s += " of ";
  s += std::to_string(limit);
  s += " (tile ";
  s += std::to_string(tile);
  s += " lost under it)";
  return s;
}
}  // namespace

// An actor under which RuntimeOptions::crash_limit tiles were lost is not
// retried again: a task that kills every worker it lands on would otherwise
// take the whole cluster down one worker at a time. Each loss charged to an
// actor is marked (`strike`), so a trace shows which actor a loss counted
// against: the one the tile was running, never those queued behind it.
bool Engine::poisoned(Job& job, ActorId a, unsigned tile) {
  std::vector<unsigned> under = job.losses.lost_under(a, tile);
  mark(job, "strike", strike_detail(job.plan->name(a), under.size(), options_.crash_limit, tile), static_cast<int>(tile));
  if (under.size() < options_.crash_limit) return false;
  std::sort(under.begin(), under.end());
  const std::string lost = under.size() == 1 ? "1 tile was lost" : std::to_string(under.size()) + " tiles were lost";
  fail(job,
       "actor '" + std::string(job.plan->name(a)) + "' is poisoned: " + lost + " while it ran on them (" + describe_tiles(under) +
           "), its crash limit; it is not retried",
       Status::Code::kGaveUp);
  return true;
}

bool Engine::recompute(Job& job, DataId d, TileStats& stats, TraceBuffer& trace) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const std::uint32_t round = job.round_of(d);
  std::uint32_t word = s.home_state[d].load(std::memory_order_acquire);
  for (;;) {
    if (word == home_word(round, kHomeValid)) return true;  // someone else recomputed it (or read it back)
    if (home_state_of(word) == kHomeWriting) {
      word = wait_while(s.home_state[d], word);
      continue;
    }
    if (s.home_state[d].compare_exchange_weak(word, home_word(round, kHomeWriting), std::memory_order_acq_rel)) break;
  }
  const ActorId p = plan.data[d].producer;
  bool ok = p != kNoActor && s.home_write[d] != nullptr && !plan.actors[p].on_driver && plan.hot[p].function != nullptr;
  const PlanActor& pa = plan.actors[ok ? p : 0];
  const ActorHot& hot = plan.hot[ok ? p : 0];
  std::vector<std::span<const std::byte>> inputs;  // a rare path: allocation is fine
  for (std::uint32_t i = 0; ok && i < hot.input_count; ++i) {
    const DataId x = s.alias[plan.inputs[hot.first_input + i]];
    const std::uint32_t xr = job.round_of(x);
    wait_for_home_writer(s, x);
    if (!memory_.valid(job, x, xr)) {
      const std::uint64_t loc = s.location[x].load(std::memory_order_acquire);
      if (loc != kNowhere && !gone(static_cast<unsigned>(loc >> 32)))
        memory_.write(job, DataTag{job.execution, x, xr}, *tiles_[loc >> 32], static_cast<SlotId>(loc & 0xffffffffu), stats, &trace);
      if (!memory_.valid(job, x, xr)) ok = recompute(job, x, stats, trace);
    }
    inputs.push_back(s.home[x]);
  }
  if (ok) {
    const double start = job.tracing ? job.now() : 0;
    const std::size_t bytes = plan.data[d].bytes;
    ActorContext ctx(plan.name(p), plan.args(p), inputs, std::span<std::byte>(s.home_write[d], bytes), nullptr);
    invoke_actor(*hot.function, ctx);
    ok = !ctx.failure();
    // A replica's value was voted on: the recomputed bytes must be the ones the vote confirmed.
    if (ok && pa.replica != 0 && s.checksum[d] != XXH3_64bits(s.home_write[d], bytes)) ok = false;
    // An unreplicated value recomputed here may differ from what its lost
    // producer reported (a fault injected into that run): its checksum is
    // no longer known, so whoever moves it next hashes what it moves.
    if (ok && pa.replica == 0 && !s.checksum_of.empty()) std::atomic_ref<std::uint32_t>(s.checksum_of[d]).store(0, std::memory_order_relaxed);
    job.losses.count_recomputed();
    if (job.tracing) trace.actors.push_back(RawActor{p, kDriverTile, pa.replica, 0, start, job.now(), false, false, 0});
  }
  // s.home[d] already names home_write[d]: every inner and output node's home is set at prepare().
  s.home_state[d].store(home_word(round, ok ? kHomeValid : kHomeInvalid), std::memory_order_release);
  s.home_state[d].notify_all();  // wait_while() sleepers (wait_for_home_writer)
  return ok;
}

// Where a value's only copy was: on a tile now lost.
bool Engine::only_on_lost_tile(const Job& job, DataId d) const {
  const std::uint64_t loc = job.state->location[d].load(std::memory_order_acquire);
  return loc != kNowhere && gone(static_cast<unsigned>(loc >> 32));
}

}  // namespace redflow::runtime
