// The Graph adapter of HEFT: the cost model (work hints and bytes/second),
// Algorithm 2's driver rule, and turning the HEFT result into a Schedule.
#include <algorithm>
#include <limits>

#include "schedule/heft.hpp"

namespace redflow {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Operations an actor performs: its hint, or, without one, one operation per
// byte it reads or writes (a port read twice counts twice: it is read twice).
double actor_work(const Graph& g, const ActorNode& a) {
  if (a.work > 0) return a.work;
  double bytes = 0;
  for (DataId d : a.inputs)
    if (d < g.data().size()) bytes += static_cast<double>(g.data(d).bytes);
  for (DataId d : a.outputs)
    if (d < g.data().size()) bytes += static_cast<double>(g.data(d).bytes);
  return bytes;
}

// Seconds for `ops` operations on `cores` cores (0 cores behaves like 1 so a
// sloppy model does not turn into infinite costs).
double seconds(double ops, unsigned cores, double ops_per_second_per_core) {
  const double rate = static_cast<double>(std::max(cores, 1u)) * ops_per_second_per_core;
  return rate > 0 ? ops / rate : 0;
}

}  // namespace

std::string driver_reason(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg) {
  if (m.tiles == 0) return "there are no compute tiles";
  const ActorNode& a = g.actor(actor);
  if (const ActorSpec* spec = reg.find(a.function); spec != nullptr && spec->on_driver)
    return "'" + a.function + "' is a special actor, which always runs on the driver";
  // A slot holds one data node, so an input read on two ports needs one slot.
  // Counted only when the ports alone could be too many (load asks this of
  // every actor, several times).
  if (a.inputs.size() + 1 > m.slots) {
    const std::size_t distinct = a.distinct_inputs();
    if (distinct + 1 > m.slots)
      return "it reads " + std::to_string(distinct) + " inputs and writes 1 output, more than the " + std::to_string(m.slots) +
             " slots of a tile (--slots)";
  }
  auto too_big = [&](DataId d) { return d < g.data().size() && g.data(d).bytes > m.slot_bytes; };
  for (DataId d : a.inputs)
    if (too_big(d))
      return "its input '" + g.data(d).name + "' has " + std::to_string(g.data(d).bytes) + " bytes, more than a slot's " +
             std::to_string(m.slot_bytes) + " (--slot-bytes)";
  for (DataId d : a.outputs)
    if (too_big(d))
      return "its output '" + g.data(d).name + "' has " + std::to_string(g.data(d).bytes) + " bytes, more than a slot's " +
             std::to_string(m.slot_bytes) + " (--slot-bytes)";
  return "";
}

bool runs_on_driver(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg) {
  return !driver_reason(g, actor, m, reg).empty();
}

bool votes_on_replicas(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg) {
  const ActorNode& a = g.actor(actor);
  const ActorSpec* spec = reg.find(a.function);
  if (spec == nullptr || spec->alias != ActorAlias::kVote || a.inputs.size() < 2 || a.inputs.size() > 3) return false;
  std::vector<ActorId> producers;
  for (DataId d : a.inputs) {
    if (d >= g.data().size()) return false;
    const DataNode& node = g.data(d);
    if (node.kind != DataKind::kInner || node.producers.size() != 1 || node.consumers.size() != 1) return false;
    const ActorId p = node.producers.front();
    if (runs_on_driver(g, p, m, reg) || std::find(producers.begin(), producers.end(), p) != producers.end()) return false;
    producers.push_back(p);
  }
  return true;
}

schedule::HeftProblem heft_problem(const Graph& g, const MachineModel& m, const Registry& reg) {
  const std::size_t n = g.actors().size();
  const std::size_t driver = m.tiles;
  schedule::HeftProblem p;
  p.processors = m.tiles + 1;
  p.cost.assign(n, std::vector<double>(p.processors, kInf));  // one array: a row per task
  p.successors.resize(n);
  p.forced.assign(n, -1);
  // For the producer being linked: where each consumer sits in its successor
  // list (found in O(1), so a 100,000-way fan-out links in linear time).
  constexpr std::size_t kUnseen = ~std::size_t{0};
  HugePageVector<std::size_t> seen_for(n, kUnseen), seen_at(n, 0);
  // Compare actors (redundancy, Fig. 3) vote on checksums: free, and their
  // inputs cost no transfer. Their replicas form a group that Algorithm 3
  // places consecutively on distinct tiles.
  std::vector<bool> vote(n);
  for (ActorId a = 0; a < n; ++a) vote[a] = votes_on_replicas(g, a, m, reg);
  auto is_vote = [&](ActorId a) { return static_cast<bool>(vote[a]); };
  int groups = 0;
  for (ActorId a = 0; a < n; ++a) {
    if (!is_vote(a)) continue;
    if (p.group.empty()) p.group.assign(n, -1);
    for (DataId d : g.actor(a).inputs)
      for (ActorId producer : g.data(d).producers) p.group[producer] = groups;
    ++groups;
  }
  for (ActorId a = 0; a < n; ++a) {
    // Zero-copy special actors (split, collect) move pointers, not bytes: without a hint they cost nothing.
    const ActorSpec* spec = reg.find(g.actor(a).function);
    const bool aliasing = spec != nullptr && spec->alias != ActorAlias::kNone && g.actor(a).work <= 0;
    const double work = is_vote(a) || aliasing ? 0 : actor_work(g, g.actor(a));
    const double overhead = is_vote(a) || aliasing ? 0 : m.actor_overhead_s;
    if (runs_on_driver(g, a, m, reg)) {
      // Only the driver cost is finite, so the mean cost HEFT ranks by is the
      // cost the actor will really have.
      p.forced[a] = static_cast<int>(driver);
      p.cost[a][driver] = overhead + seconds(work, m.driver_cores, m.ops_per_second_per_core);
    } else {
      // Algorithm 2 considers only compute tiles for ordinary actors.
      const double c = overhead + seconds(work, m.cores_per_tile, m.ops_per_second_per_core);
      for (std::size_t t = 0; t < m.tiles; ++t) p.cost[a][t] = c;
    }
    // Edges producer -> consumer through each output data node. A consumer
    // reading the node on several ports receives it once.
    auto& succ = p.successors[a];
    for (DataId d : g.actor(a).outputs) {
      if (d >= g.data().size()) continue;
      const DataNode& node = g.data(d);
      const double transfer =
          (m.transfer_latency_s > 0 ? m.transfer_latency_s : 0) + (m.bytes_per_second > 0 ? static_cast<double>(node.bytes) / m.bytes_per_second : 0);
      for (const Consumer& c : node.consumers) {
        if (c.actor >= n) continue;
        const double cost = is_vote(c.actor) ? 0 : transfer;
        if (seen_for[c.actor] != a) {
          seen_for[c.actor] = a;
          seen_at[c.actor] = succ.size();
          succ.push_back({c.actor, cost});
        } else {
          succ[seen_at[c.actor]].cost = std::max(succ[seen_at[c.actor]].cost, cost);
        }
      }
    }
  }
  return p;
}

namespace {
// HEFT's plan is refined (schedule::refine()) where actors are coarse: a
// mean planned cost on the tiles of at least schedule::kCoarseMeanCostS. There the
// search may spend kRefineShare of the plan's makespan, at about kStepS per
// step (schedule::refine()); at most kRefineMaxSteps. Finer graphs keep
// HEFT's plan: their makespan is dispatch, not placement.
constexpr double kRefineShare = 0.01;
constexpr double kStepS = 8e-9;
constexpr double kRefineMaxSteps = 4e8;

std::size_t refine_budget(const schedule::HeftProblem& p, const schedule::HeftResult& r, unsigned tiles) {
  double sum = 0;
  std::size_t on_tiles = 0;
  for (std::size_t t = 0; t < p.cost.size(); ++t) {
    if (r.proc[t] >= tiles) continue;
    sum += p.cost[t][r.proc[t]];
    ++on_tiles;
  }
  if (tiles < 2 || on_tiles == 0 || sum / static_cast<double>(on_tiles) < schedule::kCoarseMeanCostS) return 0;
  return static_cast<std::size_t>(std::min(kRefineMaxSteps, kRefineShare * r.makespan / kStepS));
}
}  // namespace

Schedule heft_schedule(const Graph& g, const MachineModel& m, const Registry& reg) {
  const schedule::HeftProblem p = heft_problem(g, m, reg);
  schedule::HeftResult r = schedule::heft(p);
  const std::size_t budget = refine_budget(p, r, m.tiles);
  if (budget > 0) r = schedule::refine(p, std::move(r), budget);
  return schedule_of(p, r, g.actors().size(), m.tiles, m.first_remote_tile);
}

Schedule schedule_of(const schedule::HeftProblem& p, const schedule::HeftResult& r, std::size_t n, unsigned tiles,
                     unsigned first_remote_tile) {
  Schedule s;
  s.actors.resize(n);
  s.tile_order.resize(tiles);
  s.makespan = r.makespan;
  // Each tile runs its actors by (start, finish, depth-first position).
  // Sorting all actors that way is topological: for an edge u -> v,
  // start(v) >= finish(u) >= start(u), and equality throughout means u and v
  // both take no time, where u comes first in the depth-first topological
  // order. Ordering by finish too keeps a zero-time actor inserted at the
  // start of a busy interval before it. The last key matters for zero-cost
  // work, all of it at one instant: a tile runs it a path at a time (few
  // live data nodes), not a level at a time as the ranks list it.
  for (std::size_t task : r.order) {
    const auto id = static_cast<ActorId>(task);
    const bool on_driver = r.proc[task] >= tiles;
    s.actors[id] = ScheduledActor{id, on_driver ? kDriverTile : static_cast<int>(r.proc[task]), r.start[task],
                                  r.finish[task]};
    (on_driver ? s.driver_order : s.tile_order[r.proc[task]]).push_back(id);
  }
  auto by_start = [&](ActorId a, ActorId b) {
    const ScheduledActor &x = s.actors[a], &y = s.actors[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.finish != y.finish) return x.finish < y.finish;
    return r.depth_first[a] < r.depth_first[b];
  };
  // A tile's actors mostly come in order already (a chain, any tile that
  // never inserts into a gap): check before paying for a sort.
  auto sort = [](auto& order, const auto& before) {
    if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  };
  // A tile that shares no edge with another processor (it reads only given
  // data and its own actors' outputs, and nobody else reads its outputs)
  // runs in the depth-first order instead: with one processor and nothing
  // to wait for, every topological order of its actors finishes at the
  // same estimated time, and depth-first keeps each successor next to its
  // producer (a wavefront's row after row rather than anti-diagonals: the
  // successor's state is in cache, and fewer values are live at once).
  // Other tiles never wait for it, so no deadlock can come of it.
  std::vector<bool> isolated(tiles, true);
  for (std::size_t u = 0; u < n; ++u)
    for (const auto& [v, cost] : p.successors[u])
      if (v < n && r.proc[u] != r.proc[v]) {
        if (r.proc[u] < tiles) isolated[r.proc[u]] = false;
        if (r.proc[v] < tiles) isolated[r.proc[v]] = false;
      }
  auto depth_first = [&](ActorId a, ActorId b) { return r.depth_first[a] < r.depth_first[b]; };
  // Not on a worker process: there a successor right behind its producer
  // waits a round trip to the driver, where an actor of another chain would
  // be on the wire already (MachineModel::first_remote_tile).
  for (unsigned t = 0; t < tiles; ++t) {
    if (isolated[t] && t < first_remote_tile) {
      sort(s.tile_order[t], depth_first);
    } else {
      sort(s.tile_order[t], by_start);
    }
  }
  sort(s.driver_order, by_start);
  return s;
}

}  // namespace redflow
