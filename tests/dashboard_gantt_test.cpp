// The tiles page's live Gantt chart (src/dashboard/live_gantt.hpp): the tail
// of a traced execution, the board's rule for when a run traces one, the
// /api/gantt endpoint and the tiles page that carries the chart, and
// `redflow run --dashboard` drawing it while it runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

#include "cli_helpers.hpp"
#include "dashboard/board.hpp"
#include "dashboard/http_probe.hpp"
#include "dashboard/live_gantt.hpp"
#include "dashboard/server.hpp"
#include "net_workers.hpp"
#include "test_graphs.hpp"
#include "redflow/redflow.hpp"

namespace redflow {
namespace {

using dashboard::Board;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Ten actor executions on two tiles, one starting every millisecond, each
// 0.5 ms; a transfer and a mark early, a mark late.
ExecutionTrace ten_actors() {
  ExecutionTrace t;
  t.tiles = 2;
  t.makespan_s = 0.0105;
  for (int i = 0; i < 10; ++i) {
    TracedActor a;
    a.actor = static_cast<ActorId>(i);
    a.name = testing::numbered("a", i);
    a.tile = i % 2;
    a.start_s = 1e-3 * i;
    a.end_s = a.start_s + 0.5e-3;
    t.actors.push_back(a);
  }
  // Stored out of time order, as tiles record them.
  std::swap(t.actors[2], t.actors[8]);
  t.transfers.push_back({"D", -1, 0, 64, 0.0001, 0.0002});
  t.transfers.push_back({"E", 0, 1, 64, 0.0069, 0.0075});
  t.marks.push_back({"vote", "early", -1, 0.002});
  t.marks.push_back({"vote-failed", "late", 1, 0.009});
  return t;
}

TEST(DashboardGantt, TheTailOfATraceIsItsLastActorsWithTimesFromWhereItIsCut) {
  const ExecutionTrace t = ten_actors();
  const ExecutionTrace tail = dashboard::trace_tail(t, 4);
  ASSERT_EQ(tail.actors.size(), 4u);
  // The four that start last (a6..a9), times counted from a6's start.
  std::vector<std::string> names;
  for (const TracedActor& a : tail.actors) {
    names.push_back(a.name);
    EXPECT_GE(a.start_s, -1e-12) << a.name;
    EXPECT_NEAR(a.end_s - a.start_s, 0.5e-3, 1e-12) << a.name;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a6", "a7", "a8", "a9"}));
  EXPECT_NEAR(tail.makespan_s, 0.0105 - 0.006, 1e-12);
  // The transfer still going at the cut stays (clipped to it); the early one goes, as does the early mark.
  ASSERT_EQ(tail.transfers.size(), 1u);
  EXPECT_EQ(tail.transfers[0].data, "E");
  EXPECT_NEAR(tail.transfers[0].end_s, 0.0075 - 0.006, 1e-12);
  ASSERT_EQ(tail.marks.size(), 1u);
  EXPECT_EQ(tail.marks[0].what, "vote-failed");
  EXPECT_NEAR(tail.marks[0].time_s, 0.003, 1e-12);
  EXPECT_EQ(tail.tiles, 2u);
  // A trace no longer than the limit is drawn whole.
  EXPECT_EQ(dashboard::trace_tail(t, 10).actors.size(), 10u);
  EXPECT_EQ(dashboard::trace_tail(t, 10).marks.size(), 2u);
}

// A real execution under 2x-diff on 3 tiles with bit flips, traced: the
// chart has one box per actor execution drawn, its replicas hatched, and
// says which execution it is and how much of it is drawn.
TEST(DashboardGantt, ARealTracedExecutionIsDrawnWithTheSvgsMarks) {
  const Graph g = testing::random_builtin_dag(40, 9);
  RuntimeOptions o = testing::three_tiles_flipping();
  o.redundancy = Redundancy::kDoubleDiff;
  Runtime rt(o);
  auto loaded = rt.load(g, Registry::with_builtins());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  ExecuteOptions traced;
  traced.trace = true;
  ASSERT_TRUE(loaded->execute({{"X0", x0}, {"X1", x1}}, traced).ok());
  const ExecutionTrace& trace = loaded->last_trace();
  auto executed = loaded->executed_graph(Redundancy::kDoubleDiff);
  ASSERT_TRUE(executed.ok());
  const std::size_t actors = trace.actors.size();
  ASSERT_GT(actors, 40u) << "2x-diff runs two replicas of each actor";

  const std::string whole = dashboard::live_gantt_svg(trace, *executed, 3, 10, actors);
  EXPECT_NE(whole.find("<title>Execution 3 of 10</title>"), std::string::npos) << whole.substr(0, 400);
  EXPECT_EQ(occurrences(whole, "<rect class=\"box\""), actors);
  EXPECT_GT(occurrences(whole, "fill=\"url(#hatch)\""), 1u) << "replicas are hatched";
  EXPECT_NE(whole.find("vote"), std::string::npos) << "votes are marked";

  const std::string cut = dashboard::live_gantt_svg(trace, *executed, 3, 10, 20);
  EXPECT_EQ(occurrences(cut, "<rect class=\"box\""), 20u);
  EXPECT_NE(cut.find("20 of " + std::to_string(actors) + " actor executions"), std::string::npos) << cut.substr(0, 400);
}

TEST(DashboardGantt, ARunTracesForTheChartOnlyWhileAPageWatchesAndAtMostEveryFewSeconds) {
  Board board("graph", "g", 100);
  EXPECT_FALSE(board.wants_gantt()) << "nobody asked for the chart";
  board.gantt_watched();
  EXPECT_TRUE(board.wants_gantt());
  EXPECT_EQ(board.snapshot().gantt_version, 0u);
  board.record_gantt(7, "<svg/>");
  EXPECT_FALSE(board.wants_gantt()) << "one was drawn just now";
  const dashboard::GanttView g = board.gantt();
  EXPECT_EQ(g.version, 1u);
  EXPECT_EQ(g.execution, 7u);
  ASSERT_NE(g.svg, nullptr);
  EXPECT_EQ(*g.svg, "<svg/>");
  const auto j = nlohmann::json::parse(dashboard::to_json(board.snapshot()));
  EXPECT_EQ(j["gantt"]["version"].get<int>(), 1);
  EXPECT_EQ(j["gantt"]["execution"].get<int>(), 7);
  // Beside it, a chart whose tracing and drawing cost 50 ms: the next waits
  // 50 ms / kGanttShare (10 s), not kGanttEveryS.
  Board costly("graph", "g", 100);
  costly.gantt_watched();
  costly.record_gantt(1, "<svg/>", 0.05);
  ASSERT_GT(0.05 / dashboard::kGanttShare, dashboard::kGanttEveryS + 1);
  std::this_thread::sleep_for(std::chrono::duration<double>(dashboard::kGanttEveryS + 0.05));
  board.gantt_watched();
  costly.gantt_watched();
  EXPECT_TRUE(board.wants_gantt()) << "kGanttEveryS later, the page still watching";
  EXPECT_FALSE(costly.wants_gantt()) << "the last chart cost 50 ms: the next waits 50 ms / " << dashboard::kGanttShare << " s";
}

TEST(DashboardGantt, TheEndpointAndTheTilesPageServeTheLatestChart) {
  Board board("graph", "g", 100);
  auto server = dashboard::DashboardServer::start(board, {.address = "127.0.0.1:0", .period_s = 0.05});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  auto none = dashboard::http_get("127.0.0.1", port, "/api/gantt");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->status, 204) << "no chart yet";
  EXPECT_TRUE(board.wants_gantt()) << "asking for the chart is what makes the run trace one";
  auto page = dashboard::http_get("127.0.0.1", port, "/tiles");
  ASSERT_TRUE(page.ok());
  EXPECT_NE(page->body.find("waiting for an execution to finish"), std::string::npos);

  const std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><title>Execution 5 of 100</title></svg>";
  board.record_gantt(5, svg);
  auto chart = dashboard::http_get("127.0.0.1", port, "/api/gantt?since=0");
  ASSERT_TRUE(chart.ok());
  EXPECT_EQ(chart->status, 200);
  EXPECT_EQ(chart->content_type, "image/svg+xml");
  EXPECT_EQ(chart->body, svg);
  EXPECT_EQ(chart->gantt_version, "1");
  auto same = dashboard::http_get("127.0.0.1", port, "/api/gantt?since=1");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->status, 204) << "the page already shows version 1";

  page = dashboard::http_get("127.0.0.1", port, "/tiles");
  ASSERT_TRUE(page.ok());
  EXPECT_NE(page->body.find("id=\"gantt\" data-version=\"1\" data-execution=\"5\""), std::string::npos) << page->body;
  EXPECT_NE(page->body.find(svg), std::string::npos) << "the page carries the chart";
  EXPECT_EQ(page->body.find("waiting for an execution to finish"), std::string::npos);
  (*server)->stop();
}

class DashboardGanttCli : public testing::CliTest {};

// `redflow run --dashboard` with the tiles page open: a chart of an
// execution of this run arrives while it runs, and newer ones follow.
TEST_F(DashboardGanttCli, ARunningGraphDrawsItsChartWhileThePageIsOpen) {
  const std::string log = path("run.log");
  const pid_t pid = testing::spawn_cli({"run", testing::kDemo + "pipeline.dot", "--input", "A=" + testing::kDemo + "A.bin", "--repeat", "100000000", "--tiles", "3",
                               "--redundancy", "2x-diff", "--dashboard"},
                              log);
  int port = -1;
  testing::within_seconds(60, "the run's charts on its dashboard", [&] {
    while (port <= 0) {
      const std::string text = testing::file_text(log);
      const auto at = text.find("redflow: dashboard at http://127.0.0.1:");
      if (at != std::string::npos) port = std::atoi(text.c_str() + at + 39);
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the child's log for its URL
    }
    std::string version = "0";
    std::vector<std::uint64_t> executions;
    while (executions.size() < 2) {
      auto r = dashboard::http_get("127.0.0.1", port, "/api/gantt?since=" + version);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (r->status == 200) {
        version = r->gantt_version;
        const auto at = r->body.find("<title>Execution ");
        ASSERT_NE(at, std::string::npos) << r->body.substr(0, 400);
        executions.push_back(std::strtoull(r->body.c_str() + at + 17, nullptr, 10));
        EXPECT_NE(r->body.find("of 100000000</title>"), std::string::npos);
        EXPECT_EQ(occurrences(r->body, "<rect class=\"box\""), 11u) << "the demo's 4 compute actors twice, its 3 driver actors once";
        EXPECT_GT(occurrences(r->body, "fill=\"url(#hatch)\""), 1u) << "replicas are hatched";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // as the page asks, a little more often
    }
    EXPECT_GT(executions[1], executions[0]) << "a later execution is drawn";
  });
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace redflow
