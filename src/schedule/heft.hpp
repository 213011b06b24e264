// HEFT (Topcuoglu, Hariri, Wu, IEEE TPDS 2002) with the driver rule of
// Kühbacher et al. (SAC'22, Algorithm 2).
//
// Two layers:
//  - schedule::heft(), a generic core over an abstract HeftProblem (tasks,
//    heterogeneous processors, communication costs). It knows nothing about
//    Graph so that it can be checked against the literature (the TPDS example,
//    the Kasahara STG set) and reused for redundant schedules (Algorithm 3).
//  - heft_schedule(), the adapter that turns a Graph + MachineModel into a
//    HeftProblem (compute tiles + one driver processor) and the result into a
//    public Schedule.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/huge_page_allocator.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "redflow/small_vector.hpp"
#include "redflow/status.hpp"

namespace redflow::schedule {

// Each task's cost on each processor, cost[task][proc]: one array of
// tasks x processors, where a vector per task cost 56 bytes a task at 3
// processors instead of 24 (HEFT's temporaries are the peak of a large
// graph's load). Rows are added whole; a row whose length differs from the
// first row's is kept as a fact check_heft_problem() reports, not stored.
class CostMatrix {
 public:
  // A row that can be assigned a list of costs: cost[t] = {1, 2}.
  class Row : public std::span<double> {
   public:
    using std::span<double>::span;
    Row(std::span<double> s) : std::span<double>(s) {}  // NOLINT: a row is a span
    Row& operator=(std::initializer_list<double> values);
  };

  CostMatrix() = default;
  CostMatrix(std::initializer_list<std::initializer_list<double>> rows);
  // `tasks` rows, each a copy of `row`.
  void assign(std::size_t tasks, std::span<const double> row);
  void assign(std::size_t tasks, const std::vector<double>& row) { assign(tasks, std::span<const double>(row)); }
  void push_back(std::span<const double> row);
  void push_back(const std::vector<double>& row) { push_back(std::span<const double>(row)); }
  void emplace_back(std::size_t processors, double cost);  // a row of `processors` equal costs

  std::size_t size() const { return tasks_; }
  bool empty() const { return tasks_ == 0; }
  std::size_t width() const { return width_; }
  Row operator[](std::size_t task) { return Row(values_.data() + task * width_, width_); }
  std::span<const double> operator[](std::size_t task) const { return {values_.data() + task * width_, width_}; }
  // The first task whose row's length differed from the first row's, and that length.
  std::optional<std::pair<std::size_t, std::size_t>> ragged() const { return ragged_; }

 private:
  std::size_t tasks_ = 0, width_ = 0;
  HugePageVector<double> values_;
  std::optional<std::pair<std::size_t, std::size_t>> ragged_;
};

// An edge of the task graph: the successor, and the communication cost paid
// when the two tasks run on different processors (0 on the same one).
struct Successor {
  std::size_t task;
  double cost;
};

struct HeftProblem {
  std::size_t processors = 0;                     // heterogeneous processors 0..P-1
  CostMatrix cost;                                // cost[task][proc] >= 0; +inf = cannot run there
  // Per task, its successors. Most tasks have one, kept inline: a
  // million-task chain allocates no list of its own.
  HugePageVector<SmallVector<Successor>> successors;
  // Optional (empty = all free): per task the processor it must run on, -1 =
  // free. This is the paper's driver rule; a forced task still gets a start and
  // finish time, because its successors' times depend on them.
  HugePageVector<int> forced;
  // Optional (empty = none): per task a replica group, -1 = none. The tasks of
  // one group (replicas of one actor, Algorithm 3 of Kühbacher et al.) are
  // placed consecutively, when the first of them comes up in the list, each
  // on a processor no other member of the group uses. Members must have the
  // same predecessors.
  std::vector<int> group;
};

struct HeftResult {
  HugePageVector<std::size_t> proc;     // per task
  HugePageVector<double> start, finish;  // per task
  HugePageVector<double> rank;          // per task: upward rank
  HugePageVector<std::size_t> order;    // the HEFT list: tasks in the order they were placed
  // Per task: its position in the depth-first topological order that breaks
  // ties (of ranks here; of start and finish times in heft_schedule()).
  HugePageVector<std::size_t> depth_first;
  double makespan = 0;
};

// Says what is wrong with `p`, if anything: sizes, negative/NaN costs, a task
// that can run nowhere, successor or forced indices out of range, a cycle.
Status check_heft_problem(const HeftProblem& p);

// Runs HEFT. Requires check_heft_problem(p).ok() (debug builds assert it; on a
// problem that violates it the result is defined but meaningless).
//  - w̄(task): mean of the finite costs; for a forced task the cost on its
//    processor, since that is where it will run. c̄ = the given comm cost.
//  - List: nonincreasing upward rank (compared at a resolution of 1e-12 of
//    the largest rank, so floating-point noise does not break exact ties),
//    ties by position in a depth-first topological order (Kahn's algorithm
//    with a stack: what a task makes ready comes next; successors and
//    sources in index order), so the list is itself a topological order
//    even with zero-cost tasks and edges, and equal-rank work is listed a
//    path at a time rather than a level at a time.
//  - Placement: insertion-based EFT; ties between processors go to the lowest
//    index. Deterministic.
HeftResult heft(const HeftProblem& p);

// A plan is coarse when its actors on compute tiles are planned for at
// least this long on average: some hundred times what refining the plan
// costs per actor at load (refine(), within 1 % of the makespan) and what
// watching for a tile that falls behind costs an actor as it runs (a clock
// read and two stores: runtime/adaptive_heft.cpp). Only coarse plans are
// refined and adapt; finer graphs are dispatch-bound and keep HEFT's plan.
inline constexpr double kCoarseMeanCostS = 20e-6;

// HEFT's result improved by local search (heft_refine.cpp): the costliest
// free tasks moved to another processor, or two of them on different
// processors swapped, the schedule made again with r's list and the
// insertion policy, each change kept if the makespan falls. Never worse
// than `r`; r itself when nothing better is found, when `p` has replica
// groups, or when `budget` is below the task count. `budget` is in steps:
// each schedule made again costs one per task and one per busy interval
// looked at for a slot. Deterministic.
HeftResult refine(const HeftProblem& p, HeftResult r, std::size_t budget);

}  // namespace redflow::schedule

namespace redflow {

// Algorithm 2's rule: true if `actor` must run on the driver: its function's
// spec says on_driver, or its distinct input data nodes + 1 output exceed
// m.slots ("too many inputs"), or one of its input/output data nodes is larger
// than m.slot_bytes ("processes too much data"), or there are no compute
// tiles. Unknown functions count as ordinary compute actors. The online
// (work-stealing) scheduler must use the same rule.
bool runs_on_driver(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg);
// Why runs_on_driver() is true, in words for a user ("its output 'Y' has 4096
// bytes, more than a slot's 16 (--slot-bytes)"); empty when it is false.
std::string driver_reason(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg);

// True if `actor` is a compare actor (ActorAlias::kVote) over a replica group
// of the redundancy transformation (Fig. 3): 2 or 3 inputs, each an inner
// data node read only by it, written by its own compute-tile actor. The
// engine and HEFT then vote on checksums and place the producers as replicas
// on distinct tiles. Any other compare (over graph inputs, say) is an
// ordinary driver actor whose function compares the bytes.
bool votes_on_replicas(const Graph& g, ActorId actor, const MachineModel& m, const Registry& reg);

// The HEFT problem for `g` on `m`: task i = actor i; processors 0..m.tiles-1
// are the compute tiles and processor m.tiles is the driver. Actors that
// runs_on_driver() are forced there; others cannot use it (+inf cost), as in
// Algorithm 2. Costs in seconds (see docs/scheduling.md).
schedule::HeftProblem heft_problem(const Graph& g, const MachineModel& m, const Registry& reg);

// HEFT schedule of a structurally valid graph. The driver appears as
// kDriverTile. Each tile_order (and driver_order) is sorted by (start, finish,
// HEFT list position); sorting all actors that way gives a topological order,
// so tiles that run their order and wait for inputs cannot deadlock. A tile
// that shares no edge with another processor is sorted by the depth-first
// topological order instead (same estimated finish; better locality), unless
// it is a worker process (MachineModel::first_remote_tile).
Schedule heft_schedule(const Graph& g, const MachineModel& m, const Registry& reg);
// The Schedule of a HEFT result for problem `p` over n actors on `tiles`
// compute tiles (the processor `tiles` is the driver), tile orders sorted as
// heft_schedule() says; tiles from `first_remote_tile` on are never sorted
// depth-first (MachineModel::first_remote_tile).
Schedule schedule_of(const schedule::HeftProblem& p, const schedule::HeftResult& r, std::size_t n, unsigned tiles,
                     unsigned first_remote_tile);

}  // namespace redflow
