// Measured actor costs (CostModel; docs/scheduling.md, "Measured costs"):
// the model's arithmetic and file, learning from a real execution's trace,
// HEFT planning with what it learned, and the command line around it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "apps/apps.hpp"
#include "cli_helpers.hpp"
#include "redflow/redflow.hpp"

namespace redflow {
namespace {

TEST(CostModel, KeepsTheMeanAndSpreadOfEachKind) {
  CostModel m;
  for (double s : {0.010, 0.012, 0.011, 0.009}) EXPECT_FALSE(m.add("k", s));
  const CostEntry* e = m.find("k");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->runs, 4u);
  EXPECT_NEAR(e->mean_s, 0.0105, 1e-12);
  EXPECT_NEAR(e->sd_s(), std::sqrt((0.0005 * 0.0005 * 2 + 0.0015 * 0.0015 * 2) / 3), 1e-12);
  EXPECT_EQ(m.find("other"), nullptr);
  EXPECT_FALSE(m.add("k", -1.0));
  EXPECT_FALSE(m.add("k", std::nan("")));
  EXPECT_EQ(m.find("k")->runs, 4u) << "negative and NaN times are not measurements";
}

TEST(CostModel, OneFarRunIsIgnoredTwoInARowMakeTheKindStartAgain) {
  CostModel m;
  for (int i = 0; i < 5; ++i) m.add("k", 0.010);
  EXPECT_FALSE(m.add("k", 0.050));  // a descheduled thread, say
  EXPECT_EQ(m.find("k")->runs, 5u);
  EXPECT_FALSE(m.add("k", 0.010));  // back to normal: the far run is forgotten
  EXPECT_FALSE(m.add("k", 0.050));
  EXPECT_FALSE(m.add("k", 0.0101));
  EXPECT_NEAR(m.find("k")->mean_s, (5 * 0.010 + 0.010 + 0.0101) / 7, 1e-12);
  EXPECT_EQ(m.find("k")->stale, 0u);
  // The program or the machine changed: two far runs on the same side.
  EXPECT_FALSE(m.add("k", 0.040));
  EXPECT_TRUE(m.add("k", 0.042));
  EXPECT_EQ(m.find("k")->runs, 2u);
  EXPECT_NEAR(m.find("k")->mean_s, 0.041, 1e-12);
  EXPECT_EQ(m.find("k")->stale, 1u);
  // Far on both sides is noise, not a change.
  for (int i = 0; i < 5; ++i) m.add("j", 0.010);
  m.add("j", 0.050);
  EXPECT_FALSE(m.add("j", 0.001));
  EXPECT_EQ(m.find("j")->stale, 0u);
}

TEST(CostModel, TheNewestRunsKeepAWeight) {
  CostModel m;
  for (int i = 0; i < 1000; ++i) m.add("k", 0.010);
  EXPECT_EQ(m.find("k")->runs, CostModel::kMemory);
  // A slow drift (each run within the far bound) moves the mean within about kMemory runs, not 1000.
  double s = 0.010;
  for (int i = 0; i < 200; ++i) m.add("k", s = std::min(0.014, s * 1.01));
  EXPECT_GT(m.find("k")->mean_s, 0.0135);
}

TEST(CostModel, KindsAreFunctionArgsAndSizes) {
  Graph g("kinds");
  const DataId x = g.input("x", 8), y = g.input("y", 16);
  const DataId a = g.output("a", 8), b = g.output("b", 8), c = g.output("c", 8);
  g.actor("A", "wf.task", {x}, a).args("id=1,micros=100");
  g.actor("B", "wf.task", {x, y}, b).args("id=1,micros=100");
  g.actor("C", "wf.task", {x}, c).args("id=1,micros=100");
  EXPECT_EQ(CostModel::kind(g, 0), "wf.task|id=1,micros=100|8>8");
  EXPECT_EQ(CostModel::kind(g, 1), "wf.task|id=1,micros=100|8,16>8");
  EXPECT_EQ(CostModel::kind(g, 0), CostModel::kind(g, 2)) << "same function, args and sizes: one kind";
}

TEST(CostModel, ApplySetsWorkOnlyWithoutAHintAndNeverOnSpecialActors) {
  Graph g("apply");
  const DataId x = g.input("x", 8);
  const DataId a = g.inner("a", 8), b = g.inner("b", 8);
  const DataId o = g.output("o", 8);
  g.actor("A", "wf.task", {x}, a).args("id=1,micros=100");
  g.actor("B", "wf.task", {x}, b).args("id=2,micros=100").work(777);
  g.actor("D", "wf.digest", {a, b}, o);
  CostModel m;
  m.add(CostModel::kind(g, 0), 0.002);
  m.add(CostModel::kind(g, 1), 0.003);
  m.add(CostModel::kind(g, 2), 0.004);
  const Registry reg = apps::app_registry();
  EXPECT_EQ(m.apply(g, reg, /*cores_per_tile=*/2), 1u);
  EXPECT_DOUBLE_EQ(g.actor(0).work, 0.002 * 2 * 1e9) << "seconds x cores per tile x operations per second per core";
  EXPECT_DOUBLE_EQ(g.actor(1).work, 777) << "a hint wins";
  EXPECT_EQ(g.actor(2).work, 0) << "wf.digest runs on the driver: its cost stays 0";
}

TEST(CostModel, AFileReadsBackTheSameAndABadOneIsANamedError) {
  const auto dir = ::test_scratch_path("redflow_costs");
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "sub" / "costs.json").string();
  auto empty = CostModel::load(file);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->size(), 0u) << "a missing file is an empty model";
  CostModel m;
  for (double s : {0.5, 0.25, 0.75}) m.add("f|a=1|8>8", s);
  m.add("g||>4", 1e-6);
  m.add("g||>4", 1.0);  // far: kept aside
  ASSERT_TRUE(m.save(file).ok());
  auto back = CostModel::load(file);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  for (const auto& [k, e] : m.entries()) {
    const CostEntry* b = back->find(k);
    ASSERT_NE(b, nullptr) << k;
    EXPECT_EQ(b->runs, e.runs);
    EXPECT_DOUBLE_EQ(b->mean_s, e.mean_s);
    EXPECT_DOUBLE_EQ(b->m2, e.m2);
    EXPECT_DOUBLE_EQ(b->far_s, e.far_s);
  }
  for (const char* text : {"not json", "{\"kinds\": []}", "{\"redflow_costs\": 1, \"kinds\": [{\"kind\": \"k\", \"runs\": -1, \"mean_s\": 1, "
                                                         "\"m2\": 0, \"far_s\": 0, \"stale\": 0}]}",
                           "{\"redflow_costs\": 1, \"kinds\": [{\"kind\": \"k\", \"runs\": 1, \"mean_s\": 1, \"m2\": 0, \"far_s\": 0, "
                           "\"stale\": 0}, {\"kind\": \"k\", \"runs\": 1, \"mean_s\": 2, \"m2\": 0, \"far_s\": 0, \"stale\": 0}]}"}) {
    std::ofstream(file, std::ios::trunc) << text;
    auto bad = CostModel::load(file);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(file), std::string::npos) << bad.status().ToString();
  }
  std::filesystem::remove_all(dir);
}

// Five independent tasks on 2 tiles, one 8 times as long as the others. Without
// hints HEFT sees five equal costs (the same bytes) and puts two others with
// the long one; with the costs measured in one execution it plans as with
// exact hints: the long one alone. (The gap is wide so that a loaded machine,
// which can make a 10 ms sleep take twice as long, does not change the plan.)
constexpr unsigned kMicros[] = {80000, 10000, 10000, 10000, 10000};

Graph fork_of_tasks(bool exact_hints) {
  Graph g("fork");
  const DataId x = g.input("x", 8);
  for (unsigned i = 0; i < 5; ++i) {
    // Appended, not `"t" + std::to_string(i)`: GCC 12 at -O3 reports a false
    // -Wrestrict in the inlined operator+.
    std::string task = "t", out = "o", args = "id=";
    task += std::to_string(i);
    out += std::to_string(i);
    args += std::to_string(i);
    args += ",micros=";
    args += std::to_string(kMicros[i]);
    auto a = g.actor(task, "wf.task", {x}, g.output(out, 8)).args(args);
    if (exact_hints) a.work(kMicros[i] * 1e3);
  }
  return g;
}

// The plan's makespan with the tasks' true times: the busiest tile's sum.
double true_makespan(const Schedule& s) {
  double worst = 0;
  for (const auto& order : s.tile_order) {
    double sum = 0;
    for (ActorId a : order) sum += kMicros[a] * 1e-6;
    worst = std::max(worst, sum);
  }
  return worst;
}

TEST(CostModel, HeftPlansWithCostsLearnedInOneExecutionAsWellAsWithExactHints) {
  const Registry reg = apps::app_registry();
  const std::vector<std::byte> x(8, std::byte{1});
  auto plan_of = [&](const Graph& g) {
    Runtime rt({.tiles = 2});
    auto loaded = rt.load(g, reg);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return true_makespan(loaded->heft_schedule());
  };
  const double exact = plan_of(fork_of_tasks(true));
  EXPECT_NEAR(exact, 0.080, 1e-9) << "exact hints: the long task alone on a tile";
  const Graph unhinted = fork_of_tasks(false);
  const double guessed = plan_of(unhinted);
  ASSERT_GE(guessed, 1.2 * exact) << "the premise: without hints HEFT cannot tell the tasks apart";

  // One execution, traced, and the model learns from it.
  Runtime rt({.tiles = 2, .trace = true});
  auto loaded = rt.load(unhinted, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->execute({{"x", x}}).ok());
  CostModel m;
  const CostLearning l = m.learn(unhinted, loaded->last_trace(), reg);
  EXPECT_EQ(l.samples, 5u);
  EXPECT_EQ(l.kinds, 5u);
  EXPECT_EQ(l.added, 5u);
  for (ActorId a = 0; a < 5; ++a) {
    const CostEntry* e = m.find(CostModel::kind(unhinted, a));
    ASSERT_NE(e, nullptr) << a;
    // A sleep takes at least its time; a loaded machine may add to it.
    EXPECT_GE(e->mean_s, kMicros[a] * 1e-6 * 0.99) << a;
    EXPECT_LT(e->mean_s, kMicros[a] * 1e-6 * 4) << a;
  }
  Graph learned = unhinted;
  EXPECT_EQ(m.apply(learned, reg), 5u);
  EXPECT_LE(plan_of(learned), 1.05 * exact);
}

// The command line: a run learns into --costs FILE, `schedule` then says it
// plans with it, and a file the model cannot read loses nothing.
class CostCli : public testing::CliTest {};

TEST_F(CostCli, ARunLearnsIntoTheFileAndTheScheduleUsesIt) {
  std::ostringstream dot;
  dot << "digraph fork {\n  x [kind=input, bytes=8];\n";
  for (unsigned i = 0; i < 5; ++i)
    dot << "  o" << i << " [kind=output, bytes=8];\n  t" << i << " [actor=\"wf.task\", args=\"id=" << i << ",micros=" << kMicros[i]
        << "\"];\n  x -> t" << i << " [port=0]; t" << i << " -> o" << i << ";\n";
  dot << "}\n";
  write("fork.dot", dot.str());
  write("x.bin", std::string(8, 'x'));
  const std::string costs = path("costs.json");
  const std::string common = path("fork.dot") + " --tiles 2 --costs " + costs;
  auto before = testing::run_cli("schedule " + common + " --no-calibrate");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  EXPECT_EQ(before.output.find("costs:"), std::string::npos) << "no model yet:\n" << before.output;

  auto learn = testing::run_cli("run " + common + " -i x=" + path("x.bin") + " --learn-costs");
  ASSERT_EQ(learn.exit_code, 0) << learn.output;
  EXPECT_NE(learn.output.find("learned costs: 5 actor run(s) of 5 kind(s) from 1 execution(s), 5 kind(s) new"), std::string::npos)
      << learn.output;
  auto model = CostModel::load(costs);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->size(), 5u);

  auto after = testing::run_cli("schedule " + common + " --no-calibrate");
  ASSERT_EQ(after.exit_code, 0) << after.output;
  EXPECT_NE(after.output.find("costs: 5 of 5 actor(s) without a work= hint are planned with measured costs (" + costs + ")"),
            std::string::npos)
      << after.output;
  // t0 is planned for its measured 80 ms or more (a sleep never takes less), not the nanoseconds its 16 bytes would give.
  const auto t0 = after.output.find("\nt0 ");
  ASSERT_NE(t0, std::string::npos) << after.output;
  const std::string row = after.output.substr(t0 + 1, after.output.find('\n', t0 + 1) - t0 - 1);
  ASSERT_TRUE(row.ends_with(" ms")) << row;
  EXPECT_GE(std::stod(row.substr(row.rfind(' ', row.size() - 4) + 1)), 79.9) << row;
  auto ignored = testing::run_cli("schedule " + common + " --no-calibrate --no-learned-costs");
  EXPECT_EQ(ignored.output.find("costs:"), std::string::npos) << ignored.output;

  auto run = testing::run_cli("run " + common + " -i x=" + path("x.bin"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("5 of 5 actor(s) without a work= hint are planned with measured costs"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("learned costs"), std::string::npos) << "without --learn-costs the model is only read:\n" << run.output;
}

TEST_F(CostCli, AModelThatCannotBeReadIsNamedAndKept) {
  write("g.dot", "digraph g {\n  x [kind=input, bytes=8];\n  o [kind=output, bytes=8];\n"
                 "  t [actor=\"wf.task\", args=\"id=1,micros=100\"];\n  x -> t [port=0]; t -> o;\n}\n");
  write("x.bin", std::string(8, 'x'));
  write("costs.json", "{ torn");
  const std::string common = path("g.dot") + " --tiles 2 -i x=" + path("x.bin") + " --costs " + path("costs.json");
  auto learn = testing::run_cli("run " + common + " --learn-costs");
  EXPECT_EQ(learn.exit_code, 2) << learn.output;
  EXPECT_NE(learn.output.find("cost model '" + path("costs.json") + "' is not one redflow wrote"), std::string::npos) << learn.output;
  std::ifstream in(path("costs.json"));
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "{ torn") << "the file is left as it was";
  auto plain = testing::run_cli("run " + common);
  EXPECT_EQ(plain.exit_code, 0) << "a run that only reads the model goes on without it:\n" << plain.output;
  EXPECT_NE(plain.output.find("planning with work= hints and bytes touched"), std::string::npos) << plain.output;
  auto both = testing::run_cli("run " + common + " --learn-costs --no-learned-costs");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("contradict"), std::string::npos) << both.output;
}

}  // namespace
}  // namespace redflow
