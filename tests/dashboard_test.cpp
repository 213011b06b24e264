// The live dashboard (src/dashboard/, docs/dashboard.md): the Board's
// snapshot and its JSON schema against a real run's stats, the HTTP
// endpoints over loopback with a real client, and the token beyond loopback.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "apps/apps.hpp"
#include "dashboard/board.hpp"
#include "dashboard/http_probe.hpp"
#include "dashboard/server.hpp"
#include "net_workers.hpp"
#include "test_graphs.hpp"
#include "redflow/redflow.hpp"

namespace redflow {
namespace {

using dashboard::Board;
using dashboard::DashboardServer;

// A graph run `executions` times on 3 local tiles under 3x-same with bit
// flips, so that fault counts are not all 0; each execution's stats kept.
struct FaultyRuns {
  std::vector<ExecutionStats> stats;
  std::string name;
};

FaultyRuns run_with_faults(unsigned executions) {
  const Graph g = testing::random_builtin_dag(20, 5);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  Runtime rt(testing::three_tiles_flipping());
  auto loaded = rt.load(g, Registry::with_builtins());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  FaultyRuns r{{}, g.name()};
  for (unsigned i = 0; i < executions && loaded.ok(); ++i) {
    auto out = loaded->execute({{"X0", x0}, {"X1", x1}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    r.stats.push_back(loaded->last_stats());
  }
  return r;
}

TEST(DashboardBoard, SnapshotJsonCarriesTheRunsTotalsInItsSchema) {
  const FaultyRuns runs = run_with_faults(3);
  ASSERT_EQ(runs.stats.size(), 3u);
  Board board("graph", runs.name, 5);
  std::uint64_t actors = 0, injected = 0, detected = 0, reexecutions = 0;
  std::vector<std::uint64_t> per_tile(runs.stats[0].tiles.size(), 0);
  for (const ExecutionStats& s : runs.stats) {
    board.record(s);
    actors += s.actors_executed;
    injected += s.injected_faults;
    detected += s.detected_faults;
    reexecutions += s.reexecutions;
    for (std::size_t t = 0; t < s.tiles.size(); ++t) per_tile[t] += s.tiles[t].actors;
  }
  ASSERT_GT(injected, 0u) << "the fault counts below need faults";
  const auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  // Every field of docs/dashboard.md's schema, with its type.
  for (const char* key : {"model", "name", "state", "failure", "scheduler", "redundancy"}) EXPECT_TRUE(j.at(key).is_string()) << key;
  for (const char* key : {"executions_done", "executions_total", "actors_done", "reexecutions", "lost_tiles", "recomputed_actors",
                          "speculative_copies"})
    EXPECT_TRUE(j.at(key).is_number_unsigned()) << key;
  for (const char* key : {"elapsed_s", "busy_s", "actors_per_s"}) EXPECT_TRUE(j.at(key).is_number()) << key;
  EXPECT_TRUE(j.at("quarantined_tiles").is_array());
  EXPECT_TRUE(j.at("faults").is_object());
  EXPECT_TRUE(j.at("last_execution").is_object());
  ASSERT_TRUE(j.at("tiles").is_array());

  EXPECT_EQ(j["model"], "graph");
  EXPECT_EQ(j["name"], runs.name);
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["executions_done"].get<std::uint64_t>(), 3u);
  EXPECT_EQ(j["executions_total"].get<std::uint64_t>(), 5u);
  EXPECT_EQ(j["actors_done"].get<std::uint64_t>(), actors);
  EXPECT_EQ(j["faults"]["injected"].get<std::uint64_t>(), injected);
  EXPECT_EQ(j["faults"]["detected"].get<std::uint64_t>(), detected);
  EXPECT_EQ(j["faults"]["corrected"].get<std::uint64_t>(), detected);
  EXPECT_EQ(j["reexecutions"].get<std::uint64_t>(), reexecutions);
  EXPECT_EQ(j["redundancy"], runs.stats.back().redundancy);
  EXPECT_EQ(j["last_execution"]["actors"].get<std::uint64_t>(), runs.stats.back().actors_executed);
  double busy = 0;
  for (const ExecutionStats& s : runs.stats) busy += s.makespan_s;
  EXPECT_DOUBLE_EQ(j["actors_per_s"].get<double>(), static_cast<double>(actors) / busy);
  ASSERT_EQ(j["tiles"].size(), 3u);
  for (std::size_t t = 0; t < 3; ++t) {
    const auto& tile = j["tiles"][t];
    EXPECT_EQ(tile["id"].get<unsigned>(), t);
    EXPECT_EQ(tile["actors"].get<std::uint64_t>(), per_tile[t]) << "tile " << t;
    const std::string state = tile["state"];
    EXPECT_EQ(state, runs.stats.back().tiles[t].quarantined ? "quarantined" : "in service");  // no tile is lost here
    for (const char* key : {"worker", "host", "state"}) EXPECT_TRUE(tile.at(key).is_string()) << key;
    for (const char* key : {"bytes_in", "bytes_out", "lost_votes", "speculative"}) EXPECT_TRUE(tile.at(key).is_number_unsigned()) << key;
  }
}

TEST(DashboardBoard, TileStatesAndTheRunsEnd) {
  ExecutionStats s;
  s.actors_executed = 4;
  s.makespan_s = 0.5;
  s.tiles.resize(3);
  s.tiles[0].lost = true;
  s.tiles[0].worker = "w0";
  s.tiles[0].host = "node7";
  s.tiles[1].quarantined = true;
  s.quarantined_tiles = {1};
  s.tiles.emplace_back().quarantined = true;  // out of service, not for votes
  s.tiles.emplace_back().quarantined = true;  // suspected for its votes, waiting for a known-answer test
  s.tiles[4].on_probation = true;
  s.quarantined_tiles = {1, 4};
  s.probation_tiles = {4};
  Board board("graph", "g", 2);
  EXPECT_EQ(nlohmann::json::parse(dashboard::to_json(board.snapshot()))["state"], "starting");
  board.record(s);
  auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["tiles"][0]["state"], "lost");
  EXPECT_EQ(j["tiles"][0]["host"], "node7");
  EXPECT_EQ(j["tiles"][1]["state"], "quarantined");
  EXPECT_EQ(j["tiles"][2]["state"], "in service");
  EXPECT_EQ(j["tiles"][3]["state"], "out of service");
  EXPECT_EQ(j["tiles"][4]["state"], "on probation");
  EXPECT_EQ(j["quarantined_tiles"], nlohmann::json::array({1, 4}));
  EXPECT_EQ(j["probation_tiles"], nlohmann::json::array({4}));
  EXPECT_DOUBLE_EQ(j["actors_per_s"].get<double>(), 8.0);
  board.finish(Status::GaveUp("replicas never agreed"));
  j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["failure"], "replicas never agreed");
}

TEST(DashboardBoard, MarksShowAsTheyHappenAndKeepTheLastFifty) {
  Board board("graph", "g", 1);
  board.mark(TracedMark{"vote-failed", "sum", -1, 0.1});
  board.mark(TracedMark{"tile-lost", "tile 2", 2, 0.2});
  auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["executions_done"], 0) << "no execution has ended";
  ASSERT_EQ(j["tiles"].size(), 3u) << "the lost tile's row exists before any execution's stats";
  EXPECT_EQ(j["tiles"][2]["state"], "lost");
  EXPECT_EQ(j["tiles"][2]["id"], 2);
  EXPECT_EQ(j["tiles"][0]["state"], "in service");
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][0]["what"], "vote-failed");
  EXPECT_EQ(j["events"][0]["tile"], -1);
  EXPECT_EQ(j["events"][1]["detail"], "tile 2");
  EXPECT_TRUE(j["events"][1]["at_s"].is_number());
  const auto state_of = [&](int tile) { return nlohmann::json::parse(dashboard::to_json(board.snapshot()))["tiles"][tile]["state"]; };
  board.mark(TracedMark{"quarantine", "tile 0 lost 3 votes: out of service for good", 0, 0.3});
  EXPECT_EQ(state_of(0), "quarantined");
  board.mark(TracedMark{"quarantine", "tile 1 lost 3 votes: out of service, on probation until a known-answer test", 1, 0.4});
  EXPECT_EQ(state_of(1), "on probation");
  board.mark(TracedMark{"probation", "tile 1 failed a known-answer test (1 of 3)", 1, 0.5});
  EXPECT_EQ(state_of(1), "on probation");
  board.mark(TracedMark{"reinstated", "tile 1 passed a known-answer test", 1, 0.6});
  EXPECT_EQ(state_of(1), "in service");
  board.mark(TracedMark{"quarantine-for-good", "tile 2 failed 3 known-answer tests in a row", 2, 0.7});
  EXPECT_EQ(state_of(2), "quarantined");
  board.mark(TracedMark{"tile-lost", "tile 2", 2, 0.8});
  board.mark(TracedMark{"vote-failed", "sum", -1, 0.8});
  for (int i = 0; i < 56; ++i) board.mark(TracedMark{"speculative-copy", "a" + std::to_string(i), 1, 1.0});
  j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["events_total"], 65);
  ASSERT_EQ(j["events"].size(), dashboard::kMaxEvents);
  EXPECT_EQ(j["events"].back()["detail"], "a55") << "the newest last";
  EXPECT_EQ(j["events"].front()["detail"], "a6") << "the oldest beyond the last 50 are dropped";
  EXPECT_EQ(j["tiles"][1]["state"], "in service") << "a speculative copy changes no tile's state";
}

// Through the runtime's own marks (RuntimeOptions::on_mark), as a live run
// feeds its board: a tile that corrupts everything it computes shows on
// probation from the mark that suspected it, inside that execution, and
// quarantined once its known-answer tests failed; a tile faulty for a while
// shows in service again when its test passed.
TEST(DashboardBoard, TilesOnProbationShowAsTheRuntimeMarksThem) {
  const Registry reg = testing::test_registry();
  const testing::Shape shape = testing::random_dag(40, 3);
  for (const bool heals : {false, true}) {
    SCOPED_TRACE(heals ? "faulty for a while" : "faulty for good");
    Board board("graph", "g", 0);
    std::vector<std::string> seen;  // tile 1's states after it first left service, each change once
    RuntimeOptions o = testing::redundancy_options(Scheduler::kHeft, 4, Redundancy::kTripleDiff);
    o.on_mark = [&](const TracedMark& m) {
      board.mark(m);
      const auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
      if (j["tiles"].size() <= 1) return;
      const std::string state = j["tiles"][1]["state"];
      if (seen.empty() ? state != "in service" : seen.back() != state) seen.push_back(state);
    };
    Runtime rt(o);
    auto loaded = rt.load(shape.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions faulty;
    faulty.faults = FaultInjection{};
    ASSERT_TRUE(parse_fault_spec("faulty-tile:1", *faulty.faults).ok());
    std::uint32_t round = 0;
    const auto execute = [&](const ExecuteOptions& eo) {
      std::vector<std::vector<std::byte>> storage;
      auto out = loaded->execute(testing::make_inputs(shape, storage, round++), eo);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      board.record(loaded->last_stats());
    };
    while (round < 12 && rt.quarantined_tiles().empty()) execute(faulty);
    ASSERT_EQ(rt.quarantined_tiles(), std::vector<unsigned>{1}) << "tile 1 never lost 3 votes in one execution";
    auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
    EXPECT_EQ(j["tiles"][1]["state"], "on probation");
    EXPECT_EQ(j["probation_tiles"], nlohmann::json::array({1}));
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.front(), "on probation") << "the suspicion's own mark, before the execution's stats";
    execute(heals ? ExecuteOptions{} : faulty);
    execute(heals ? ExecuteOptions{} : faulty);
    j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
    EXPECT_EQ(j["tiles"][1]["state"], heals ? "in service" : "quarantined");
    EXPECT_TRUE(j["probation_tiles"].empty());
    EXPECT_EQ(seen, (std::vector<std::string>{"on probation", heals ? "in service" : "quarantined"}));
    bool marked = false;
    for (const auto& e : j["events"]) marked |= e["what"] == (heals ? "reinstated" : "quarantine-for-good");
    EXPECT_TRUE(marked) << j["events"].dump();
  }
}

// A tile that falls behind its plan (tenfold slower: adaptive HEFT's idle
// tile takes over its actors) shows "straggling" as soon as the runtime
// marks it, stays so for the execution's stats, and is back "in service"
// after an execution where it kept up.
TEST(DashboardBoard, ATileThatFallsBehindShowsStragglingUntilAnExecutionWhereItKeptUp) {
  const Graph g = testing::equal_workflow_tasks(8, 20000, "straggler");
  Board board("graph", g.name(), 0);
  std::vector<std::string> seen;  // tile 1's state after each mark
  RuntimeOptions o;
  o.tiles = 2;
  o.scheduler = Scheduler::kHeft;
  o.on_mark = [&](const TracedMark& m) {
    board.mark(m);
    const auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
    if (j["tiles"].size() > 1) seen.push_back(j["tiles"][1]["state"]);
  };
  Runtime rt(o);
  auto loaded = rt.load(g, apps::app_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::vector<std::byte> bytes(8, std::byte{1});
  ExecuteOptions slow;
  slow.faults = FaultInjection{};
  slow.faults->slow_tiles = {{1, 10}};
  ASSERT_TRUE(loaded->execute({{"X", bytes}}, slow).ok());
  ASSERT_FALSE(seen.empty()) << "no mark named tile 1";
  EXPECT_EQ(seen.front(), "straggling") << "the straggler mark, before the execution's stats";
  board.record(loaded->last_stats());
  auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["tiles"][1]["state"], "straggling");
  EXPECT_GE(j["tiles"][1]["straggled"].get<std::uint64_t>(), 2u);
  EXPECT_EQ(j["tiles"][0]["state"], "in service");
  ASSERT_TRUE(loaded->execute({{"X", bytes}}).ok());
  board.record(loaded->last_stats());
  j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["tiles"][1]["state"], "in service");
  // A loss is not hidden by a straggler mark that comes after it.
  board.mark(TracedMark{"tile-lost", "worker", 1, 1.0});
  board.mark(TracedMark{"straggler", "t3", 1, 1.1});
  j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["tiles"][1]["state"], "lost");
}

// `redflow server`'s jobs: each change of a job's state is one event, the
// counters say how many jobs are in each state, workers are idle or busy.
TEST(DashboardBoard, TheServersJobsAndWorkersAndTheirChangesAsEvents) {
  Board board("server", "server", 0);
  JobInfo a;
  a.id = 1;
  a.args = {"run", "g.dot", "-i", "X=x.bin"};
  JobInfo b = a;
  b.id = 2;
  b.args = {"spits", "job.so"};
  board.jobs({a, b}, {"p0 on h", "p1 on h"}, {"p0 on h", "p1 on h"});
  a.state = JobState::kRunning;
  a.workers = {"p0 on h"};
  a.starts = 1;
  board.jobs({a, b}, {"p0 on h", "p1 on h"}, {"p1 on h"});
  board.jobs({a, b}, {"p0 on h", "p1 on h"}, {"p1 on h"});  // nothing changed: no event
  a.state = JobState::kFailed;
  a.exit_status = 1;
  a.message = "a tile crashed";
  board.jobs({a, b}, {"p0 on h", "p1 on h"}, {"p0 on h", "p1 on h"});
  const dashboard::Snapshot s = board.snapshot();
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[0].command, "run g.dot -i X=x.bin");
  EXPECT_EQ(s.jobs[0].model, "run");
  EXPECT_EQ(s.jobs[0].state, "failed");
  EXPECT_EQ(s.jobs[0].message, "a tile crashed");
  EXPECT_EQ(s.jobs[1].model, "spits");
  EXPECT_EQ(s.jobs[1].state, "queued");
  std::vector<std::string> events;
  for (const auto& e : s.events) events.push_back(e.what + " " + e.detail);
  EXPECT_EQ(events, (std::vector<std::string>{"job-queued job 1: run g.dot -i X=x.bin", "job-queued job 2: spits job.so",
                                              "job-running job 1: run g.dot -i X=x.bin",
                                              "job-failed job 1: run g.dot -i X=x.bin (a tile crashed)"}));
  std::map<std::string, double> counters(s.counters.begin(), s.counters.end());
  EXPECT_EQ(counters["jobs failed"], 1);
  EXPECT_EQ(counters["jobs queued"], 1);
  EXPECT_EQ(counters["jobs running"], 0);
  EXPECT_EQ(counters["jobs finished"], 1);
  EXPECT_EQ(counters["idle workers"], 2);
  const auto j = nlohmann::json::parse(dashboard::to_json(s));
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["exit_status"].get<int>(), 1);
  EXPECT_EQ(j["jobs"][0]["workers"][0], "p0 on h");
  ASSERT_EQ(j["workers"].size(), 2u);
  EXPECT_EQ(j["workers"][0]["state"], "idle");
  board.jobs({a, b}, {"p0 on h", "p1 on h"}, {"p1 on h"});
  EXPECT_EQ(board.snapshot().workers[0].state, "busy");
}

// A SPITS job's report so far: the tasks on Task Managers, the measured
// time per task weighted by each one's results, the model's rate W / T and
// the share of it reached; Task Managers joining and lost are events.
TEST(DashboardBoard, ASpitsJobsProgressAgainstItsModel) {
  Board board("spits", "job.so", 1);
  spits::Report r;
  r.generated = 100;
  r.committed = 40;
  spits::TaskManagerCounts a;
  a.name = "a";
  a.host = "h1";
  a.workers = 2;
  a.pushed = 50;
  a.results = 30;
  a.task_s = 0.010;
  r.task_managers.push_back(a);
  board.spits(r, 2.0);
  spits::TaskManagerCounts b;
  b.name = "b";
  b.workers = 4;
  b.pushed = 20;
  b.results = 10;
  b.task_s = 0.040;
  r.task_managers.push_back(b);
  r.task_managers[0].lost = 1;
  board.spits(r, 2.0);
  const dashboard::Snapshot s = board.snapshot();
  std::map<std::string, double> c(s.counters.begin(), s.counters.end());
  EXPECT_EQ(s.counters.front().first, "tasks committed") << "the overview charts the first counter";
  EXPECT_EQ(c["tasks committed"], 40);
  EXPECT_EQ(c["tasks running"], 20 + 10);
  EXPECT_EQ(c["task managers"], 2);
  EXPECT_EQ(c["workers"], 6);
  EXPECT_DOUBLE_EQ(c["seconds per task (measured)"], (0.010 * 30 + 0.040 * 10) / 40);
  EXPECT_DOUBLE_EQ(c["model: commits per second at W / T"], 6 / c["seconds per task (measured)"]);
  EXPECT_DOUBLE_EQ(c["commits per second"], 20);
  EXPECT_DOUBLE_EQ(c["share of the model reached"], 20 / c["model: commits per second at W / T"]);
  std::vector<std::string> events;
  for (const auto& e : s.events) events.push_back(e.what + " " + e.detail);
  // The second call's two events in the order of the Task Managers.
  EXPECT_EQ(events, (std::vector<std::string>{"task-manager-joined a on h1 (2 Workers)", "task-manager-lost a on h1",
                                              "task-manager-joined b (4 Workers)"}));
}

TEST(DashboardHttp, BadAddressesAreRefusedByName) {
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:http", ":8080", "", "127.0.0.1:"}) {
    auto hp = dashboard::parse_address(bad);
    ASSERT_FALSE(hp.ok()) << bad;
    EXPECT_NE(hp.status().message().find(std::string("'") + bad + "'"), std::string::npos) << hp.status().message();
  }
  auto hp = dashboard::parse_address("127.0.0.2:8080");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "127.0.0.2");
  EXPECT_EQ(hp->port, 8080);
  Board board("graph", "g", 1);
  auto s = DashboardServer::start(board, {.address = "127.0.0.1:70000"});
  EXPECT_FALSE(s.ok());
}

// A run that fails at once stops its dashboard right after starting it
// (`redflow view` of a bad file): the server ends every time, however soon.
// httplib's stop() does nothing before its listen loop has begun, and the
// loop then ran on for ever.
TEST(DashboardHttp, AServerStoppedRightAfterItStartedEnds) {
  Board board("graph", "g", 1);
  testing::within_seconds(60, "500 dashboards stopped as soon as started", [&] {
    for (int i = 0; i < 500; ++i) {
      auto s = DashboardServer::start(board, {.address = "127.0.0.1:0"});
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      (*s)->stop();
    }
  });
}

// Opens event streams until the first event of one says `executions_done`
// is `n` (the first event of a stream is the last snapshot published), for at most 10 s.
bool event_with_executions(int port, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto events = dashboard::read_events("127.0.0.1", port, "/api/events", 1, 5);
    if (!events.ok() || events->empty()) return false;
    if (nlohmann::json::parse(events->front())["executions_done"].get<std::uint64_t>() == n) return true;
    // As a browser does before it reconnects: a stream the server still
    // holds for a closed page ends only at its next write.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(DashboardHttp, PagesSnapshotAndEventsOverLoopback) {
  const FaultyRuns runs = run_with_faults(2);
  ASSERT_EQ(runs.stats.size(), 2u);
  Board board("graph", runs.name, 2);
  board.record(runs.stats[0]);
  auto server = DashboardServer::start(board, {.address = "127.0.0.1:0", .period_s = 0.05});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_TRUE((*server)->token().empty()) << "no token on loopback";
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/");

  for (const auto& [path, type, marker] : std::vector<std::array<std::string, 3>>{
           {"/", "text/html", "id=\"actors-done\""},
           {"/tiles", "text/html", "id=\"tile-rows\""},
           {"/static/dashboard.js", "text/javascript", "EventSource"},
           {"/static/dashboard.css", "text/css", "tr.tile"}}) {
    auto r = dashboard::http_get("127.0.0.1", port, path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->content_type.rfind(type, 0), 0u) << path << ": " << r->content_type;
    EXPECT_NE(r->body.find(marker), std::string::npos) << path;
  }
  auto missing = dashboard::http_get("127.0.0.1", port, "/static/nothing.js");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);

  auto snap = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->status, 200);
  EXPECT_EQ(snap->content_type, "application/json");
  auto j = nlohmann::json::parse(snap->body);
  EXPECT_EQ(j["executions_done"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["actors_done"].get<std::uint64_t>(), runs.stats[0].actors_executed);
  EXPECT_EQ(j["tiles"].size(), runs.stats[0].tiles.size());

  // The event stream pushes what the run records next, and the run's end.
  EXPECT_TRUE(event_with_executions(port, 1));
  board.record(runs.stats[1]);
  EXPECT_TRUE(event_with_executions(port, 2));
  board.finish(Status::Ok());
  const std::uint64_t opened = (*server)->streams_opened();
  std::atomic<bool> done{false};
  std::vector<std::string> last;
  std::thread watcher([&] {
    auto events = dashboard::read_events("127.0.0.1", port, "/api/events", 1000, 10, &done);
    if (events.ok()) last = *events;
  });
  // stop() publishes the final state and ends the stream: the watcher returns.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*server)->streams_opened() == opened && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ((*server)->streams_opened(), opened + 1);
  (*server)->stop();
  watcher.join();
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(nlohmann::json::parse(last.back())["state"], "finished");
  EXPECT_EQ(nlohmann::json::parse(last.back())["actors_done"].get<std::uint64_t>(),
            runs.stats[0].actors_executed + runs.stats[1].actors_executed);
}

// The JSON in a served page's <script id="snapshot">, or "" without one.
std::string snapshot_in_page(const std::string& page) {
  const std::string open = "<script id=\"snapshot\" type=\"application/json\">";
  const auto at = page.find(open);
  if (at == std::string::npos) return "";
  const auto from = at + open.size();
  return page.substr(from, page.find("</script>", from) - from);
}

TEST(DashboardPage, CarriesItsSnapshotBeforeItsScriptAndNoTextCanEndIt) {
  const std::string page = "<html><body><p>x</p>\n<script src=\"/static/dashboard.js\"></script>\n</body></html>";
  EXPECT_EQ(dashboard::page_with_snapshot(page, ""), page) << "no snapshot yet: the page as it is";
  const std::string json = R"({"failure":"actor '</script><b>' failed","n":1})";
  const std::string served = dashboard::page_with_snapshot(page, json);
  const auto snapshot_at = served.find("<script id=\"snapshot\"");
  ASSERT_NE(snapshot_at, std::string::npos) << served;
  EXPECT_LT(snapshot_at, served.find("<script src=")) << "the page's script finds it in place:\n" << served;
  const std::string carried = snapshot_in_page(served);
  EXPECT_EQ(carried.find('<'), std::string::npos) << carried;
  EXPECT_EQ(nlohmann::json::parse(carried), nlohmann::json::parse(json)) << "the same JSON once parsed";
  // A page without the script: before </body>.
  const std::string plain = dashboard::page_with_snapshot("<html><body>p</body></html>", "{}");
  EXPECT_EQ(plain, "<html><body>p<script id=\"snapshot\" type=\"application/json\">{}</script>\n</body></html>");
}

TEST(DashboardHttp, EachPageIsServedWithTheLatestSnapshot) {
  const FaultyRuns runs = run_with_faults(2);
  Board board("graph", runs.name, 2);
  board.record(runs.stats[0]);
  auto server = DashboardServer::start(board, {.address = "127.0.0.1:0", .period_s = 0.05});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  for (const char* path : {"/", "/tiles"}) {
    auto r = dashboard::http_get("127.0.0.1", port, path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string carried = snapshot_in_page(r->body);
    ASSERT_FALSE(carried.empty()) << path << ":\n" << r->body;
    EXPECT_EQ(nlohmann::json::parse(carried)["executions_done"].get<std::uint64_t>(), 1u) << path;
  }
  board.record(runs.stats[1]);
  (*server)->publish_now();
  auto r = dashboard::http_get("127.0.0.1", port, "/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(nlohmann::json::parse(snapshot_in_page(r->body))["executions_done"].get<std::uint64_t>(), 2u)
      << "a page served later carries the later snapshot";
  (*server)->stop();
}

// Each page following the events holds a server thread for as long as it is
// open: pages left open (or a browser's processes that outlived it) must not
// leave the server unable to answer anyone else.
TEST(DashboardHttp, PagesBeyondTheStreamLimitAreToldToPollAndEveryOtherRequestIsStillAnswered) {
  Board board("graph", "many", 1);
  auto server = DashboardServer::start(board, {.address = "127.0.0.1:0", .period_s = 0.05});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::atomic<bool> done{false};
  std::vector<std::thread> pages;
  for (int i = 0; i < DashboardServer::kMaxStreams + 4; ++i)
    pages.emplace_back([&] { (void)dashboard::read_events("127.0.0.1", port, "/api/events", 1000000, 60, &done); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((*server)->open_streams() < DashboardServer::kMaxStreams && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling the server's count of open streams
  EXPECT_EQ((*server)->open_streams(), DashboardServer::kMaxStreams);
  auto page = dashboard::http_get("127.0.0.1", port, "/", "", 5);
  ASSERT_TRUE(page.ok()) << "a page with " << DashboardServer::kMaxStreams << " streams open: " << page.status().ToString();
  EXPECT_EQ(page->status, 200);
  auto snap = dashboard::http_get("127.0.0.1", port, "/api/snapshot", "", 5);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->status, 200);
  auto refused = dashboard::http_get("127.0.0.1", port, "/api/events", "", 5);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->body.find("polls /api/snapshot"), std::string::npos) << refused->body;
  EXPECT_EQ((*server)->open_streams(), DashboardServer::kMaxStreams) << "a refused page holds no stream";
  done = true;
  (*server)->stop();
  for (auto& t : pages) t.join();
}

TEST(DashboardHttp, BeyondLoopbackEveryRequestNeedsTheToken) {
  Board board("graph", "g", 1);
  // 127.0.0.2 is on the loopback interface but not 127.0.0.1: it counts as beyond loopback.
  auto server = DashboardServer::start(board, {.address = "127.0.0.2:0"});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  const std::string token = (*server)->token();
  ASSERT_EQ(token.size(), 32u);
  EXPECT_EQ((*server)->url(), "http://127.0.0.2:" + std::to_string(port) + "/?token=" + token);
  for (const char* path : {"/", "/tiles", "/api/snapshot", "/api/events", "/static/dashboard.js"}) {
    auto r = dashboard::http_get("127.0.0.2", port, path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 403) << path;
    EXPECT_NE(r->body.find("token"), std::string::npos) << path;
  }
  std::string wrong = token;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  auto r = dashboard::http_get("127.0.0.2", port, "/api/snapshot?token=" + wrong);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);
  r = dashboard::http_get("127.0.0.2", port, "/api/snapshot", "token " + wrong);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);
  r = dashboard::http_get("127.0.0.2", port, "/api/snapshot?token=" + token);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body)["name"], "g");
  r = dashboard::http_get("127.0.0.2", port, "/tiles", "token " + token);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace redflow
