// Local search after HEFT (schedule::refine(), docs/scheduling.md "Refining
// the plan"). HEFT places each task, in list order, where it finishes
// first: a greedy rule that cannot undo a choice. On a graph of a few long
// independent chains it splits them over the tiles as the longest-first
// rule does, up to a quarter more than the best split (9 chains of
// 250-440 ms over 2 tiles: one tile 258 ms longer than the other). Here
// the assignment is improved: a heavy task moved to another processor, or
// two heavy tasks on different processors swapped, and the schedule made
// again with HEFT's list and insertion policy on the changed assignment;
// kept if the makespan falls. Only improvements are kept, so the result is
// never worse than HEFT's (the same list on the same assignment gives the
// same schedule).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "schedule/heft.hpp"
#include "schedule/heft_predecessors.hpp"
#include "schedule/heft_slots.hpp"

namespace redflow::schedule {

namespace {

constexpr double kNoSchedule = std::numeric_limits<double>::infinity();
// Heavy tasks the search moves and swaps, at most: the costliest by mean
// cost. The long tasks decide a makespan; the short ones fill the gaps.
constexpr std::size_t kCandidates = 32;
// A change is kept when the makespan falls by more than this share of it
// (not floating-point noise).
constexpr double kGain = 1e-9;

// The schedule of HEFT's list on a fixed assignment: each task, in list
// order, on its processor at the earliest slot after its inputs arrive.
class Evaluator {
 public:
  Evaluator(const HeftProblem& p, const HeftResult& r) : p_(p), order_(r.order), preds_(p), busy_(p.processors) {
    start_.assign(p.cost.size(), 0);
    finish_.assign(p.cost.size(), 0);
  }

  // The makespan of `proc`; start() and finish() hold its times after.
  // Adds to `steps` what it cost: a step per task and per busy interval
  // looked at for a slot.
  double makespan(const HugePageVector<std::size_t>& proc, std::size_t& steps) {
    for (auto& b : busy_) b.clear();
    steps += order_.size();
    double makespan = 0;
    for (std::size_t t : order_) {
      const std::size_t q = proc[t];
      const double duration = p_.cost[t][q];
      if (!std::isfinite(duration)) return kNoSchedule;
      double ready = 0;
      for (const auto& [pred, c] : preds_.of(t)) ready = std::max(ready, finish_[pred] + (proc[pred] == q ? 0 : c));
      const auto [start, pos] = earliest_slot(busy_[q], ready, duration, &steps);
      start_[t] = start;
      finish_[t] = start + duration;
      busy_[q].insert(busy_[q].begin() + static_cast<std::ptrdiff_t>(pos), Busy{start, start + duration});
      makespan = std::max(makespan, start + duration);
    }
    return makespan;
  }
  const Predecessors& predecessors() const { return preds_; }
  const HugePageVector<double>& start() const { return start_; }
  const HugePageVector<double>& finish() const { return finish_; }

 private:
  const HeftProblem& p_;
  const HugePageVector<std::size_t>& order_;
  Predecessors preds_;
  HugePageVector<double> start_, finish_;
  std::vector<HugePageVector<Busy>> busy_;
};


}  // namespace

HeftResult refine(const HeftProblem& p, HeftResult r, std::size_t budget) {
  const std::size_t n = p.cost.size();
  if (n == 0 || p.processors < 2 || !p.group.empty() || !std::isfinite(r.makespan) || budget < n) return r;
  // The candidates: free tasks (not forced to a processor) costlier than
  // the mean free task, costliest first. The cheap ones fill gaps; moving
  // them only spends the budget.
  std::vector<std::size_t> heavy;
  double sum = 0;
  for (std::size_t t = 0; t < n; ++t)
    if (p.forced.empty() || p.forced[t] < 0) {
      heavy.push_back(t);
      sum += mean_finite_cost(p.cost[t]);
    }
  const double mean = heavy.empty() ? 0 : sum / static_cast<double>(heavy.size());
  std::erase_if(heavy, [&](std::size_t t) { const double c = mean_finite_cost(p.cost[t]); return c <= 0 || c < mean; });
  const std::size_t k = std::min(kCandidates, heavy.size());
  std::partial_sort(heavy.begin(), heavy.begin() + static_cast<std::ptrdiff_t>(k), heavy.end(), [&](std::size_t a, std::size_t b) {
    const double ca = mean_finite_cost(p.cost[a]), cb = mean_finite_cost(p.cost[b]);
    return ca != cb ? ca > cb : a < b;
  });
  heavy.resize(k);
  if (heavy.empty()) return r;

  // What moves with a heavy task: the task and its private ancestors, the
  // free predecessors whose only successor is the task (or another of
  // them): the head of a chain that only feeds it. Moved alone, the task
  // would wait for them on the other processor.
  Evaluator eval(p, r);
  std::vector<std::vector<std::size_t>> members(heavy.size());
  for (std::size_t i = 0; i < heavy.size(); ++i) {
    std::vector<std::size_t>& m = members[i];
    m.push_back(heavy[i]);
    for (std::size_t at = 0; at < m.size(); ++at)
      for (const auto& [pred, c] : eval.predecessors().of(m[at]))
        if ((p.forced.empty() || p.forced[pred] < 0) && p.successors[pred].size() == 1) m.push_back(pred);
  }
  auto fits = [&](std::size_t i, std::size_t q) {
    return std::all_of(members[i].begin(), members[i].end(), [&](std::size_t t) { return std::isfinite(p.cost[t][q]); });
  };
  HugePageVector<std::size_t> proc = r.proc;
  auto move = [&](std::size_t i, std::size_t q) {
    for (std::size_t t : members[i]) proc[t] = q;
  };
  std::size_t spent = 0;  // steps of Evaluator::makespan(), against the budget
  double best = eval.makespan(proc, spent);  // of `proc`, as the search goes
  // Tries the assignment as changed; keeps it if better. False once the
  // budget is spent.
  auto better = [&](bool& kept) {
    kept = false;
    if (spent >= budget) return false;
    const double m = eval.makespan(proc, spent);
    if (m < best * (1 - kGain)) {
      best = m;
      kept = true;
    }
    return true;
  };
  // Changes `proc` by `change`, which moves groups i and j (j may equal
  // i); keeps it if better, else puts it back. False once the budget is spent.
  std::vector<std::size_t> before;
  auto attempt = [&](std::size_t i, std::size_t j, auto&& change, bool& kept) {
    before.clear();
    for (std::size_t t : members[i]) before.push_back(proc[t]);
    for (std::size_t t : members[j]) before.push_back(proc[t]);
    change();
    const bool more = better(kept);
    if (!kept) {
      // In reverse: a task in both groups gets its first saved processor.
      std::size_t at = before.size();
      for (std::size_t x = members[j].size(); x-- > 0;) proc[members[j][x]] = before[--at];
      for (std::size_t x = members[i].size(); x-- > 0;) proc[members[i][x]] = before[--at];
    }
    return more;
  };
  // Passes of moves, then swaps, until a pass keeps nothing or the budget is spent.
  auto search = [&] {
    for (bool improved = true; improved;) {
      improved = false;
      for (std::size_t i = 0; i < heavy.size(); ++i)
        for (std::size_t q = 0; q < p.processors; ++q) {
          if (q == proc[heavy[i]] || !fits(i, q)) continue;
          bool kept = false;
          if (!attempt(i, i, [&] { move(i, q); }, kept)) return;
          if (kept) {
            improved = true;
            break;
          }
        }
      for (std::size_t i = 0; i < heavy.size(); ++i)
        for (std::size_t j = i + 1; j < heavy.size(); ++j) {
          const std::size_t qa = proc[heavy[i]], qb = proc[heavy[j]];
          if (qa == qb || !fits(i, qb) || !fits(j, qa)) continue;
          bool kept = false;
          if (!attempt(i, j, [&] { move(i, qb), move(j, qa); }, kept)) return;
          improved = improved || kept;
        }
    }
  };
  search();
  // Then kicks: from the best assignment found, one to three heavy tasks
  // sent to other processors at random and the search run again from there, while
  // the budget lasts (a local optimum of single moves and swaps can be far
  // from the best split: 9 chains need two-for-one exchanges). The random
  // numbers are seeded with the task count, so the result is the same on
  // every run.
  HugePageVector<std::size_t> best_proc = proc;
  double best_found = best;
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL ^ n;
  auto random = [&](std::size_t bound) {  // splitmix64
    std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::size_t>((z ^ (z >> 31)) % bound);
  };
  while (spent < budget) {
    proc = best_proc;
    const std::size_t kicks = 1 + random(3);
    for (std::size_t kick = 0; kick < kicks; ++kick) {
      const std::size_t i = random(heavy.size());
      const std::size_t q = (proc[heavy[i]] + 1 + random(p.processors - 1)) % p.processors;  // another processor
      if (fits(i, q)) move(i, q);
    }
    best = eval.makespan(proc, spent);
    search();
    if (best < best_found * (1 - kGain)) {
      best_found = best;
      best_proc = proc;
    }
  }
  if (!(best_found < r.makespan * (1 - kGain))) return r;
  proc = std::move(best_proc);
  std::size_t last = 0;
  r.makespan = eval.makespan(proc, last);
  r.proc = std::move(proc);
  r.start = eval.start();
  r.finish = eval.finish();
  return r;
}

}  // namespace redflow::schedule
