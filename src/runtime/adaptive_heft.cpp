// HEFT that adapts when a tile falls behind its plan (docs/scheduling.md,
// "HEFT under load"). A static plan assumes every tile runs when and as fast
// as planned; on a loaded machine a tile's thread is descheduled for
// milliseconds, and on a slow or throttled core every actor takes longer.
// Everything planned after the late actor on that tile then waits while the
// other tiles idle, where work stealing, which needs no plan, loses nothing.
// Here a tile with nothing ready in its own order looks at the others:
//
// - behind: its own walk has reached time T in the plan (the planned start
//   of its next actor; the plan's end once its order is done) and another
//   tile's only time T - L (the planned start of its running actor plus the
//   time it has run, at most its planned cost), with L >= kStallS. A ready
//   actor of the late tile's order that fits in the lag (planned cost <= L)
//   is taken over: on plan, the idle tile is done with it before its own
//   next actor's inputs come. If the late tile is also slow (its actors
//   take kSlowPace times their planned cost or more, a moving average: a
//   throttled core, a thread sharing its core), any ready actor: the plan's
//   times no longer hold there, and the idle tile runs it sooner;
// - stalled: the late tile's next actor has been ready, and not started,
//   for kStallS: its thread is not running (descheduled);
// - overrun: its running actor has run more than kOverrun times its
//   planned cost plus kStallS (a slow run, or descheduled mid-actor): any
//   ready actor of its next kWindow is taken over.
//
// A tile's own next actor is left to it unless stalled (its walker is
// about to take it), and a slow tile takes nothing from a faster one but a
// stalled actor. A taken-over actor is claimed, so it runs once; the late
// tile's walk skips it. Tiles that keep to the plan are left alone while
// the idle one has actors of its own to come: on a quiet machine the plan
// runs as made, but for the ready actors a tile done with its order takes.
//
// Only for plans that keep their actors' costs (Plan::adapts: coarse actors,
// no redundancy, whose replicas must stay on distinct tiles) and for tiles
// that run one actor at a time (not a pipelined link to a worker, which has
// its own straggler handling: speculation.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

namespace {
// A ready actor left waiting this long by an idle tile means the tile's
// thread is not running: a scheduler time slice is milliseconds.
constexpr double kStallS = 1e-3;
// A running actor past this many times its planned cost (plus kStallS).
constexpr double kOverrun = 2;
// How far past a late tile's walk an idle tile looks for a ready actor.
constexpr std::uint32_t kWindow = 64;
// A tile whose actors take this many times their planned cost is slow; its
// pace is a moving average (weight kPaceWeight for the newest) over actors
// planned for kPaceMinS or more (shorter ones are mostly timing noise).
constexpr double kSlowPace = 1.5;
constexpr double kPaceWeight = 0.25;
constexpr double kPaceMinS = 1e-4;

std::int64_t nanoseconds(double seconds) { return static_cast<std::int64_t>(seconds * 1e9); }
}  // namespace

bool Engine::adapting(const Job& job) const {
  return job.scheduler == Scheduler::kHeft && options_.heft_adapts && job.plan->adapts() && job.state->claim != nullptr;
}

double Engine::planned_start(const Job& job, ActorId a) const {
  const Schedule& s = orders(job);
  return &s == &job.plan->heft ? job.plan->planned_start[a] : s.actors[a].start;
}

void Engine::note_running(Runner& r, const Job& job, ActorId a, double clock) const {
  r.running_cost.store(job.plan->planned_cost[a], std::memory_order_relaxed);
  r.running_clock.store(static_cast<float>(clock), std::memory_order_relaxed);
  r.running_since_ns.store(std::max<std::int64_t>(1, nanoseconds(job.now())), std::memory_order_release);
}
void Engine::note_done(Runner& r, const Job& job) const {
  const double cost = r.running_cost.load(std::memory_order_relaxed);
  if (cost >= kPaceMinS) {
    const double ran = job.now() - static_cast<double>(r.running_since_ns.load(std::memory_order_relaxed)) * 1e-9;
    const double pace = r.pace.load(std::memory_order_relaxed);
    r.pace.store(static_cast<float>((1 - kPaceWeight) * pace + kPaceWeight * ran / cost), std::memory_order_relaxed);
  }
  r.running_since_ns.store(0, std::memory_order_release);
}

std::chrono::nanoseconds Engine::next_look(const Job&) const { return std::chrono::nanoseconds(nanoseconds(kStallS)); }

// Tile r is idle: takes over one ready actor of a late tile's order and
// runs it. False: no tile is late (or r may not take over).
bool Engine::take_late(Runner& r, Job& job) {
  if (!adapting(job) || r.depth > 1 || !in_service(r.index) || finished(job)) return false;
  const Schedule& s = orders(job);
  if (r.index >= s.tile_order.size()) return false;
  const double now = job.now();
  // Where r's walk is in the plan: its next actor's planned start.
  const std::span<const ActorId> mine = s.tile_order[r.index];
  const std::uint32_t mine_at = r.walk_at.load(std::memory_order_relaxed);
  const double clock = mine_at < mine.size() ? planned_start(job, mine[mine_at]) : std::numeric_limits<double>::infinity();
  if (r.late_seen.size() != runners_.size()) r.late_seen.assign(runners_.size(), {kNone, 0.0});
  const double my_pace = r.pace.load(std::memory_order_relaxed);
  for (auto& vp : runners_) {
    Runner& v = *vp;
    if (&v == &r || v.depth > 1 || v.index >= s.tile_order.size()) continue;
    const std::span<const ActorId> order = s.tile_order[v.index];
    const std::uint32_t from = std::min<std::uint32_t>(v.walk_at.load(std::memory_order_relaxed), static_cast<std::uint32_t>(order.size()));
    if (from == order.size()) continue;  // done with its order
    const std::int64_t since = v.running_since_ns.load(std::memory_order_acquire);
    const bool running = since > 0;
    const double ran = running ? now - static_cast<double>(since) * 1e-9 : 0;
    const double cost = v.running_cost.load(std::memory_order_relaxed);
    const bool overrun = running && ran > kOverrun * cost + kStallS;
    // How far v's walk is behind r's, in plan time.
    const double v_clock = running ? v.running_clock.load(std::memory_order_relaxed) + std::min(ran, static_cast<double>(cost))
                                   : planned_start(job, order[from]);
    const double lag = clock - v_clock;
    // Behind: what fits in the lag; behind and slow: any ready actor.
    const double pace = v.pace.load(std::memory_order_relaxed);
    const double slack = pace >= kSlowPace ? std::numeric_limits<double>::infinity() : lag;
    // A slow tile takes nothing from a faster one but what is stalled.
    const bool slower = my_pace >= kSlowPace && my_pace > pace;
    ActorId take = kNone;
    const char* why = "behind";
    for (std::uint32_t i = from; i < order.size() && i - from < kWindow; ++i) {
      const ActorId a = order[i];
      if (job.joins.claimed(a) || (job.plan->hot[a].flags & (ActorHot::kIsVote | ActorHot::kOnDriver)) != 0) continue;
      const bool ready = job.state->pending[a].load(std::memory_order_acquire) == 0;
      if (!running && i == from) {
        // Not running: its next actor, once it has waited kStallS.
        auto& seen = r.late_seen[v.index];
        if (!ready) {
          seen.first = kNone;
        } else if (seen.first != a) {
          seen = {a, now};
        } else if (now - seen.second >= kStallS) {
          take = a;
          why = "stalled";
          break;
        }
        continue;  // v is about to take it
      }
      if (!ready || slower) continue;
      if (overrun) {
        take = a;
        why = "overrun";
        break;
      }
      if (lag >= kStallS && job.plan->planned_cost[a] <= slack) {
        take = a;
        break;
      }
    }
    if (take == kNone || !job.joins.claim(take)) continue;
    r.late_seen[v.index].first = kNone;
    note_straggler(job, v, take);
    mark(job, "taken-over", std::string(job.plan->name(take)) + " (" + why + ")", static_cast<int>(r.index));
    job.speculation.count_taken_over();
    note_running(r, job, take, std::isinf(clock) ? planned_start(job, take) : clock);
    const ActorId next = run_on_tile(r, job, take);
    note_done(r, job);
    if (next != kNone) r.deque.push(next);
    return true;
  }
  return false;
}

}  // namespace redflow::runtime
