// Redundancy where replicas are re-executed (voting rounds): with few slots,
// results of a rejected round are displaced to main memory, and nothing may
// ever hand those stale bytes out again. Campaigns with split and
// collect, 2-4 slots, both schedulers, every redundant configuration.
#include <gtest/gtest.h>

#include "test_graphs.hpp"

namespace redflow {
namespace {

// Bytes per sorted block (256 int32). Two runs of one vote that flip the same
// bit agree on a wrong value, which no vote can detect; with 8192 bits that
// is rare (p^2 / 8192 per vote). Fault decisions are hashes, so these
// campaigns are repeatable: their seeds flip no two runs of a vote alike
// (seed 2, for one, does so in execution 122 of sort12).
constexpr std::size_t kRoundBlock = 1024;

struct Campaign {
  Scheduler scheduler;
  Redundancy redundancy;
  unsigned slots;
};

std::string name_of(const Campaign& c) {
  return std::string(to_string(c.scheduler)) + "/" + to_string(c.redundancy) + "/" + std::to_string(c.slots) + " slots";
}

// A small campaign: `runs` executions with bit flips; every one must return
// the fault-free outputs, and every injected fault must have been caught.
void expect_no_silent_corruption(const Campaign& c, bool collect, unsigned runs, std::uint64_t seed) {
  const std::string where = name_of(c) + (collect ? " collect" : " outputs") + " seed " + std::to_string(seed);
  const Registry reg = Registry::with_builtins();
  const Graph g = testing::split_sort(16, kRoundBlock, collect);
  RuntimeOptions o;
  o.tiles = 3;
  o.slots = c.slots;
  o.slot_bytes = kRoundBlock;
  o.scheduler = c.scheduler;
  o.redundancy = c.redundancy;
  o.quarantine_after = 0;  // bit-exact repeatable fault decisions
  o.faults.bitflip_probability = 0.05;
  o.faults.seed = seed;
  Runtime rt(o);
  auto loaded = rt.load(g, reg);
  ASSERT_TRUE(loaded.ok()) << where << ": " << loaded.status().ToString();
  const std::vector<std::byte> x = testing::random_bytes(g.data(*g.find_data("X")).bytes, static_cast<std::uint32_t>(seed));
  const Inputs in{{"X", x}};
  const Outputs expected = testing::run_sequential(g, reg, in);
  std::uint64_t injected = 0, reexecuted = 0;
  unsigned silent = 0;
  for (unsigned run = 0; run < runs; ++run) {
    auto out = loaded->execute(in);
    ASSERT_TRUE(out.ok()) << where << " run " << run << ": " << out.status().ToString();
    silent += *out != expected;
    const ExecutionStats& st = loaded->last_stats();
    injected += st.injected_faults;
    reexecuted += st.reexecutions;
    EXPECT_EQ(st.detected_faults, st.injected_faults) << where << " run " << run;
  }
  EXPECT_EQ(silent, 0u) << where << ": runs whose outputs differ from the fault-free reference";
  EXPECT_GT(injected, 0u) << where;
  EXPECT_GT(reexecuted, 0u) << where << ": no vote failed, so no stale round was ever made";
}

class FewSlots : public ::testing::TestWithParam<Campaign> {};

TEST_P(FewSlots, RejectedRoundsNeverReachTheOutputThroughACollect) {
  for (std::uint64_t seed : {1, 3, 6}) expect_no_silent_corruption(GetParam(), true, 150, seed);
}

TEST_P(FewSlots, RejectedRoundsNeverReachGraphOutputs) {
  for (std::uint64_t seed : {4, 5}) expect_no_silent_corruption(GetParam(), false, 150, seed);
}

// 3x-same needs an input and three results in slots: 4 is its minimum.
INSTANTIATE_TEST_SUITE_P(
    BothSchedulers, FewSlots,
    ::testing::Values(Campaign{Scheduler::kHeft, Redundancy::kDoubleDiff, 2}, Campaign{Scheduler::kHeft, Redundancy::kDoubleDiff, 3},
                      Campaign{Scheduler::kHeft, Redundancy::kTripleDiff, 2}, Campaign{Scheduler::kHeft, Redundancy::kTripleDiff, 3},
                      Campaign{Scheduler::kHeft, Redundancy::kDoubleSame, 3}, Campaign{Scheduler::kHeft, Redundancy::kTripleSame, 4},
                      Campaign{Scheduler::kSteal, Redundancy::kDoubleDiff, 2}, Campaign{Scheduler::kSteal, Redundancy::kDoubleDiff, 3},
                      Campaign{Scheduler::kSteal, Redundancy::kTripleDiff, 2}, Campaign{Scheduler::kSteal, Redundancy::kTripleDiff, 3},
                      Campaign{Scheduler::kSteal, Redundancy::kDoubleSame, 3}, Campaign{Scheduler::kSteal, Redundancy::kTripleSame, 4}),
    [](const auto& info) {
      std::string n = std::string(to_string(info.param.scheduler)) + "_" + to_string(info.param.redundancy) + "_slots" +
                      std::to_string(info.param.slots);
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

}  // namespace
}  // namespace redflow
