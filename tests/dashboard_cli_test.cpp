// `redflow run --dashboard`: the real command serves its run's dashboard;
// after the run (--dashboard-linger) the snapshot equals the run's --stats,
// beyond loopback the URL it prints carries the token it requires, and a bad
// address is a usage error naming it; `redflow spits --dashboard` counts
// its commits live and ends with its report's numbers; `redflow view` serves
// a finished run's files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_helpers.hpp"
#include "dashboard/http_probe.hpp"
#include "rem_servers.hpp"

namespace redflow::testing {
namespace {

class DashboardCli : public CliTest {
 protected:
  // Starts the demo graph with `extra` flags and waits (at most 60 s) for its
  // log to say the run ended and the dashboard lingers; returns its log.
  std::string start_lingering(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"run",     kDemo + "pipeline.dot", "--input", "A=" + kDemo + "A.bin", "--repeat", "3",
                                  "--stats", path("s.json"),         "--dashboard-linger", "120"};
    args.insert(args.end(), extra.begin(), extra.end());
    log_ = path("run.log");
    pid_ = spawn_cli(args, log_);
    return start_lingering_wait();
  }
  // Waits (at most 60 s) for the log of the command started to say its
  // dashboard lingers; returns its log.
  std::string start_lingering_wait() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::string text;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(log_);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (text.find("dashboard stays up") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the child's log for its line
    }
    return text;
  }
  // Starts `redflow view` with `args` and waits (at most 30 s) for the URL
  // it prints; returns its port, 0 if none came.
  int start_view(const std::vector<std::string>& args) {
    log_ = path("view.log");
    pid_ = spawn_cli(args, log_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string text;
    while (std::chrono::steady_clock::now() < deadline && url_in(text).empty()) {
      std::ifstream in(log_);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the child's log for its line
    }
    return port_of(url_in(text));
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    CliTest::TearDown();
  }
  // "http://HOST:PORT/..." of the log's "redflow: dashboard at" line.
  static std::string url_in(const std::string& log) {
    const std::string key = "redflow: dashboard at ";
    const auto at = log.find(key);
    if (at == std::string::npos) return "";
    return log.substr(at + key.size(), log.find('\n', at) - at - key.size());
  }
  static int port_of(const std::string& url) {
    const auto colon = url.find(':', 7);
    return colon == std::string::npos ? -1 : std::atoi(url.c_str() + colon + 1);
  }
  // The dashboard's snapshot at `port` on loopback (a failed request fails the test and gives null).
  static nlohmann::json snapshot_at(int port) {
    auto r = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    EXPECT_EQ(r->status, 200);
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  // The JSON file `name` in the test's directory (--stats, --profile).
  nlohmann::json json_file(const std::string& name) const {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in, nullptr, false);
  }
  // Polls the dashboard of the command started (its URL from its log) until
  // a snapshot taken while the run is running satisfies `live`, the run ends,
  // or 60 s pass. Returns that snapshot (null if none) and the port.
  std::pair<nlohmann::json, int> snapshot_while_running(const std::function<bool(const nlohmann::json&)>& live) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int port = -1;
    for (std::string text; std::chrono::steady_clock::now() < deadline && text.find("dashboard stays up") == std::string::npos;) {
      text = file_text(log_);
      if (port < 0) port = port_of(url_in(text));
      if (port > 0) {
        auto r = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
        EXPECT_TRUE(r.ok()) << r.status().ToString();
        if (!r.ok()) break;
        auto snap = nlohmann::json::parse(r->body);
        if (snap["state"] == "running" && live(snap)) return {snap, port};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the child's log and its dashboard
    }
    return {nullptr, port};
  }
  std::string file_text(const std::string& file) const {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The snapshot's counters by name.
  static std::map<std::string, double> counters_of(const nlohmann::json& snap) {
    std::map<std::string, double> counters;
    for (const auto& c : snap["counters"]) counters[c["name"].get<std::string>()] = c["value"].get<double>();
    return counters;
  }
  // A SPITS job's counters on the page equal its --stats file, number for number.
  static void expect_counters_are_the_spits_stats(const nlohmann::json& snap, const nlohmann::json& stats) {
    std::map<std::string, double> counters = counters_of(snap);
    EXPECT_EQ(counters["tasks committed"], stats["committed"].get<double>());
    EXPECT_EQ(counters["tasks generated"], stats["generated"].get<double>());
    EXPECT_EQ(counters["results discarded as duplicates"], stats["duplicates_discarded"].get<double>());
    EXPECT_EQ(counters["failed executions"], stats["strikes"].get<double>());
    EXPECT_EQ(counters["task managers"], stats["task_managers"].size());
    EXPECT_DOUBLE_EQ(counters["seconds"], stats["seconds"].get<double>());
    EXPECT_DOUBLE_EQ(counters["commits per second"], stats["commits_per_second"].get<double>());
  }

  // A finished stream run's snapshot against the command's summary line
  // ("stream: 5 operators, 4 streams, 4000 tokens in 0.003 s ...") and its
  // --profile: the totals, and each stream's tokens in the profile's order
  // with its tokens per second over the run.
  static void expect_stream_run(const nlohmann::json& snap, const std::string& text, const nlohmann::json& profile) {
    EXPECT_EQ(snap["model"], "stream");
    EXPECT_EQ(snap["state"], "finished");
    std::map<std::string, double> counters = counters_of(snap);
    unsigned operators = 0, streams = 0;
    unsigned long long tokens = 0;
    const auto at = text.find("stream: ");
    ASSERT_NE(at, std::string::npos) << text;
    ASSERT_EQ(std::sscanf(text.c_str() + at, "stream: %u operators, %u streams, %llu tokens", &operators, &streams, &tokens), 3) << text;
    EXPECT_EQ(counters["operators"], operators);
    EXPECT_EQ(counters["streams"], streams);
    EXPECT_EQ(counters["tokens"], static_cast<double>(tokens));
    EXPECT_DOUBLE_EQ(counters["seconds"], profile["seconds"].get<double>());
    ASSERT_GT(tokens, 0u);
    ASSERT_EQ(snap["streams"].size(), profile["streams"].size());
    ASSERT_EQ(snap["streams"].size(), streams);
    double sum_of_streams = 0;
    for (std::size_t i = 0; i < snap["streams"].size(); ++i) {
      const auto& on_page = snap["streams"][i];
      const auto& profiled = profile["streams"][i];
      EXPECT_EQ(on_page["from"], profiled["from"]);
      EXPECT_EQ(on_page["to"], profiled["to"]);
      EXPECT_EQ(on_page["tokens"], profiled["tokens"]);
      EXPECT_EQ(on_page["queued"].get<int>(), 0) << "every token was read by the end";
      EXPECT_DOUBLE_EQ(on_page["per_s"].get<double>(), on_page["tokens"].get<double>() / counters["seconds"]);
      sum_of_streams += on_page["tokens"].get<double>();
    }
    EXPECT_EQ(sum_of_streams, static_cast<double>(tokens));
  }

  pid_t pid_ = -1;
  std::string log_;
};

TEST_F(DashboardCli, SnapshotAfterTheRunEqualsItsStats) {
  const std::string log = start_lingering({"--dashboard"});
  ASSERT_NE(log.find("dashboard stays up"), std::string::npos) << log;
  const std::string url = url_in(log);
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << log;
  EXPECT_EQ(url.find("token"), std::string::npos) << "no token on loopback: " << url;
  const auto snap = snapshot_at(port_of(url));
  ASSERT_FALSE(snap.is_null());
  const auto stats = json_file("s.json");
  EXPECT_EQ(snap["state"], "finished");
  EXPECT_EQ(snap["name"], "pipeline");
  EXPECT_EQ(snap["executions_done"].get<int>(), 3);
  EXPECT_EQ(snap["executions_total"].get<int>(), 3);
  EXPECT_EQ(snap["tiles"].size(), stats["tiles"].size());
  EXPECT_EQ(snap["last_execution"]["actors"], stats["actors_executed"]);
  EXPECT_EQ(snap["last_execution"]["makespan_s"], stats["makespan_s"]);
  EXPECT_EQ(snap["actors_done"].get<std::uint64_t>(), 3 * stats["actors_executed"].get<std::uint64_t>());
  EXPECT_EQ(snap["scheduler"], stats["scheduler"]);
}

TEST_F(DashboardCli, ACrashedLocalTileShowsOutOfServiceAndCountsAsLost) {
  const std::string log = start_lingering({"--dashboard", "--tiles", "3", "--inject", "crash-tile:1,after=1"});
  ASSERT_NE(log.find("dashboard stays up"), std::string::npos) << log;
  const auto snap = snapshot_at(port_of(url_in(log)));
  ASSERT_FALSE(snap.is_null());
  const auto stats = json_file("s.json");
  EXPECT_EQ(snap["state"], "finished");
  ASSERT_EQ(snap["tiles"].size(), 3u);
  // A local tile has no worker to lose: the stats say it is out of service, not quarantined for votes.
  ASSERT_TRUE(stats["tiles"][1]["quarantined"].get<bool>());
  ASSERT_TRUE(stats["quarantined_tiles"].empty());
  EXPECT_EQ(snap["tiles"][1]["state"], "out of service");
  EXPECT_EQ(snap["tiles"][0]["state"], "in service");
  EXPECT_EQ(snap["tiles"][2]["state"], "in service");
  EXPECT_EQ(snap["lost_tiles"].get<int>(), 1) << "lost once, in the first execution";
}

TEST_F(DashboardCli, BeyondLoopbackThePrintedUrlCarriesTheToken) {
  const std::string log = start_lingering({"--dashboard", "127.0.0.2:0"});
  ASSERT_NE(log.find("dashboard stays up"), std::string::npos) << log;
  const std::string url = url_in(log);
  ASSERT_EQ(url.rfind("http://127.0.0.2:", 0), 0u) << log;
  const auto at = url.find("/?token=");
  ASSERT_NE(at, std::string::npos) << url;
  const std::string token = url.substr(at + 8);
  const int port = port_of(url);
  auto refused = dashboard::http_get("127.0.0.2", port, "/api/snapshot");
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->status, 403);
  auto served = dashboard::http_get("127.0.0.2", port, "/api/snapshot?token=" + token);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(nlohmann::json::parse(served->body)["state"], "finished");
}

// `redflow spits --dashboard`: the commit count shows while the job runs,
// and at the end the job's numbers equal its --stats.
TEST_F(DashboardCli, ASpitsJobShowsItsCommitsWhileItRunsAndItsReportAtTheEnd) {
  log_ = path("spits.log");
  pid_ = spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=400", "work_us=5000", "out=" + path("out.txt"), "-w", "2", "--stats",
                    path("s.json"), "--dashboard", "--dashboard-linger", "120"},
                   log_);
  // A snapshot with commits counted and the job still running.
  const auto [live, port] = snapshot_while_running(
      [](const nlohmann::json& snap) { return !snap["counters"].empty() && snap["counters"][0]["value"].get<double>() > 0; });
  std::string text = file_text(log_);
  ASSERT_GT(port, 0) << text;
  ASSERT_FALSE(live.is_null()) << "no snapshot counted commits while the job ran (400 tasks of 5 ms on 2 workers):\n" << text;
  EXPECT_EQ(live["model"], "spits");
  EXPECT_EQ(live["name"], std::filesystem::path(REDFLOW_SPITS_TEST_JOB).filename().string());
  EXPECT_EQ(live["counters"][0]["name"], "tasks committed");
  EXPECT_LT(live["counters"][0]["value"].get<double>(), 400) << "counted before the end";
  // The model's inputs, measured while it runs: one Task Manager of 2 Workers,
  // tasks of 5 ms (a busy machine stretches them, never shortens them), and
  // the compute-bound rate W / T from them.
  std::map<std::string, double> c = counters_of(live);
  EXPECT_EQ(c["task managers"], 1);
  EXPECT_EQ(c["workers"], 2);
  EXPECT_GE(c["seconds per task (measured)"], 0.005 * 0.99);
  EXPECT_LT(c["seconds per task (measured)"], 0.5);
  EXPECT_DOUBLE_EQ(c["model: commits per second at W / T"], 2 / c["seconds per task (measured)"]);
  EXPECT_GE(c["tasks generated"], c["tasks committed"]);
  EXPECT_LE(c["tasks running"], c["tasks generated"] - c["tasks committed"]);
  std::vector<std::string> events;
  for (const auto& e : live["events"]) events.push_back(e["what"].get<std::string>());
  EXPECT_EQ(std::count(events.begin(), events.end(), "task-manager-joined"), 1) << live["events"].dump();
  text = start_lingering_wait();
  ASSERT_NE(text.find("dashboard stays up"), std::string::npos) << text;
  const auto snap = snapshot_at(port);
  ASSERT_FALSE(snap.is_null());
  const auto stats = json_file("s.json");
  EXPECT_EQ(snap["state"], "finished");
  EXPECT_EQ(counters_of(snap)["tasks committed"], 400);
  expect_counters_are_the_spits_stats(snap, stats);
}

// `redflow rem --dashboard`: the tasks executed show while the run goes, in
// one process (threads on the in-process store) and summed over scheduler
// processes (on a real redis-server), and at the end every number equals
// the run's --stats.
class DashboardRem : public DashboardCli, public ::testing::WithParamInterface<bool> {};

TEST_P(DashboardRem, ShowsItsTasksWhileTheyRunAndItsStatsAtTheEnd) {
  const bool processes = GetParam();
  ServerProcess redis;
  std::string store = "inproc";
  if (processes) {
    const std::string err = start_redis(redis);
    ASSERT_EQ(err, "") << err;
    store = "redis://127.0.0.1:" + std::to_string(redis.port());
  }
  // 16 naps of 150 ms, each its own task, for 2 schedulers: about 1.2 s.
  std::string dot = "digraph naps {\n  X [kind=input, bytes=64];\n";
  for (int i = 0; i < 16; ++i) {
    const std::string n = std::to_string(i);
    dot += "  Y" + n + " [kind=output, bytes=64];\n  nap" + n + " [actor=\"test.sleep\", args=\"ms=150\"];\n  X -> nap" + n +
           " [port=0]; nap" + n + " -> Y" + n + ";\n";
  }
  write("naps.dot", dot + "}\n");
  write("x.bin", std::string(64, 'x'));
  log_ = path("rem.log");
  pid_ = spawn_cli({"rem", path("naps.dot"), "--lib", REDFLOW_TEST_PLUGIN, "--input", "X=" + path("x.bin"), "--store", store, "--procs", "2",
                    "--stats", path("s.json"), "--dashboard", "--dashboard-linger", "120"},
                   log_);
  const auto [live, port] = snapshot_while_running([](const nlohmann::json& snap) { return counters_of(snap)["tasks executed"] > 0; });
  ASSERT_GT(port, 0) << file_text(log_);
  ASSERT_FALSE(live.is_null()) << "no snapshot counted a task while the run went (16 tasks of 150 ms on 2 schedulers):\n" << file_text(log_);
  EXPECT_EQ(live["model"], "rem");
  EXPECT_EQ(live["name"], "naps");
  EXPECT_EQ(live["counters"][0]["name"], "tasks executed");
  EXPECT_LT(counters_of(live)["tasks executed"], 16) << "counted before the end";
  const std::string text = start_lingering_wait();
  ASSERT_NE(text.find("dashboard stays up"), std::string::npos) << text;
  const auto snap = snapshot_at(port);
  ASSERT_FALSE(snap.is_null());
  EXPECT_EQ(snap["state"], "finished");
  const auto stats = json_file("s.json");
  std::map<std::string, double> counters = counters_of(snap);
  EXPECT_GE(counters["tasks executed"], 16);
  EXPECT_EQ(counters["tasks executed"], stats["executed"].get<double>());
  EXPECT_EQ(counters["duplicate executions"], stats["duplicates"].get<double>());
  EXPECT_EQ(counters["tasks dropped as their labels appeared"], stats["skipped"].get<double>());
  for (const char* name : {"tasks left to another scheduler's claim", "labels retired"}) EXPECT_EQ(counters.count(name), 1u) << name;
  EXPECT_EQ(counters["tasks left to another scheduler's claim"], stats["left_to_claimer"].get<double>());
  EXPECT_EQ(counters["labels retired"], stats["retired"].get<double>());
  EXPECT_EQ(counters["store existence checks"], stats["polls"].get<double>());
  EXPECT_EQ(counters["bytes written"], stats["bytes_written"].get<double>());
  EXPECT_EQ(counters["bytes read"], stats["bytes_read"].get<double>());
  EXPECT_EQ(counters["schedulers"], 2);
  EXPECT_EQ(counters["tasks in the program"], stats["tasks"].get<double>());
  EXPECT_NEAR(counters["seconds"], stats["seconds"].get<double>(), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Stores, DashboardRem, ::testing::Bool(),
                         [](const auto& info) { return std::string(info.param ? "ProcessesOnRedis" : "ThreadsInProcess"); });

// `redflow stream --dashboard`: the program's numbers at its end equal what
// the run printed: operators, streams, tokens, and each stream's tokens.
TEST_F(DashboardCli, AStreamRunShowsItsTokensPerStream) {
  const std::string sum = std::string(REDFLOW_SOURCE_DIR) + "/examples/streams/sum.dot";
  log_ = path("stream.log");
  pid_ = spawn_cli({"stream", sum, "--profile", path("p.json"), "--dashboard", "--dashboard-linger", "120"}, log_);
  const std::string text = start_lingering_wait();
  ASSERT_NE(text.find("dashboard stays up"), std::string::npos) << text;
  const auto snap = snapshot_at(port_of(url_in(text)));
  ASSERT_FALSE(snap.is_null());
  EXPECT_EQ(snap["name"], "sum");
  expect_stream_run(snap, text, json_file("p.json"));

  // `redflow view` of the profile shows the same.
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
  const int port = start_view({"view", path("p.json"), "--for", "120"});
  ASSERT_GT(port, 0) << file_text(log_);
  const auto viewed = snapshot_at(port);
  ASSERT_FALSE(viewed.is_null());
  expect_stream_run(viewed, text, json_file("p.json"));
  const auto with_trace = run_cli("view " + path("p.json") + " --trace " + path("p.json"));
  EXPECT_EQ(with_trace.exit_code, 2) << with_trace.output;
  EXPECT_NE(with_trace.output.find("a stream run's profile"), std::string::npos) << with_trace.output;
}

// A longer program: the streams page's numbers come while it runs (tokens
// written so far, never more than the run's totals at its end).
TEST_F(DashboardCli, AStreamRunShowsItsStreamsWhileItRuns) {
  const std::string dot = path("cha.dot");
  {
    std::ifstream in(std::string(REDFLOW_SOURCE_DIR) + "/examples/streams/compute_heavy.dot");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("blocks=1000\"");
    ASSERT_NE(at, std::string::npos);
    // About 1 s here; a quarter as many blocks under a sanitizer (still
    // seconds there): samples come every 0.2 s.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    text.replace(at, 11, "blocks=1500");
#else
    text.replace(at, 11, "blocks=6000");
#endif
    write("cha.dot", text);
  }
  log_ = path("stream.log");
  pid_ = spawn_cli({"stream", dot, "--profile", path("p.json"), "--dashboard", "--dashboard-linger", "120"}, log_);
  const auto [live, port] = snapshot_while_running([](const nlohmann::json& s) {
    std::uint64_t tokens = 0;
    for (const auto& v : s["streams"]) tokens += v["tokens"].get<std::uint64_t>();
    return s["streams"].size() == 22 && tokens > 0;
  });
  ASSERT_FALSE(live.is_null()) << "no snapshot with the program's 22 streams while it ran:\n" << file_text(log_);
  EXPECT_TRUE(counters_of(live).empty()) << "the run's totals come at its end";
  const std::string text = start_lingering_wait();
  ASSERT_NE(text.find("dashboard stays up"), std::string::npos) << text;
  const auto profile = json_file("p.json");
  ASSERT_EQ(profile["streams"].size(), live["streams"].size());
  for (std::size_t i = 0; i < live["streams"].size(); ++i) {
    EXPECT_EQ(live["streams"][i]["from"], profile["streams"][i]["from"]);
    EXPECT_LE(live["streams"][i]["tokens"].get<std::uint64_t>(), profile["streams"][i]["tokens"].get<std::uint64_t>());
    EXPECT_LE(live["streams"][i]["queued"].get<std::uint64_t>(), live["streams"][i]["tokens"].get<std::uint64_t>());
  }
}

// `redflow view`: the pages of a finished run, from its --stats and --trace
// files: the snapshot equals the stats, the trace's marks are its events.
TEST_F(DashboardCli, ViewServesAFinishedRunFromItsStatsAndTraceFiles) {
  const auto ran = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --inject crash-tile:1,after=0 --stats " +
                           path("s.json") + " --trace " + path("t.json"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const int port = start_view({"view", path("s.json"), "--trace", path("t.json"), "--for", "120"});
  ASSERT_GT(port, 0) << file_text(log_);
  const auto snap = snapshot_at(port);
  ASSERT_FALSE(snap.is_null());
  const auto stats = json_file("s.json");
  EXPECT_EQ(snap["state"], "finished");
  EXPECT_EQ(snap["name"], "s");
  EXPECT_EQ(snap["executions_done"], 1);
  EXPECT_EQ(snap["last_execution"]["actors"], stats["actors_executed"]);
  EXPECT_EQ(snap["last_execution"]["makespan_s"], stats["makespan_s"]);
  EXPECT_EQ(snap["lost_tiles"], stats["lost_tiles"]);
  ASSERT_EQ(stats["lost_tiles"], 1) << "the checks below need tile 1 crashed";
  EXPECT_EQ(snap["scheduler"], stats["scheduler"]);
  ASSERT_EQ(snap["tiles"].size(), stats["tiles"].size());
  for (std::size_t t = 0; t < stats["tiles"].size(); ++t) EXPECT_EQ(snap["tiles"][t]["actors"], stats["tiles"][t]["actors"]) << "tile " << t;
  EXPECT_EQ(snap["tiles"][1]["state"], "out of service") << "the crashed local tile";
  EXPECT_EQ(snap["tiles"][0]["state"], "in service");
  bool lost_event = false;
  for (const auto& e : snap["events"]) lost_event = lost_event || (e["what"] == "tile-lost" && e["tile"] == 1);
  EXPECT_TRUE(lost_event) << "the trace's tile-lost mark is not among the events: " << snap["events"].dump();
  // A file that is not a run's is named, and why.
  const auto bad = run_cli("view " + path("s.json") + " --trace " + path("s.json"));
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("trace file '" + path("s.json") + "': no 'traceEvents' array"), std::string::npos) << bad.output;
  const auto not_stats = run_cli("view " + path("t.json"));
  EXPECT_EQ(not_stats.exit_code, 1) << not_stats.output;
  EXPECT_NE(not_stats.output.find("not the stats of a redflow run"), std::string::npos) << not_stats.output;
}

// `redflow view` of a SPITS job's --stats file: the same counters as the
// live job's end; a --trace beside it is a usage error.
TEST_F(DashboardCli, ViewServesAFinishedSpitsJobFromItsStatsFile) {
  const auto ran = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB + " tasks=300 work_us=100 out=" + path("out.txt") +
                           " -w 2 --stats " + path("j.json"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const int port = start_view({"view", path("j.json"), "--for", "120"});
  ASSERT_GT(port, 0) << file_text(log_);
  const auto snap = snapshot_at(port);
  ASSERT_FALSE(snap.is_null());
  const auto stats = json_file("j.json");
  EXPECT_EQ(snap["model"], "spits");
  EXPECT_EQ(snap["state"], "finished");
  EXPECT_EQ(counters_of(snap)["tasks committed"], 300);
  expect_counters_are_the_spits_stats(snap, stats);
  const auto with_trace = run_cli("view " + path("j.json") + " --trace " + path("j.json"));
  EXPECT_EQ(with_trace.exit_code, 2) << with_trace.output;
  EXPECT_NE(with_trace.output.find("a SPITS job's stats file"), std::string::npos) << with_trace.output;
}

TEST_F(DashboardCli, ABadAddressIsAUsageErrorNamingIt) {
  const auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --dashboard 127.0.0.1:99999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'127.0.0.1:99999'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("port"), std::string::npos) << r.output;
  // The address is optional: a file after --dashboard is named, not taken for the address.
  const auto swallowed = run_cli("run --dashboard " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin");
  EXPECT_EQ(swallowed.exit_code, 2) << swallowed.output;
  EXPECT_NE(swallowed.output.find("pipeline.dot' is a file, not an address"), std::string::npos) << swallowed.output;
}

}  // namespace
}  // namespace redflow::testing
