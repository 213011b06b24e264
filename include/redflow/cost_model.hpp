// CostModel: what actors cost, measured. HEFT plans with each actor's `work`
// hint; an actor without one is otherwise estimated from the bytes it
// touches, which says nothing about a sleep, a solver or a digest. A
// CostModel keeps, per kind of actor execution, the mean and spread of its
// measured run times (StarPU's history-based performance models), learns
// them from execution traces, and sets `work` for the actors without a hint
// before a graph is loaded. It is kept across runs in a file, one per host
// (`redflow run --learn-costs`; docs/scheduling.md, "Measured costs").
//
// A kind is the actor's function, its args and the sizes of its inputs and
// output: args are part of the key since they often set the work (a tile's
// size, a task's time), as StarPU's footprints may hash a codelet's
// parameters.
//
// Thread-safety: none; one owner at a time. Two processes learning into one
// file each read it again just before writing it and replace it whole, so
// neither ever reads a torn file; a sample may be lost if both write at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"
#include "redflow/trace.hpp"

namespace redflow {

struct CostEntry {
  std::uint64_t runs = 0;   // samples in the mean (at most CostModel::kMemory)
  double mean_s = 0;
  double m2 = 0;            // sum of squared deviations (Welford), for the spread
  double far_s = 0;         // a sample far from the mean not taken in yet (0: none)
  std::uint64_t stale = 0;  // times the entry was found stale and started again
  double sd_s() const;
};

// What one call of CostModel::learn took in.
struct CostLearning {
  std::size_t samples = 0;   // actor runs measured
  std::size_t kinds = 0;     // distinct kinds among them
  std::size_t added = 0;     // kinds seen for the first time
  std::size_t restarted = 0; // kinds found stale: their runs were far from the model twice in a row
};

class CostModel {
 public:
  // The newest samples always weigh at least 1/kMemory: a model follows a
  // machine or a program that changes.
  static constexpr std::uint64_t kMemory = 64;
  // A sample is far from a model when it is more than kFar times its mean
  // or less than 1/kFar of it, and more than 4 spreads away; two far samples
  // on the same side in a row make the model stale: it starts again from them.
  static constexpr double kFar = 1.5;

  // The kind of `actor` in `g`: "FUNCTION|ARGS|IN1,IN2>OUT" (bytes).
  static std::string kind(const Graph& g, ActorId actor);

  // Takes in one measured run of an actor of kind `kind`.
  // Returns true when this run made the entry start again (stale).
  bool add(const std::string& kind, double seconds);
  const CostEntry* find(const std::string& kind) const;
  std::size_t size() const { return entries_.size(); }
  const std::map<std::string, CostEntry>& entries() const { return entries_; }

  // Takes in every actor run of `trace`, an execution of `g` (the user's
  // graph: replicas and copies count for the actor they stand for; compare
  // actors, and actors the registry runs on the driver or as aliases, are
  // not learned). Runs of a failed execution count too: they were measured.
  CostLearning learn(const Graph& g, const ExecutionTrace& trace, const Registry& registry);

  // Sets `work` of each actor of `g` that has no hint (work <= 0) and whose
  // kind has an entry, so HEFT plans it for its mean time: work = mean
  // seconds x cores_per_tile x ops_per_second_per_core (the machine model's
  // units). Special actors (on the driver, aliases) keep their cost of 0.
  // Returns how many actors got a measured cost.
  std::size_t apply(Graph& g, const Registry& registry, unsigned cores_per_tile = 1, double ops_per_second_per_core = 1e9) const;

  // Adds every entry of `other` (an older file's, read again before writing) that this model has not.
  void merge_missing(const CostModel& other);

  // The file: JSON, {"redflow_costs": 1, "kinds": [{"kind", "runs", "mean_s", "m2", "far_s", "stale"}...]}.
  // A missing file is an empty model; a malformed one an error naming it.
  static Result<CostModel> load(const std::string& path);
  // Writes to a temporary file beside `path` and renames it over `path`.
  Status save(const std::string& path) const;

 private:
  std::map<std::string, CostEntry> entries_;
};

}  // namespace redflow
