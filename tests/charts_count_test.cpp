// Charts and traces that do not mislead: stats and trace count the same
// transfers, a successful vote looks different from a failed one and sits on
// the driver, and a quarantined tile's row says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "redflow/redflow.hpp"

namespace {

redflow::Graph sort_graph() {
  redflow::Graph g("s");
  auto x = g.input("X", 64);
  auto y = g.output("Y", 64);
  g.actor("sort", "i32.sort", {x}, y);
  return g;
}

std::vector<std::int32_t> inputs() {
  std::vector<std::int32_t> xs(16);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<std::int32_t>(16 - i);
  return xs;
}

TEST(ChartsAndCounts, StatsAndTraceCountTheSameTransfers) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  for (auto r : {redflow::Redundancy::kNone, redflow::Redundancy::kTripleDiff}) {
    redflow::Runtime rt({.tiles = 3, .redundancy = r, .trace = true});
    auto loaded = rt.load(sort_graph(), reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto xs = inputs();
    ASSERT_TRUE(loaded->execute({{"X", redflow::as_bytes_of(xs)}}).ok());
    EXPECT_EQ(loaded->last_stats().transfers, loaded->last_trace().transfers.size()) << redflow::to_string(r);
  }
}

TEST(ChartsAndCounts, SuccessfulVotesAreGreenOnTheDriverAndQuarantinedRowsAreLabelled) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  redflow::FaultInjection faults;
  faults.faulty_tiles = {1};
  redflow::Runtime rt({.tiles = 4, .redundancy = redflow::Redundancy::kTripleDiff, .faults = faults, .quarantine_after = 1, .trace = true});
  auto loaded = rt.load(sort_graph(), reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto xs = inputs();
  ASSERT_TRUE(loaded->execute({{"X", redflow::as_bytes_of(xs)}}).ok());
  const auto& trace = loaded->last_trace();
  bool quarantined = false, voted = false;
  for (const auto& m : trace.marks) {
    if (m.what == "vote") {
      voted = true;
      EXPECT_EQ(m.tile, redflow::kDriverTile) << "votes are the driver's: " << m.detail;
    }
    quarantined |= m.what == "quarantine" && m.tile == 1;
  }
  ASSERT_TRUE(voted);
  ASSERT_TRUE(quarantined);
  const std::string svg = redflow::to_gantt_svg(trace, *loaded->executed_graph(redflow::Redundancy::kTripleDiff));
  EXPECT_NE(svg.find("tile 1 (quarantined)"), std::string::npos);
  // Each mark: its title names what it is, then its line's colour.
  for (std::size_t at = svg.find("<g class=\"mark\"><title>"); at != std::string::npos; at = svg.find("<g class=\"mark\"><title>", at + 1)) {
    const std::string title = svg.substr(at + 23, svg.find('<', at + 23) - at - 23);
    const std::size_t stroke = svg.find("stroke=\"", at);
    const std::string colour = svg.substr(stroke + 8, 7);
    if (title.starts_with("vote:")) {
      EXPECT_EQ(colour, "#2ca02c") << title;
    } else {
      EXPECT_EQ(colour, "#d62728") << title;
    }
  }
  EXPECT_NE(svg.find("vote (replicas agreed)"), std::string::npos) << "the legend explains the green mark";
}

}  // namespace
