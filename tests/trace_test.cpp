// to_chrome_trace: the Chrome Trace Event file that Perfetto opens. These
// tests parse it and check its structure against the trace it came from.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "redflow/redflow.hpp"
#include "trace_fixture.hpp"

namespace redflow {
namespace {

using nlohmann::json;

struct Parsed {
  json doc;
  std::map<int, std::string> process;                   // pid -> name
  std::map<int, std::pair<int, std::string>> threads;   // tid -> (pid, name)
  std::vector<json> slices, flows_s, flows_f, counters, instants;
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = json::parse(text);  // throws (and fails the test) on invalid JSON
  for (const auto& e : p.doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(e.contains("pid") && e.contains("tid")) << e.dump();
    if (ph == "M" && e["name"] == "process_name") p.process[e["pid"]] = e["args"]["name"];
    else if (ph == "M" && e["name"] == "thread_name") p.threads[e["tid"]] = {e["pid"].get<int>(), e["args"]["name"].get<std::string>()};
    else if (ph == "X") p.slices.push_back(e);
    else if (ph == "s") p.flows_s.push_back(e);
    else if (ph == "f") p.flows_f.push_back(e);
    else if (ph == "C") p.counters.push_back(e);
    else if (ph == "i") p.instants.push_back(e);
    if (ph != "M") {
      EXPECT_GE(e.at("ts").get<double>(), 0) << e.dump();
    }
  }
  return p;
}

int pid_named(const Parsed& p, const std::string& name) {
  for (const auto& [pid, n] : p.process)
    if (n == name) return pid;
  ADD_FAILURE() << "no process named " << name;
  return -1;
}

TEST(ChromeTrace, OneProcessPerTileAndTheDriverEachWithACoreTrack) {
  const ExecutionTrace t = testing::sample_trace();
  const Parsed p = parse(to_chrome_trace(t));
  EXPECT_EQ(p.process.size(), 3u);
  std::set<int> pids;
  for (const char* name : {"driver (main memory)", "tile 0", "tile 1"}) pids.insert(pid_named(p, name));
  EXPECT_EQ(pids.size(), 3u);
  for (int pid : pids) {
    bool core = false;
    for (const auto& [tid, owner] : p.threads) core |= owner.first == pid && owner.second == "core 0";
    EXPECT_TRUE(core) << "process " << p.process.at(pid) << " has no 'core 0' track";
  }
  // Thread ids are unique across processes.
  std::set<int> tids;
  for (const auto& [tid, owner] : p.threads) EXPECT_TRUE(tids.insert(tid).second);
  EXPECT_EQ(p.doc["otherData"]["scheduler"], "steal");
  EXPECT_EQ(p.doc["otherData"]["redundancy"], "2x-diff");
}

TEST(ChromeTrace, OneSlicePerActorExecutionNamedAfterTheActorOnItsTile) {
  const ExecutionTrace t = testing::sample_trace();
  const Parsed p = parse(to_chrome_trace(t));
  std::vector<json> actor_slices;
  for (const auto& s : p.slices)
    if (s["cat"].get<std::string>().rfind("actor", 0) == 0) actor_slices.push_back(s);
  ASSERT_EQ(actor_slices.size(), t.actors.size());
  for (std::size_t i = 0; i < t.actors.size(); ++i) {
    const auto& a = t.actors[i];
    const auto& s = actor_slices[i];  // written in trace order
    EXPECT_EQ(s["name"], a.name);
    EXPECT_EQ(p.process.at(s["pid"]), a.tile < 0 ? "driver (main memory)" : "tile " + std::to_string(a.tile));
    EXPECT_EQ(p.threads.at(s["tid"]).first, s["pid"].get<int>());
    EXPECT_NEAR(s["ts"].get<double>(), a.start_s * 1e6, 1e-3);
    EXPECT_NEAR(s["dur"].get<double>(), (a.end_s - a.start_s) * 1e6, 2e-3);
    EXPECT_EQ(s["args"].value("replica", 0u), a.replica);
    EXPECT_EQ(s["args"].value("attempt", 0u), a.attempt);
  }
}

TEST(ChromeTrace, SlicesOnOneTrackNeverPartlyOverlap) {
  ExecutionTrace t = testing::sample_trace();
  // Two overlapping executions on tile 0 (e.g. a hand-made or clock-skewed trace).
  TracedActor extra = t.actors[1];
  extra.name = "overlapping";
  extra.start_s = 20e-6;
  extra.end_s = 60e-6;
  t.actors.push_back(extra);
  const Parsed p = parse(to_chrome_trace(t));
  std::map<int, std::vector<std::pair<double, double>>> by_track;
  for (const auto& s : p.slices) by_track[s["tid"]].emplace_back(s["ts"].get<double>(), s["ts"].get<double>() + s["dur"].get<double>());
  for (auto& [tid, spans] : by_track) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      const bool disjoint = spans[i].first >= spans[i - 1].second - 1e-9;
      const bool nested = spans[i].second <= spans[i - 1].second + 1e-9;
      EXPECT_TRUE(disjoint || nested) << "track " << p.threads.at(tid).second << ": [" << spans[i - 1].first << ", "
                                      << spans[i - 1].second << ") and [" << spans[i].first << ", " << spans[i].second << ")";
    }
  }
}

TEST(ChromeTrace, EveryTransferIsAPairedFlowBetweenSlicesOfItsTwoEnds) {
  const ExecutionTrace t = testing::sample_trace();
  const Parsed p = parse(to_chrome_trace(t));
  ASSERT_EQ(p.flows_s.size(), t.transfers.size());
  ASSERT_EQ(p.flows_f.size(), t.transfers.size());
  std::map<std::uint64_t, json> starts;
  for (const auto& s : p.flows_s) EXPECT_TRUE(starts.emplace(s["id"].get<std::uint64_t>(), s).second) << "flow id used twice";
  auto enclosed = [&](const json& point) {
    for (const auto& s : p.slices)
      if (s["pid"] == point["pid"] && s["tid"] == point["tid"] && s["ts"].get<double>() <= point["ts"].get<double>() &&
          point["ts"].get<double>() <= s["ts"].get<double>() + s["dur"].get<double>())
        return true;
    return false;
  };
  auto pid_of = [&](int tile) { return pid_named(p, tile < 0 ? "driver (main memory)" : "tile " + std::to_string(tile)); };
  for (std::size_t i = 0; i < t.transfers.size(); ++i) {
    const auto& f = p.flows_f[i];
    ASSERT_TRUE(starts.count(f["id"].get<std::uint64_t>())) << "flow end without a start: " << f.dump();
    const json& s = starts.at(f["id"].get<std::uint64_t>());
    EXPECT_EQ(s["pid"], pid_of(t.transfers[i].from_tile));
    EXPECT_EQ(f["pid"], pid_of(t.transfers[i].to_tile));
    EXPECT_EQ(f["bp"], "e");
    EXPECT_TRUE(enclosed(s)) << "flow start binds to no slice: " << s.dump();
    EXPECT_TRUE(enclosed(f)) << "flow end binds to no slice: " << f.dump();
  }
  // Each transfer is a slice named after its data node at both ends.
  std::size_t lo = 0;
  for (const auto& s : p.slices) lo += s["name"] == "lo" && s["cat"] == "transfer";
  EXPECT_EQ(lo, 2u);
}

TEST(ChromeTrace, SlotCountersPerTileStartAtZeroAndFollowTheTrace) {
  const ExecutionTrace t = testing::sample_trace();
  const Parsed p = parse(to_chrome_trace(t));
  std::map<int, std::vector<std::pair<double, unsigned>>> by_pid;
  for (const auto& c : p.counters) {
    EXPECT_EQ(c["name"], "slots");
    by_pid[c["pid"]].emplace_back(c["ts"].get<double>(), c["args"]["used"].get<unsigned>());
  }
  ASSERT_EQ(by_pid.size(), 2u);
  const auto& tile0 = by_pid.at(pid_named(p, "tile 0"));
  ASSERT_EQ(tile0.size(), 4u);
  EXPECT_EQ(tile0[0], std::make_pair(0.0, 0u));
  EXPECT_EQ(tile0[2].second, 2u);
  EXPECT_NEAR(tile0[2].first, 40.0, 1e-9);
}

TEST(ChromeTrace, StealsReexecutionsFaultsAndMarksAreInstantEvents) {
  const ExecutionTrace t = testing::sample_trace();
  const Parsed p = parse(to_chrome_trace(t));
  std::multiset<std::string> names;
  for (const auto& i : p.instants) names.insert(i["name"].get<std::string>());
  EXPECT_EQ(names.count("steal"), 1u);
  EXPECT_EQ(names.count("re-execution"), 1u);
  EXPECT_EQ(names.count("fault injected"), 1u);
  EXPECT_EQ(names.count("vote-failed"), 1u);
  for (const auto& i : p.instants)
    if (i["name"] == "steal") {
      EXPECT_EQ(p.process.at(i["pid"]), "tile 0");
    }
  // The stolen, re-executed and faulty slices say so in their category.
  std::size_t stolen = 0, reexec = 0;
  for (const auto& s : p.slices) {
    const std::string cat = s["cat"];
    stolen += cat.find("steal") != std::string::npos;
    reexec += cat.find("reexecution") != std::string::npos;
  }
  EXPECT_EQ(stolen, 1u);
  EXPECT_EQ(reexec, 1u);
}

TEST(ChromeTrace, FunctionsComeFromTheExecutedGraph) {
  Graph g("g");
  auto x = g.input("x", 4);
  auto y = g.output("y", 4);
  g.actor("sort", "i32.sort", {x}, y);
  ExecutionTrace t;
  t.tiles = 1;
  t.actors.push_back(TracedActor{.actor = 0, .name = "sort", .original = "sort", .tile = 0, .start_s = 0, .end_s = 1e-6});
  const Parsed p = parse(to_chrome_trace(t, &g));
  ASSERT_EQ(p.slices.size(), 1u);
  EXPECT_EQ(p.slices[0]["args"]["function"], "i32.sort");
}

TEST(ChromeTrace, AnEmptyTraceIsStillAValidFile) {
  ExecutionTrace t;
  const Parsed p = parse(to_chrome_trace(t));
  EXPECT_EQ(p.process.size(), 1u);  // the driver
  EXPECT_TRUE(p.slices.empty());
}

TEST(ChromeTrace, NamesAreEscaped) {
  ExecutionTrace t = testing::sample_trace();
  t.actors[0].name = "we\"ird\\name\n";
  const Parsed p = parse(to_chrome_trace(t));
  bool found = false;
  for (const auto& s : p.slices) found |= s["name"] == "we\"ird\\name\n";
  EXPECT_TRUE(found);
}

// One naming for every model (visualize.hpp): redflow::to_chrome_trace and
// redflow::to_gantt_svg take a SPITS report and a stream run as they take an
// ExecutionTrace.
TEST(ChromeTrace, EveryModelsResultIsWrittenUnderTheSameNames) {
  spits::Report report;
  report.job = "pi";
  report.task_managers.push_back(spits::TaskManagerCounts{});
  report.task_managers[0].name = "tm-a";
  report.trace.push_back(spits::TracedTask{42, 0, 0.001, 0.002, spits::TracedTask::Outcome::kCommitted});
  stream::RunResult run;
  run.seconds = 0.01;
  run.operators.push_back(stream::OperatorProfile{"summer", 3, 0.002, 0, {stream::FiringSpan{0.001, 0.003}}});

  const nlohmann::json spits_trace = nlohmann::json::parse(redflow::to_chrome_trace(report));
  EXPECT_NE(spits_trace.dump().find("task 42"), std::string::npos) << spits_trace.dump();
  const nlohmann::json stream_trace = nlohmann::json::parse(redflow::to_chrome_trace(run));
  EXPECT_NE(stream_trace.dump().find("summer"), std::string::npos) << stream_trace.dump();
  const std::string svg = redflow::to_gantt_svg(run, {.title = "sum.dot"});
  EXPECT_NE(svg.find("sum.dot"), std::string::npos);
  EXPECT_NE(svg.find("summer"), std::string::npos);
  EXPECT_NE(redflow::to_gantt_svg(run).find("stream run: 1 operators on 1 node(s)"), std::string::npos);  // the default title
}

}  // namespace
}  // namespace redflow
