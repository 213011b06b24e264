// Joins (docs/remote.md): a worker that connects after the runtime started fills
// one of the places kept for it (ClusterOptions::max_workers). Its own
// runner (or execute(), between executions) sends it the actor table and the
// fault configuration and puts it in service: from then on work stealing
// picks it as a victim and a thief like any tile. HEFT's schedule is static,
// so under HEFT the part not yet started is scheduled again for the tiles in
// service (the paper's Algorithm 2 over what is left): actors already
// started stay where they are, at no cost, and walkers claim each actor so
// that one moved by the new schedule runs once.
#include <algorithm>
#include <limits>
#include <string>

#include <spdlog/spdlog.h>

#include "runtime/engine_job.hpp"
#include "schedule/heft.hpp"

namespace redflow::runtime {

// The remote tiles' I/O thread, under its lock: only note it and wake the place's runner.
void Engine::note_join(unsigned worker) {
  const unsigned t = options_.local_tiles() + worker;
  places_.note_join(t);
  if (!runners_ready_.load(std::memory_order_acquire)) return;  // the first execution admits it
  runners_[t]->notifier.notify_all();
}

bool Engine::admit_joined(unsigned t, const Plan& plan, const ExecutionRequest& request, Job* job) {
  WorkerTile& remote = *worker_tiles_[t - options_.local_tiles()];
  remote.attach();
  const Status s = configuration_.configure(t, *tiles_[t], plan, request.fault_spec);
  if (!s.ok() || remote.lost()) {
    // It cannot run this graph (a missing --lib), or it died at once: the
    // place stays out of service, quarantined, and the run goes on without it.
    places_.refuse_join(t);
    spdlog::warn("redflow: worker '{}' joined as tile {} and is not used: {}", remote.name(), t,
                 s.ok() ? std::string("it was lost at once") : s.message());
    return false;
  }
  places_.admit(t);
  spdlog::info("redflow: worker '{}' joined as tile {}{}", remote.name(), t, job != nullptr ? ", mid-run" : "");
  if (job == nullptr) return true;
  job->joins.count_join();
  mark(*job, "tile-joined", "tile " + std::to_string(t) + " (worker '" + remote.name() + "')", static_cast<int>(t));
  if (replannable(*job)) replan(*job);
  steal_notifier_.notify_all();
  return true;
}

unsigned Engine::tiles_in_view() const {
  unsigned view = std::min(options_.tiles, tiles());
  for (unsigned t = view; t < tiles(); ++t)
    if (!places_.absent(t)) view = t + 1;
  return view;
}

bool Engine::replannable(const Job& job) const {
  return job.scheduler == Scheduler::kHeft && options_.join_places() > 0 && !job.plan->redundant && job.state->claim != nullptr &&
         job.plan->heft_planned;
}

const Schedule& Engine::orders(const Job& job) const {
  const Schedule* s = job.joins.current();
  return s != nullptr ? *s : job.plan->heft;
}

namespace {
// Actor a's tile in `s`: the plan's own schedule keeps it in ActorHot (its
// per-actor entries are dropped), a re-plan's schedule in its entries.
int tile_in(const Schedule& s, const Plan& plan, ActorId a) { return &s == &plan.heft ? plan.hot[a].heft_tile : s.actors[a].tile; }
}  // namespace

int Engine::scheduled_tile(const Job& job, ActorId a) const { return tile_in(orders(job), *job.plan, a); }

bool Engine::in_service(unsigned t) const { return places_.healthy(t) && !places_.absent(t) && !gone(t); }

// HEFT over every tile place: the ones out of service cost +inf, so nothing
// new goes there; a claimed actor is forced where it runs (or ran) at no
// cost, so what it feeds is timed from now rather than left unplaced.
std::vector<bool> Engine::tiles_in_service() const {
  std::vector<bool> service(tiles());
  for (unsigned t = 0; t < tiles(); ++t) service[t] = in_service(t);
  return service;
}

std::unique_ptr<Schedule> Engine::make_schedule(const Job& job, const std::vector<bool>& service) const {
  const Plan& plan = *job.plan;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  MachineModel m = machine();
  m.tiles = tiles();
  schedule::HeftProblem p = heft_problem(*plan.graph, m, *plan.registry);
  const Schedule& now = orders(job);
  const std::size_t driver = tiles();
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    if (job.joins.claimed(a)) {
      const int tile = tile_in(now, plan, a);
      const std::size_t proc = tile < 0 ? driver : static_cast<std::size_t>(tile);
      p.forced[a] = static_cast<int>(proc);
      std::fill(p.cost[a].begin(), p.cost[a].end(), kInf);
      p.cost[a][proc] = 0;
    } else if (p.forced[a] < 0) {
      for (unsigned t = 0; t < tiles(); ++t)
        if (!service[t]) p.cost[a][t] = kInf;
    }
  }
  return std::make_unique<Schedule>(schedule_of(p, schedule::heft(p), plan.actors.size(), tiles(), m.first_remote_tile));
}

const Schedule* Engine::start_schedule(Job& job) {
  const auto& planned = job.plan->heft.tile_order;
  std::vector<bool> service = tiles_in_service();
  bool as_planned = true;
  for (unsigned t = 0; t < tiles(); ++t) as_planned = as_planned && service[t] == (t < planned.size());
  if (as_planned) return nullptr;
  if (!(replan_cache_ && replan_plan_ == job.plan->id && replan_service_ == service)) {
    replan_cache_ = make_schedule(job, service);
    replan_plan_ = job.plan->id;
    replan_service_ = std::move(service);
    job.joins.count_replan();
  }
  return replan_cache_.get();
}

// Mid-run, on the joined tile's runner: the walkers switch to the new
// schedule at their next actor (Job::epoch), skipping what was claimed.
void Engine::replan(Job& job) {
  job.joins.replace([&] { return make_schedule(job, tiles_in_service()); });
  mark(job, "replan", "HEFT for " + std::to_string(tiles_in_view()) + " tile places", kDriverTile);
  wake_all(job);
}

}  // namespace redflow::runtime
