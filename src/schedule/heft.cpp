// The generic HEFT core: upward ranks, the scheduling list, and
// insertion-based earliest-finish-time placement.
#include "schedule/heft.hpp"
#include "schedule/heft_predecessors.hpp"
#include "schedule/heft_slots.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

namespace redflow::schedule {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int forced_of(const HeftProblem& p, std::size_t task) {
  return task < p.forced.size() ? p.forced[task] : -1;
}

// A depth-first topological order: Kahn's algorithm with a stack, so a task
// that a placement makes ready comes next, before the other ready tasks
// (the successors of one task, and the sources, in index order). Ties in
// HEFT's list follow it, so equal-rank work (zero-cost graphs, the branches
// of a fan-out) is listed a path at a time and runs with few live data
// nodes, not a level at a time. Linear; deterministic. Shorter than the
// task count when there is a cycle.
HugePageVector<std::size_t> topological_order(const HeftProblem& p) {
  const std::size_t n = p.cost.size();
  HugePageVector<std::size_t> waiting(n, 0);
  for (std::size_t t = 0; t < n; ++t)
    for (const auto& [s, c] : p.successors[t])
      if (s < n) ++waiting[s];
  HugePageVector<std::size_t> ready;  // a stack: the top is taken first
  for (std::size_t t = n; t-- > 0;)
    if (waiting[t] == 0) ready.push_back(t);
  HugePageVector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t t = ready.back();
    ready.pop_back();
    order.push_back(t);
    const auto& succ = p.successors[t];
    for (std::size_t k = succ.size(); k-- > 0;)
      if (succ[k].task < n && --waiting[succ[k].task] == 0) ready.push_back(succ[k].task);
  }
  return order;
}

}  // namespace

CostMatrix::Row& CostMatrix::Row::operator=(std::initializer_list<double> values) {
  std::copy_n(values.begin(), std::min(values.size(), size()), begin());
  return *this;
}

CostMatrix::CostMatrix(std::initializer_list<std::initializer_list<double>> rows) {
  for (const auto& row : rows) push_back(std::span<const double>(row.begin(), row.size()));
}

void CostMatrix::assign(std::size_t tasks, std::span<const double> row) {
  tasks_ = tasks;
  width_ = row.size();
  ragged_.reset();
  values_.resize(tasks * width_);
  for (std::size_t t = 0; t < tasks; ++t) std::copy(row.begin(), row.end(), values_.begin() + static_cast<std::ptrdiff_t>(t * width_));
}

void CostMatrix::push_back(std::span<const double> row) {
  if (tasks_ == 0) width_ = row.size();
  if (row.size() != width_ && !ragged_) ragged_ = std::pair{tasks_, row.size()};
  for (std::size_t q = 0; q < width_; ++q) values_.push_back(q < row.size() ? row[q] : 0);
  ++tasks_;
}

void CostMatrix::emplace_back(std::size_t processors, double cost) {
  const std::vector<double> row(processors, cost);
  push_back(row);
}

Status check_heft_problem(const HeftProblem& p) {
  const std::size_t n = p.cost.size();
  if (p.processors == 0 && n > 0) return Status::InvalidArgument("HEFT problem has tasks but no processors");
  if (const auto ragged = p.cost.ragged())
    return Status::InvalidArgument("task " + std::to_string(ragged->first) + " has " + std::to_string(ragged->second) + " costs for " +
                                   std::to_string(p.processors) + " processors");
  if (p.successors.size() != n)
    return Status::InvalidArgument("HEFT problem: successors has " + std::to_string(p.successors.size()) +
                                   " entries for " + std::to_string(n) + " tasks");
  if (!p.forced.empty() && p.forced.size() != n)
    return Status::InvalidArgument("HEFT problem: forced has " + std::to_string(p.forced.size()) +
                                   " entries for " + std::to_string(n) + " tasks");
  for (std::size_t t = 0; t < n; ++t) {
    const std::string name = "task " + std::to_string(t);
    if (p.cost[t].size() != p.processors)
      return Status::InvalidArgument(name + " has " + std::to_string(p.cost[t].size()) + " costs for " +
                                     std::to_string(p.processors) + " processors");
    bool runnable = false;
    for (double c : p.cost[t]) {
      if (std::isnan(c) || c < 0) return Status::InvalidArgument(name + " has a negative or NaN cost");
      runnable = runnable || std::isfinite(c);
    }
    const int f = forced_of(p, t);
    if (f < -1 || f >= static_cast<int>(p.processors))
      return Status::InvalidArgument(name + " is forced to processor " + std::to_string(f) + " which does not exist");
    if (f >= 0 && !std::isfinite(p.cost[t][f]))
      return Status::InvalidArgument(name + " is forced to processor " + std::to_string(f) + " where it cannot run");
    if (!runnable) return Status::InvalidArgument(name + " cannot run on any processor");
    for (const auto& [s, c] : p.successors[t]) {
      if (s >= n) return Status::InvalidArgument(name + " has successor " + std::to_string(s) + " out of range");
      if (std::isnan(c) || c < 0 || !std::isfinite(c))
        return Status::InvalidArgument(name + " has a negative, NaN or infinite communication cost");
    }
  }
  if (!p.group.empty()) {
    if (p.group.size() != n)
      return Status::InvalidArgument("HEFT problem: group has " + std::to_string(p.group.size()) + " entries for " +
                                     std::to_string(n) + " tasks");
    std::vector<std::size_t> members;
    for (int g : p.group)
      if (g >= 0) {
        if (static_cast<std::size_t>(g) >= members.size()) members.resize(static_cast<std::size_t>(g) + 1, 0);
        if (++members[static_cast<std::size_t>(g)] > p.processors)
          return Status::InvalidArgument("HEFT problem: replica group " + std::to_string(g) + " has more tasks than there are processors");
      }
  }
  if (topological_order(p).size() != n) return Status::InvalidArgument("HEFT problem has a cycle");
  return Status::Ok();
}

HeftResult heft(const HeftProblem& p) {
  assert(check_heft_problem(p).ok());
  const std::size_t n = p.cost.size();
  const std::size_t procs = p.processors;
  HeftResult r;
  r.proc.assign(n, 0);
  r.start.assign(n, 0);
  r.finish.assign(n, 0);
  r.rank.assign(n, 0);

  HugePageVector<std::size_t> topo = topological_order(p);
  HugePageVector<std::size_t> topo_index(n, n);  // n = not reached (only on a cycle)
  for (std::size_t i = 0; i < topo.size(); ++i) topo_index[topo[i]] = i;

  // Predecessors with their comm costs, for data-ready times.
  const Predecessors preds(p);

  // Upward ranks in reverse topological order. Since costs are >= 0 and
  // floating-point addition and max are monotone, rank(pred) >= rank(succ)
  // holds exactly, which the list order below relies on.
  for (std::size_t i = topo.size(); i-- > 0;) {
    const std::size_t t = topo[i];
    double w = 0;
    const int f = forced_of(p, t);
    if (f >= 0 && static_cast<std::size_t>(f) < procs) {
      w = p.cost[t][f];
    } else {
      w = mean_finite_cost(p.cost[t]);
    }
    double tail = 0;
    for (const auto& [s, c] : p.successors[t])
      if (s < n) tail = std::max(tail, c + r.rank[s]);
    r.rank[t] = w + tail;
  }
  // Temporaries go as soon as they are used up: at 10^6 tasks each per-task
  // array is 8 MB, and HEFT's peak is the peak of a large graph's load.
  HugePageVector<std::size_t>().swap(topo);

  // The list: nonincreasing rank; equal ranks keep topological order, so a
  // predecessor always comes first (zero-cost tasks and edges make ties real).
  // Ranks are compared after rounding to a grid of 1e-12 x the largest rank,
  // so ranks equal in exact arithmetic but not in floating point (80 vs
  // 80.00000000000001 in the TPDS example) count as tied. Scaling by a
  // positive constant and rounding are monotone, so rank(pred) >= rank(succ)
  // survives the rounding.
  double max_rank = 0;
  for (double x : r.rank) max_rank = std::max(max_rank, x);
  r.order.resize(n);
  for (std::size_t t = 0; t < n; ++t) r.order[t] = t;
  {
    HugePageVector<double> key = r.rank;
    if (max_rank > 0 && std::isfinite(max_rank)) {
      const double quantum = max_rank * 1e-12;
      for (double& k : key) k = std::nearbyint(k / quantum);
    }
    auto listed_before = [&](std::size_t a, std::size_t b) {
      if (key[a] != key[b]) return key[a] > key[b];
      if (topo_index[a] != topo_index[b]) return topo_index[a] < topo_index[b];
      return a < b;
    };
    // Graphs built in order (a chain, most generators) are often listed
    // already: a linear check spares an O(n log n) sort.
    if (!std::is_sorted(r.order.begin(), r.order.end(), listed_before)) std::sort(r.order.begin(), r.order.end(), listed_before);
  }

  // Replica groups: members in index order, placed together (Algorithm 3).
  std::vector<std::vector<std::size_t>> groups;
  if (!p.group.empty())
    for (std::size_t t = 0; t < n; ++t)
      if (p.group[t] >= 0) {
        const auto g = static_cast<std::size_t>(p.group[t]);
        if (g >= groups.size()) groups.resize(g + 1);
        groups[g].push_back(t);
      }
  std::vector<bool> placed(n, false);
  std::vector<bool> taken(procs, false);  // processors used by the group being placed

  // Reserved for every task: untouched pages of a large reservation are not
  // resident, and growing by doubling would hold the old and new arrays at once.
  std::vector<HugePageVector<Busy>> busy(procs);
  for (auto& b : busy) b.reserve(n);
  auto place = [&](std::size_t t) {
    const int f = forced_of(p, t);
    double best_eft = kInf, best_start = 0;
    std::size_t best_proc = procs, best_pos = 0;
    for (std::size_t q = 0; q < procs; ++q) {
      if (f >= 0 && q != static_cast<std::size_t>(f)) continue;
      if (taken[q]) continue;
      const double duration = p.cost[t][q];
      if (!std::isfinite(duration)) continue;
      // Data-ready time: every input must have arrived; no transfer when the
      // producer ran on the same processor.
      double ready = 0;
      for (const auto& [pred, c] : preds.of(t)) ready = std::max(ready, r.finish[pred] + (r.proc[pred] == q ? 0 : c));
      const auto [start, pos] = earliest_slot(busy[q], ready, duration);
      if (start + duration < best_eft) {
        best_eft = start + duration;
        best_start = start;
        best_proc = q;
        best_pos = pos;
      }
    }
    placed[t] = true;
    if (best_proc == procs) {
      // Only reachable when check_heft_problem() fails: keep the result defined.
      r.proc[t] = 0;
      r.start[t] = r.finish[t] = kInf;
      r.makespan = kInf;
      return;
    }
    r.proc[t] = best_proc;
    r.start[t] = best_start;
    r.finish[t] = best_eft;
    busy[best_proc].insert(busy[best_proc].begin() + static_cast<std::ptrdiff_t>(best_pos), Busy{best_start, best_eft});
    r.makespan = std::max(r.makespan, best_eft);
  };
  // Without replica groups tasks are placed in list order: no second list.
  if (p.group.empty()) {
    for (std::size_t t : r.order) place(t);
    r.depth_first = std::move(topo_index);
    return r;
  }
  HugePageVector<std::size_t> placement_order;
  placement_order.reserve(n);
  for (std::size_t t : r.order) {
    if (placed[t]) continue;
    const int g = p.group[t];
    if (g < 0) {
      place(t);
      placement_order.push_back(t);
      continue;
    }
    for (std::size_t m : groups[static_cast<std::size_t>(g)]) {
      place(m);
      placement_order.push_back(m);
      taken[r.proc[m]] = true;
    }
    for (std::size_t m : groups[static_cast<std::size_t>(g)]) taken[r.proc[m]] = false;
  }
  r.order = std::move(placement_order);
  r.depth_first = std::move(topo_index);
  return r;
}

}  // namespace redflow::schedule
