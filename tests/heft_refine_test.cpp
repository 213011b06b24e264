// The local search after HEFT (schedule::refine(), src/schedule/heft_refine.cpp;
// docs/scheduling.md "Refining the plan"): it never returns a worse or
// invalid schedule, it finds the better split HEFT's greedy placement
// misses on a workflow of long independent chains, it is deterministic,
// and heft_schedule() refines coarse graphs only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "heft_checks.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "schedule/heft.hpp"
#include "schedule/stg.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

using schedule::HeftProblem;
using schedule::HeftResult;
using testing::expect_valid;

const std::string kRefineStgData = REDFLOW_SHARED_DATA;

// Epigenomics' shape (the WfInstances trace hep-1seq-100k, scaled to 4 s):
// a split, nine chains of three short tasks and a long map, then a merge
// and a serial tail of 312 ms, on two identical processors, no
// communication cost. HEFT's longest-first placement of the maps leaves one
// processor 258 ms longer than the other.
constexpr double kEpiMaps[] = {0.443, 0.378, 0.407, 0.432, 0.427, 0.423, 0.417, 0.388, 0.252};
constexpr double kEpiTail = 0.312;

HeftProblem chains_problem() {
  HeftProblem p;
  p.processors = 2;
  auto task = [&](double cost) {
    p.cost.emplace_back(2, cost);
    p.successors.emplace_back();
    return p.cost.size() - 1;
  };
  const std::size_t split = task(0.010);
  std::vector<std::size_t> maps;
  for (double map : kEpiMaps) {
    std::size_t at = split;
    for (double small : {0.005, 0.003, 0.004}) {
      const std::size_t t = task(small);
      p.successors[at].push_back({t, 0});
      at = t;
    }
    const std::size_t m = task(map);
    p.successors[at].push_back({m, 0});
    maps.push_back(m);
  }
  const std::size_t merge = task(kEpiTail);
  for (std::size_t m : maps) p.successors[m].push_back({merge, 0});
  return p;
}

// The best makespan of whole chains over two processors: the split (10
// ms), the best split of the chains (three short tasks, 12 ms, and the
// map each; every subset tried), then the tail.
double best_chain_split() {
  constexpr std::size_t n = std::size(kEpiMaps);
  double best = 1e9;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    double a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) ((mask >> i) & 1 ? a : b) += kEpiMaps[i] + 0.012;
    best = std::min(best, std::max(a, b));
  }
  return 0.010 + best + kEpiTail;
}

TEST(HeftRefine, FindsTheSplitOfLongChainsThatHeftsGreedyPlacementMisses) {
  const HeftProblem p = chains_problem();
  ASSERT_TRUE(schedule::check_heft_problem(p).ok());
  const HeftResult heft = schedule::heft(p);
  const HeftResult refined = schedule::refine(p, heft, 1'000'000);
  expect_valid(p, refined);
  const double best = best_chain_split();
  std::printf("HEFT %.4f s, refined %.4f s, best split of whole chains %.4f s\n", heft.makespan, refined.makespan, best);
  EXPECT_GT(heft.makespan, best * 1.02) << "HEFT already found the split: the test shows nothing";
  EXPECT_LE(refined.makespan, best + 1e-9) << "the search did not find the best split of the chains";
}

TEST(HeftRefine, IsTheSameOnEveryRun) {
  const HeftProblem p = chains_problem();
  const HeftResult a = schedule::refine(p, schedule::heft(p), 1'000'000);
  const HeftResult b = schedule::refine(p, schedule::heft(p), 1'000'000);
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_TRUE(std::equal(a.proc.begin(), a.proc.end(), b.proc.begin(), b.proc.end()));
}

TEST(HeftRefine, ABudgetBelowTheTaskCountOrReplicaGroupsLeaveHeftsResult) {
  HeftProblem p = chains_problem();
  const HeftResult heft = schedule::heft(p);
  const HeftResult poor = schedule::refine(p, heft, p.cost.size() - 1);
  EXPECT_EQ(poor.makespan, heft.makespan);
  EXPECT_TRUE(std::equal(poor.proc.begin(), poor.proc.end(), heft.proc.begin(), heft.proc.end()));
  p.group.assign(p.cost.size(), -1);
  p.group[1] = p.group[2] = 0;  // not the same predecessors, but refine() must not even look
  const HeftResult grouped = schedule::refine(p, heft, 1'000'000);
  EXPECT_TRUE(std::equal(grouped.proc.begin(), grouped.proc.end(), heft.proc.begin(), heft.proc.end()));
}

// Every STG instance: refining never loses, never beats the optimum or a
// lower bound (a check of the search), and the schedules stay valid.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kRefineEvery = 4;
#else
constexpr int kRefineEvery = 1;
#endif

TEST(HeftRefine, NeverLosesOnTheStgSet) {
  int better = 0, count = 0, refined_count = 0;
  double heft_sum = 0, refined_sum = 0;
  for (const char* size : {"50", "100"}) {
    for (int procs : {2, 4, 8, 16}) {
      char csv[96];
      std::snprintf(csv, sizeof csv, "/stg/Optimal_values/Case%s_%d_OPT.csv", size, procs);
      FILE* f = std::fopen((kRefineStgData + csv).c_str(), "r");
      ASSERT_NE(f, nullptr) << kRefineStgData + csv;
      char line[256];
      while (std::fgets(line, sizeof line, f) != nullptr) {
        char file[128];
        int p_procs = 0;
        double lower = 0;
        if (std::sscanf(line, "%127[^,],%d,%lf", file, &p_procs, &lower) != 3) continue;
        // Under a sanitizer (ten times slower) every fourth case is refined;
        // the normal build refines them all.
        if (kRefineEvery > 1 && count % kRefineEvery != 0) {
          ++count;
          continue;
        }
        auto p = schedule::load_stg(kRefineStgData + "/stg/" + file, static_cast<std::size_t>(procs));
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        const HeftResult heft = schedule::heft(*p);
        const HeftResult refined = schedule::refine(*p, heft, 200'000);
        ASSERT_LE(refined.makespan, heft.makespan) << file << " on " << procs;
        EXPECT_GE(refined.makespan, lower - 1e-9) << file << " on " << procs;
        if (count % 97 == 0) expect_valid(*p, refined);
        better += refined.makespan < heft.makespan;
        heft_sum += heft.makespan / lower;
        refined_sum += refined.makespan / lower;
        ++count;
        ++refined_count;
      }
      std::fclose(f);
    }
  }
  std::printf("STG: refined better on %d of %d; mean over the optimum or lower bound: HEFT %.4f, refined %.4f\n", better,
              refined_count, heft_sum / refined_count, refined_sum / refined_count);
  EXPECT_EQ(count, 1440);
  EXPECT_EQ(refined_count, 1440 / kRefineEvery);
  EXPECT_GT(better, 0);
}

// heft_schedule() refines where actors are coarse (20 us on average or
// more) and leaves fine-grained graphs to HEFT: the same chains with
// microsecond actors keep HEFT's split.
TEST(HeftRefine, HeftScheduleRefinesCoarseGraphsOnly) {
  for (double scale : {1.0, 1e-5}) {
    Graph g("chains");
    const DataId x = g.input("X", 8);
    std::vector<DataId> outs;
    for (std::size_t i = 0; i < std::size(kEpiMaps); ++i) {
      const DataId d = g.inner(testing::numbered("d", static_cast<long long>(i)), 8);
      g.actor(testing::numbered("map", static_cast<long long>(i)), "f", {x}, d).work(kEpiMaps[i] * 1e9 * scale);
      outs.push_back(d);
    }
    g.actor("tail", "f", outs, g.output("Y", 8)).work(kEpiTail * 1e9 * scale);
    Registry reg;
    reg.add("f", [](ActorContext&) {});
    MachineModel m;
    m.tiles = 2;
    m.transfer_latency_s = 0;
    const HeftProblem p = heft_problem(g, m, reg);
    const HeftResult heft = schedule::heft(p);
    const Schedule s = heft_schedule(g, m, reg);
    if (scale == 1.0) {
      EXPECT_LT(s.makespan, heft.makespan * 0.98) << "a coarse graph was not refined";
    } else {
      EXPECT_EQ(s.makespan, heft.makespan) << "a fine-grained graph was refined";
    }
  }
}

}  // namespace
}  // namespace redflow
