// RunReport (redflow/report.hpp): each model's run reported in the one shape,
// its JSON parsed back and checked against the model's own result.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"

namespace redflow {
namespace {

nlohmann::json parsed(const RunReport& r) { return nlohmann::json::parse(to_json(r)); }

std::uint64_t units_of_places(const nlohmann::json& j) {
  std::uint64_t n = 0;
  for (const auto& p : j["places"]) n += p["units"].get<std::uint64_t>();
  return n;
}

TEST(RunReport, AGraphExecutionUnderRedundancyWithFaults) {
  const Graph g = testing::random_builtin_dag(20, 3);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  Runtime rt(testing::three_tiles_flipping());
  auto loaded = rt.load(g, Registry::with_builtins());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->execute({{"X0", x0}, {"X1", x1}}).ok());
  const ExecutionStats& st = loaded->last_stats();
  ASSERT_GT(st.injected_faults, 0u) << "the check below needs faults";
  const auto j = parsed(report(st, g.name()));
  EXPECT_EQ(j["model"], "graph");
  EXPECT_EQ(j["name"], "net_random");
  EXPECT_EQ(j["unit"], "actor executions");
  EXPECT_EQ(j["units"].get<std::uint64_t>(), st.actors_executed);
  EXPECT_EQ(j["seconds"].get<double>(), st.makespan_s);
  EXPECT_EQ(j["places"].size(), st.tiles.size() + (st.driver.actors > 0 ? 1 : 0));
  EXPECT_EQ(units_of_places(j), st.actors_executed) << "every execution ran somewhere";
  EXPECT_EQ(j["failed"]["injected_faults"].get<std::uint64_t>(), st.injected_faults);
  EXPECT_EQ(j["failed"]["detected_faults"].get<std::uint64_t>(), st.detected_faults);
  EXPECT_EQ(j["failed"]["workers_lost"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["recovered"]["reexecutions"].get<std::uint64_t>(), st.reexecutions);
  EXPECT_EQ(j["recovered"]["quarantined"].get<std::uint64_t>(), st.quarantined_tiles.size());
}

// A remote tile's values fetched straight from another worker show as its bytes_peers.
TEST(RunReport, AGraphTileSaysWhatItFetchedFromPeers) {
  ExecutionStats s;
  s.tiles.resize(2);
  s.tiles[1].peer_bytes_in = 4096;
  s.tiles[1].bytes_sent = 64;
  const auto j = parsed(report(s, "g"));
  ASSERT_EQ(j["places"].size(), 2u);
  EXPECT_EQ(j["places"][0]["bytes_peers"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["places"][1]["bytes_peers"].get<std::uint64_t>(), 4096u);
  EXPECT_EQ(j["places"][1]["bytes_in"].get<std::uint64_t>(), 64u);
}

TEST(RunReport, AStreamRunCountsEveryFiring) {
  stream::OperatorRegistry reg = stream::OperatorRegistry::with_builtins();
  stream::Program p;
  ASSERT_TRUE(p.add(reg, "c", "counter", {{"n", "100"}}).ok());
  ASSERT_TRUE(p.add(reg, "s", "collect").ok());
  ASSERT_TRUE(p.connect("c", 0, "s", 0, 8).ok());
  auto r = stream::run(p, {.mode = stream::Mode::kPool, .threads = 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::uint64_t firings = 0;
  for (const auto& op : r->operators) firings += op.firings;
  ASSERT_GT(firings, 0u);
  const auto j = parsed(report(*r, "counter"));
  EXPECT_EQ(j["model"], "stream");
  EXPECT_EQ(j["name"], "counter");
  EXPECT_EQ(j["unit"], "firings");
  EXPECT_EQ(j["units"].get<std::uint64_t>(), firings);
  EXPECT_EQ(j["places"].size(), 0u) << "a local run has no nodes";
  EXPECT_EQ(j["seconds"].get<double>(), r->seconds);
}

TEST(RunReport, AStreamRunOverNodesSaysWhereEachFiringRan) {
  stream::RunResult run;
  run.nodes = {{.worker = "n0", .host = "h0", .operators = 1, .bytes_in = 10, .bytes_out = 20, .bytes_to_nodes = 500},
               {.worker = "n1", .host = "h1", .operators = 1, .bytes_in = 30, .bytes_out = 40}};
  run.operators = {{.name = "a", .firings = 5, .node = 0}, {.name = "b", .firings = 7, .node = 1}, {.name = "c", .firings = 1, .node = 1}};
  const auto j = parsed(report(run));
  ASSERT_EQ(j["places"].size(), 2u);
  EXPECT_EQ(j["places"][0]["name"], "n0");
  EXPECT_EQ(j["places"][1]["host"], "h1");
  EXPECT_EQ(j["places"][0]["units"].get<std::uint64_t>(), 5u);
  EXPECT_EQ(j["places"][1]["units"].get<std::uint64_t>(), 8u);
  EXPECT_EQ(j["places"][1]["bytes_in"].get<std::uint64_t>(), 30u);
  EXPECT_EQ(j["places"][1]["bytes_out"].get<std::uint64_t>(), 40u);
  EXPECT_EQ(j["places"][0]["bytes_peers"].get<std::uint64_t>(), 500u) << "tokens node 0 sent straight to node 1";
  EXPECT_EQ(j["places"][1]["bytes_peers"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["units"].get<std::uint64_t>(), 13u);
}

TEST(RunReport, ARemRun) {
  rem::Program p("double");
  const rem::LabelId x = p.input("x", 4), y = p.label("y", 4);
  p.task("twice", {x}, {y}, [](std::span<const std::span<const std::byte>> in, std::span<rem::Value> out) {
    for (int i = 0; i < 4; ++i) out[0][i] = static_cast<std::byte>(2 * static_cast<unsigned>(in[0][i]));
    return Status::Ok();
  });
  p.result(y);
  auto store = rem::make_inproc_store();
  const std::vector<std::byte> xv = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  auto run = rem::run_program(p, *store, {{"x", xv}}, 2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const auto j = parsed(report(run->stats, p.name()));
  EXPECT_EQ(j["model"], "rem");
  EXPECT_EQ(j["name"], "double");
  EXPECT_EQ(j["units"].get<std::uint64_t>(), run->stats.executed);
  EXPECT_GE(run->stats.executed, 1u);
  ASSERT_EQ(j["places"].size(), 1u);
  EXPECT_EQ(j["places"][0]["bytes_out"].get<std::uint64_t>(), run->stats.bytes_written);
  EXPECT_EQ(j["places"][0]["bytes_in"].get<std::uint64_t>(), run->stats.bytes_read);
  EXPECT_EQ(j["recovered"]["duplicates"].get<std::uint64_t>(), run->stats.duplicates);
}

TEST(RunReport, ASpitsJobWithAPoisonedTask) {
  const auto dir = std::filesystem::temp_directory_path() / ("redflow_run_report_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  spits::Options o;
  o.task_managers = 2;
  o.workers = 2;
  auto r = spits::run_job(REDFLOW_SPITS_TEST_JOB, {"tasks=30", "poison=7", "out=" + (dir / "out.txt").string()}, o);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto j = parsed(report(*r));
  EXPECT_EQ(j["model"], "spits");
  EXPECT_EQ(j["name"], r->job);
  EXPECT_EQ(j["unit"], "tasks committed");
  EXPECT_EQ(j["units"].get<std::uint64_t>(), 29u);
  ASSERT_EQ(j["places"].size(), 2u);
  EXPECT_EQ(units_of_places(j), 29u);
  EXPECT_EQ(j["places"][0]["name"], r->task_managers[0].name);
  EXPECT_EQ(j["failed"]["tasks_poisoned"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["failed"]["task_failures"].get<std::uint64_t>(), 3u);
  EXPECT_EQ(j["recovered"]["resubmissions"].get<std::uint64_t>(), r->resubmissions);
}

}  // namespace
}  // namespace redflow
