// The differential tester itself (tests/differential/): the reference
// interpreter computes what it should, the generator makes valid cases that
// use every actor kind, the runner catches a planted wrong result, a hang and
// a crash, reproducers survive a round trip, and the shrinker keeps a failure
// while it shrinks. The bounded seed run is a CTest of its own (difftest_seeds).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "actors.hpp"
#include "cli_helpers.hpp"
#include "generator.hpp"
#include "interpreter.hpp"
#include "isolate.hpp"
#include "reproducer.hpp"
#include "shrinker.hpp"

namespace redflow::difftest {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<std::int32_t> v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.begin(), b.size());
  return b;
}

TEST(DifftestInterpreter, ComputesInTopologicalOrder) {
  Graph g("t");
  DataId x = g.input("X", 8), k = g.constant("K", bytes_of({10, 20}));
  DataId s = g.inner("S", 8), y = g.output("Y", 8);
  g.actor("sort", "i32.sort", {s}, y);  // added first, runs second
  g.actor("add", "i32.add", {x, k}, s);
  const auto in = bytes_of({5, -100});
  Reference r = interpret(g, difftest_registry(), Inputs{{"X", in}});
  ASSERT_FALSE(r.failed) << r.error;
  EXPECT_EQ(r.outputs.at("Y"), bytes_of({-80, 15}));
}

TEST(DifftestInterpreter, ReportsTheActorThatFails) {
  Graph g("t");
  DataId f = g.input(kFailInput, 4), x = g.input("X", 3), y = g.output("Y", 5);
  g.actor("maybe", "dt.fail_if", {f, x}, y);
  const std::vector<std::byte> x_bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  const std::vector<std::byte> on{std::byte{1}, {}, {}, {}}, off(4);
  Reference bad = interpret(g, difftest_registry(), Inputs{{kFailInput, on}, {"X", x_bytes}});
  EXPECT_TRUE(bad.failed);
  EXPECT_NE(bad.error.find("actor 'maybe'"), std::string::npos) << bad.error;
  Reference good = interpret(g, difftest_registry(), Inputs{{kFailInput, off}, {"X", x_bytes}});
  ASSERT_FALSE(good.failed);
  // dt.mix over port 1 only (port 0 is the flag): out[i] = 2 * x[i mod 3].
  EXPECT_EQ(good.outputs.at("Y"), (std::vector<std::byte>{std::byte{2}, std::byte{4}, std::byte{6}, std::byte{2}, std::byte{4}}));
}

TEST(DifftestGenerator, IsDeterministicValidAndUsesEveryActorKind) {
  const Registry reg = difftest_registry();
  std::set<std::string> used;
  bool zero = false, slot_sized = false, beyond = false, per_actor = false, fan_in = false;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    Case c = generate(seed, {});
    EXPECT_EQ(c.graph.to_dot(), generate(seed, {}).graph.to_dot()) << "seed " << seed;
    ASSERT_TRUE(validate(c.graph, reg, c.options).ok()) << "seed " << seed << ": " << validate(c.graph, reg, c.options).ToString();
    ASSERT_FALSE(c.steps.empty());
    for (const ActorNode& a : c.graph.actors()) {
      used.insert(a.function);
      per_actor = per_actor || a.redundancy.has_value();
      fan_in = fan_in || a.inputs.size() > c.options.slots;
    }
    for (const DataNode& d : c.graph.data()) {
      zero = zero || d.bytes == 0;
      slot_sized = slot_sized || d.bytes == c.options.slot_bytes;
      beyond = beyond || d.bytes > c.options.slot_bytes;
    }
  }
  for (const std::string& f : reg.names()) EXPECT_TRUE(used.count(f)) << "no generated graph uses " << f;
  EXPECT_TRUE(zero && slot_sized && beyond && per_actor && fan_in);
}

// An actor that breaks the rules (it is not deterministic): the engine's run
// and the reference's differ, and the runner must say so.
std::atomic<unsigned> g_calls{0};
Registry planted_registry() {
  Registry reg = difftest_registry();
  reg.add("bad.counter", [](ActorContext& ctx) {
    auto out = ctx.output<std::uint8_t>();
    const auto v = static_cast<std::uint8_t>(g_calls.fetch_add(1) * 7 + 1);
    for (auto& b : out) b = v;
  });
  reg.add("bad.hang", [](ActorContext&) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
  reg.add("bad.crash", [](ActorContext&) { std::abort(); });
  return reg;
}

Case one_actor_case(const char* function) {
  Case c;
  c.options.tiles = 2;
  c.options.slots = 4;
  c.options.slot_bytes = 256;
  DataId x = c.graph.input("X", 8);
  c.graph.actor("a", function, {x}, c.graph.output("Y", 8));
  Step s;
  s.inputs["X"] = std::vector<std::byte>(8, std::byte{3});
  c.steps = {s, s};
  return c;
}

TEST(DifftestRunner, PassesAGoodCaseAndCatchesAWrongResult) {
  const Registry reg = planted_registry();
  EXPECT_EQ(run_isolated(one_actor_case("dt.mix"), reg, 30).outcome, Outcome::kPass);
  const Verdict v = run_isolated(one_actor_case("bad.counter"), reg, 30);
  EXPECT_EQ(v.outcome, Outcome::kMismatch) << describe(v);
  EXPECT_EQ(v.step, 0);
  EXPECT_NE(v.detail.find("output 'Y'"), std::string::npos) << v.detail;
}

TEST(DifftestRunner, ReportsHangsAndCrashesOfTheChild) {
  const Registry reg = planted_registry();
  EXPECT_EQ(run_isolated(one_actor_case("bad.hang"), reg, 1).outcome, Outcome::kHang);
  EXPECT_EQ(run_isolated(one_actor_case("bad.crash"), reg, 30).outcome, Outcome::kCrash);
}

TEST(DifftestRunner, NoneUnderFlipsIsSilentCorruptionNotAFinding) {
  Case c = one_actor_case("dt.mix");
  c.steps[0].inject = {"faulty-tile:0", "faulty-tile:1"};
  const Verdict v = run_isolated(c, difftest_registry(), 30);
  EXPECT_EQ(v.outcome, Outcome::kPass) << describe(v);
  EXPECT_EQ(v.silent_none, 1u);
}

// Every run of a 3x-same actor with a 1-byte output gets one of 8 bits
// flipped: a round where two runs got the same bit agrees on a wrong value (a
// double fault the injector reports), and any other round agrees on nothing.
// Every step either gives up or is a double fault; a wrong output the
// injector cannot account for would be a mismatch.
TEST(DifftestRunner, SameRunsHitAlikeAreDoubleFaultsAndOthersGiveUp) {
  Case c;
  c.options.tiles = 2;
  c.options.slots = 8;
  c.options.slot_bytes = 64;
  const DataId x = c.graph.input("X", 1);
  c.graph.actor("a", "dt.mix", {x}, c.graph.output("Y", 1));
  for (int k = 1; k <= 40; ++k) {
    Step s;
    s.inputs["X"] = std::vector<std::byte>(1, std::byte{3});
    s.redundancy = Redundancy::kTripleSame;
    s.inject = {"bitflip:p=1,seed=" + std::to_string(k)};
    c.steps.push_back(s);
  }
  const Verdict v = run_isolated(c, difftest_registry(), 60);
  EXPECT_EQ(v.outcome, Outcome::kPass) << describe(v);
  EXPECT_GT(v.double_faults, 0u) << "no round had two runs hit alike: the case shows nothing";
  EXPECT_EQ(v.double_faults + v.gave_up, v.steps) << describe(v);
}

TEST(DifftestReproducer, RoundTripsAndReplays) {
  const auto dir = std::filesystem::temp_directory_path() / ("redflow_difftest_" + std::to_string(getpid()));
  Case c = generate(7, {});
  Verdict v;
  ASSERT_TRUE(write_reproducer(c, v, dir.string(), "test").ok());
  auto back = read_reproducer(dir.string());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->graph.actors().size(), c.graph.actors().size());
  ASSERT_EQ(back->steps.size(), c.steps.size());
  for (std::size_t k = 0; k < c.steps.size(); ++k) {
    EXPECT_EQ(back->steps[k].inputs, c.steps[k].inputs);
    EXPECT_EQ(back->steps[k].inject, c.steps[k].inject);
    EXPECT_EQ(back->steps[k].redundancy, c.steps[k].redundancy);
  }
  EXPECT_EQ(back->options.tiles, c.options.tiles);
  EXPECT_EQ(back->options.scheduler, c.options.scheduler);
  EXPECT_TRUE(std::filesystem::exists(dir / "command"));
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(read_reproducer(dir.string()).ok());
}

TEST(DifftestShrinker, CutsActorsIntoInputsThatCarryTheReferenceValues) {
  const Registry reg = difftest_registry();
  Case c = generate(11, {});
  std::vector<bool> drop(c.graph.actors().size(), false);
  for (std::size_t a = 0; a < drop.size(); a += 2) drop[a] = true;
  Case cut = drop_actors(c, drop, reg);
  EXPECT_LT(cut.graph.actors().size(), c.graph.actors().size());
  ASSERT_TRUE(cut.graph.validate_structure().ok()) << cut.graph.validate_structure().ToString();
  // Every output the smaller graph still computes equals the original reference.
  Inputs in0, in1;
  for (const auto& [n, b] : c.steps[0].inputs) in0[n] = b;
  for (const auto& [n, b] : cut.steps[0].inputs) in1[n] = b;
  Reference a = interpret(c.graph, reg, in0), b = interpret(cut.graph, reg, in1);
  if (!a.failed) {
    for (const auto& [name, bytes] : b.outputs) EXPECT_EQ(bytes, a.outputs.at(name)) << name;
  }
}

TEST(DifftestShrinker, KeepsTheFailureWhileShrinking) {
  const Registry reg = planted_registry();
  Case c = generate(5, {});
  // Plant the broken actor at the end of a generated graph.
  DataId src = c.graph.find_data(c.steps[0].inputs.begin()->first).value();
  c.graph.actor("planted", "bad.counter", {src}, c.graph.output("planted_out", 16));
  c.options.scheduler = Scheduler::kHeft;
  for (Step& s : c.steps) {
    s.inject.clear();
    s.redundancy = Redundancy::kNone;  // a run twice on one tile would disagree with itself: not the failure planted here
  }
  const Verdict v = run_isolated(c, reg, 30);
  ASSERT_EQ(v.outcome, Outcome::kMismatch) << describe(v);
  ShrinkResult r = shrink(c, v, reg, {.budget_s = 60, .timeout_s = 30, .log = {}});
  EXPECT_EQ(r.verdict.outcome, Outcome::kMismatch);
  EXPECT_LE(r.smallest.graph.actors().size(), 2u) << graph_size(r.smallest.graph);
  EXPECT_EQ(r.smallest.steps.size(), 1u);
}

TEST(DifftestGenerator, ExclusionsNameTheBadClass) {
  auto e = parse_exclusions("user-compare,steal-failures");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->user_compare && e->steal_failures && !e->diff_faults && !e->mixed_redundancy);
  EXPECT_EQ(to_string(*e), "user-compare,steal-failures");
  auto bad = parse_exclusions("user-compare,bogus");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'bogus'"), std::string::npos) << bad.status().ToString();
  // Excluded classes do not appear in generated cases.
  Exclusions all{.user_compare = true, .mixed_redundancy = true, .diff_faults = true, .unaligned_split = true, .steal_failures = true};
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    Case c = generate(seed, {.exclude = all});
    for (const ActorNode& a : c.graph.actors()) EXPECT_NE(a.function, "rf.compare") << "seed " << seed;
    for (const Step& s : c.steps) EXPECT_FALSE(c.options.scheduler == Scheduler::kSteal && s.fail) << "seed " << seed;
  }
}

TEST(DifftestCli, BadSeedsAndClassesAreNamed) {
  auto r = redflow::testing::run_cli("difftest --seeds 9..2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--seeds '9..2'"), std::string::npos) << r.output;
  r = redflow::testing::run_cli("difftest --seeds 1..2 --exclude nonsense");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("'nonsense'"), std::string::npos) << r.output;
  r = redflow::testing::run_cli("difftest --seeds 1.. ");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--time-limit"), std::string::npos) << r.output;
}

TEST(DifftestCli, RunsSeedsAndPrintsTheSummary) {
  const auto out = std::filesystem::temp_directory_path() / ("redflow_difftest_cli_" + std::to_string(getpid()));
  auto r = redflow::testing::run_cli("difftest --seeds 1..20 --exclude user-compare,mixed-redundancy,diff-faults,steal-failures --out " +
                                     out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("difftest: 20 cases (seeds 1..20)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cases/s: 0 findings"), std::string::npos) << r.output;
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace redflow::difftest
