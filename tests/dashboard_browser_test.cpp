// The live dashboard in a real browser: Debian's chromium, headless, started
// by the test with a bounded time, reads the pages of a finished graph run
// served over loopback; the numbers it shows must be the run's own stats,
// and each page's screenshot must not be blank (docs/dashboard.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/apps.hpp"
#include "dashboard/board.hpp"
#include "dashboard/http_probe.hpp"
#include "dashboard/live_gantt.hpp"
#include "dashboard/server.hpp"
#include "net_workers.hpp"
#include "png_pixels.hpp"
#include "redflow/redflow.hpp"
#include "server_cluster.hpp"
#include "spawn_process.hpp"
#include "stream/apps/compute_heavy.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";

// Runs chromium headless with `args` and `url`, stdout to `out`; false when
// it did not exit within `limit_s`. Chromium runs in a process group of its
// own, killed whole when it ends or is given up on: a browser process killed
// alone leaves its network and renderer processes behind, holding
// connections to the dashboard.
bool run_chromium(const fs::path& profile, std::vector<std::string> args, const std::string& url, const fs::path& out, double limit_s) {
  std::vector<std::string> argv{kChromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-proxy-server", "--no-first-run",
                                "--user-data-dir=" + profile.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(url);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t pid = testing::spawn_process(std::move(argv), {.out_fd = fd, .err_fd = null_fd, .own_process_group = true});
  ::close(fd);
  ::close(null_fd);
  if (pid < 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  // Its exit is seen without reaping it (WNOWAIT): until it is reaped, its
  // pid, the group's id, cannot be reused, so the group killed is its own.
  bool ended = false;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) {
      ended = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a child's exit
  }
  ::kill(-pid, SIGKILL);  // what it left behind (nothing, when it ended well), or all of it
  int status = 0;
  ::waitpid(pid, &status, 0);
  return ended && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string dumped_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The page's DOM once it holds `needle` (its script rendered a snapshot
// that shows it). Headless chromium dumps the DOM once the page has loaded
// (`--timeout` bounds the wait for the load, on a slow machine), with what
// its script rendered by then: at least the snapshot the page was served
// with. So the page is loaded again until it shows `needle` (a later
// snapshot) or `limit_s` passed; the last DOM is returned either way.
std::string dom_showing(const fs::path& dir, const std::string& url, const std::string& needle, double limit_s = 90) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  std::string dom;
  for (int wait_ms = 1000;; wait_ms = std::min(2 * wait_ms, 16000)) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    const fs::path out = dir / "dom.html";
    if (run_chromium(dir / "profile", {"--timeout=" + std::to_string(wait_ms), "--dump-dom"}, url, out, left)) {
      dom = dumped_text(out);
      if (dom.find(needle) != std::string::npos) return dom;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // between loads of a page that does not show it yet
  }
  return dom;
}

// The page's DOM once its script rendered the run's final snapshot
// (body data-state="finished"), within 90 s (ctest gives the whole test 300 s).
std::string finished_dom(const fs::path& dir, const std::string& url) { return dom_showing(dir, url, "data-state=\"finished\""); }

// The text of the element with id `id` (no nested elements), or "<missing>".
std::string text_of(const std::string& dom, const std::string& id) {
  const std::string open = "id=\"" + id + "\"";
  auto at = dom.find(open);
  if (at == std::string::npos) return "<missing>";
  at = dom.find('>', at);
  const auto end = dom.find('<', at);
  return dom.substr(at + 1, end - at - 1);
}

std::size_t count_in_dom(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A screenshot of page `path` of the dashboard at `base` (1100 x 700),
// checked not to be blank: not nearly one colour, more than a few colours.
void expect_screenshot_not_blank(const fs::path& dir, const std::string& base, const std::string& path) {
  const fs::path png = dir / "screenshot.png";
  fs::remove(png);
  ASSERT_TRUE(run_chromium(dir / "profile", {"--timeout=2000", "--window-size=1100,700", "--screenshot=" + png.string()}, base + path,
                           dir / "screenshot.log", 45))
      << path;
  const testing::PngPixels pixels = testing::read_png(png.string());
  ASSERT_TRUE(pixels.error.empty()) << path << ": " << pixels.error;
  EXPECT_EQ(pixels.width, 1100u) << path;
  EXPECT_EQ(pixels.height, 700u) << path;
  const testing::PngColours colours = testing::png_colours(pixels);
  EXPECT_LT(colours.top_share, 0.98) << path << ": the screenshot is nearly one colour";
  EXPECT_GT(colours.distinct, 8u) << path << ": the screenshot has almost no colours";
}

TEST(DashboardBrowser, PagesShowTheRunsTilesAndItsFinalStats) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap installs it)";
  const fs::path dir = fs::temp_directory_path() / ("redflow_dashboard_browser_" + std::to_string(::getpid()));
  fs::create_directories(dir);

  // A real run: 3 local tiles, 3x-same with bit flips, 4 executions.
  const Graph g = testing::random_builtin_dag(20, 7);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 3), x1 = testing::seeded_bytes(testing::kNetBytes, 4);
  Runtime rt(testing::three_tiles_flipping());
  auto loaded = rt.load(g, Registry::with_builtins());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  dashboard::Board board("graph", g.name(), 4);
  auto server = dashboard::DashboardServer::start(board, {});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::uint64_t actors = 0, injected = 0, detected = 0, reexecutions = 0;
  for (int i = 0; i < 4; ++i) {
    // The last execution is traced and drawn for the tiles page's Gantt chart, as `redflow run` does.
    ExecuteOptions eo;
    eo.trace = i == 3;
    ASSERT_TRUE(loaded->execute({{"X0", x0}, {"X1", x1}}, eo).ok());
    const ExecutionStats& s = loaded->last_stats();
    board.record(s);
    if (i == 3) dashboard::record_gantt(board, loaded->last_trace(), *loaded->executed_graph(Redundancy::kTripleSame), 4, 4, s.makespan_s);
    actors += s.actors_executed;
    injected += s.injected_faults;
    detected += s.detected_faults;
    reexecutions += s.reexecutions;
  }
  board.finish(Status::Ok());
  (*server)->publish_now();  // as `redflow run` does at its end
  ASSERT_GT(injected, 0u) << "the fault counts below need faults";
  const ExecutionStats& last = loaded->last_stats();
  const std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());

  const std::string overview = finished_dom(dir, base + "/");
  ASSERT_NE(overview.find("data-state=\"finished\""), std::string::npos) << "the overview page never rendered the final snapshot:\n"
                                                                         << overview;
  EXPECT_EQ(text_of(overview, "tile-count"), std::to_string(last.tiles.size()));
  EXPECT_EQ(text_of(overview, "executions-done"), "4");
  EXPECT_EQ(text_of(overview, "executions-total"), "4");
  EXPECT_EQ(text_of(overview, "actors-done"), std::to_string(actors));
  EXPECT_EQ(text_of(overview, "faults-injected"), std::to_string(injected));
  EXPECT_EQ(text_of(overview, "faults-detected"), std::to_string(detected));
  EXPECT_EQ(text_of(overview, "faults-corrected"), std::to_string(detected));
  EXPECT_EQ(text_of(overview, "reexecutions"), std::to_string(reexecutions));
  EXPECT_EQ(text_of(overview, "lost-tiles"), "0");
  EXPECT_EQ(text_of(overview, "last-actors"), std::to_string(last.actors_executed));
  EXPECT_EQ(text_of(overview, "redundancy"), last.redundancy);

  const std::string tiles = finished_dom(dir, base + "/tiles");
  ASSERT_NE(tiles.find("data-state=\"finished\""), std::string::npos) << "the tiles page never rendered the final snapshot:\n" << tiles;
  EXPECT_EQ(count_in_dom(tiles, "<tr class=\"tile\""), last.tiles.size());
  std::size_t quarantined = 0;
  for (const TileStats& t : last.tiles) quarantined += t.quarantined;
  EXPECT_EQ(count_in_dom(tiles, "data-state=\"quarantined\""), quarantined);
  EXPECT_EQ(count_in_dom(tiles, "data-state=\"in service\""), last.tiles.size() - quarantined);
  // The Gantt chart of the traced execution: one box per actor execution, titled with its execution.
  EXPECT_EQ(count_in_dom(tiles, "<rect class=\"box\""), loaded->last_trace().actors.size()) << tiles;
  EXPECT_EQ(text_of(tiles, "gantt-what"), "execution 4") << "the page's script did not take the chart it was served with";

  for (const char* page : {"/", "/tiles"}) expect_screenshot_not_blank(dir, base, page);
  (*server)->stop();

  // Beyond loopback the page passes on the token of its address to its requests.
  auto guarded = dashboard::DashboardServer::start(board, {.address = "127.0.0.2:0"});
  ASSERT_TRUE(guarded.ok()) << guarded.status().ToString();
  ASSERT_FALSE((*guarded)->token().empty());
  const std::string with_token = finished_dom(dir, (*guarded)->url());
  EXPECT_EQ(text_of(with_token, "actors-done"), std::to_string(actors)) << with_token;
  (*guarded)->stop();
  fs::remove_all(dir);
}

// A run whose tile 1 is ten times slower (adaptive HEFT's idle tile takes
// over its actors): the tiles page shows tile 1 straggling, tile 0 in
// service, and how many of tile 1's actors were taken from it.
TEST(DashboardBrowser, ATileThatFellBehindShowsStragglingOnTheTilesPage) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap installs it)";
  const fs::path dir = fs::temp_directory_path() / ("redflow_dashboard_straggler_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Graph g = testing::equal_workflow_tasks(8, 20000, "straggler");
  RuntimeOptions o;
  o.tiles = 2;
  o.scheduler = Scheduler::kHeft;
  dashboard::Board board("graph", g.name(), 1);
  o.on_mark = [&](const TracedMark& m) { board.mark(m); };
  Runtime rt(o);
  auto loaded = rt.load(g, apps::app_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto server = dashboard::DashboardServer::start(board, {});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ExecuteOptions slow;
  slow.faults = FaultInjection{};
  slow.faults->slow_tiles = {{1, 10}};
  const std::vector<std::byte> bytes(8, std::byte{1});
  ASSERT_TRUE(loaded->execute({{"X", bytes}}, slow).ok());
  const ExecutionStats& st = loaded->last_stats();
  ASSERT_GE(st.tiles[1].straggled, 1u) << "tile 1 did not fall behind: the page has nothing to show";
  board.record(st);
  board.finish(Status::Ok());
  (*server)->publish_now();
  const std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());
  const std::string tiles = finished_dom(dir, base + "/tiles");
  ASSERT_NE(tiles.find("data-state=\"finished\""), std::string::npos) << tiles;
  EXPECT_EQ(count_in_dom(tiles, "<tr class=\"tile\" data-state=\"straggling\" data-tile=\"1\""), 1u) << tiles;
  EXPECT_EQ(count_in_dom(tiles, "<tr class=\"tile\" data-state=\"in service\" data-tile=\"0\""), 1u) << tiles;
  EXPECT_NE(tiles.find("<td>" + std::to_string(st.tiles[1].straggled) + "</td></tr>"), std::string::npos)
      << "tile 1's row does not end with how many of its actors were taken over:\n" << tiles;
  (*server)->stop();
  fs::remove_all(dir);
}

// The text of `path` once it contains `what` (polled, at most `limit_s`); what it holds then otherwise.
std::string file_once_it_says(const fs::path& path, const std::string& what, double limit_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = dumped_text(path);
    if (text.find(what) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a child's log for its line
  }
  return text;
}

// `redflow run --dashboard` on two workers, one execution of two 8 s naps:
// a worker killed 1.5 s into it shows as lost on the page (the snapshot at
// once, within the heartbeat timeout, and the tiles page and the event list
// in the browser) while that first execution still runs.
TEST(DashboardBrowser, AWorkerKilledMidExecutionShowsLostOnThePageBeforeTheExecutionEnds) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap installs it)";
  testing::within_seconds(150, "a killed worker shown lost on the dashboard", [&] {
    const fs::path dir = fs::temp_directory_path() / ("redflow_dashboard_lost_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "naps.dot") << "digraph naps {\n  X [kind=input, bytes=1024];\n  S0 [kind=output, bytes=1024];\n"
                                       "  S1 [kind=output, bytes=1024];\n  nap0 [actor=\"test.sleep\", args=\"ms=8000\", work=8e9];\n"
                                       "  nap1 [actor=\"test.sleep\", args=\"ms=8000\", work=8e9];\n"
                                       "  X -> nap0 [port=0]; X -> nap1 [port=0]; nap0 -> S0; nap1 -> S1;\n}\n";
    const auto x = testing::seeded_bytes(1024, 5);
    std::ofstream(dir / "x.bin", std::ios::binary).write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size()));
    const std::string addr = (dir / "driver.addr").string();
    testing::WorkerProcesses procs;
    procs.set_quiet(false);
    procs.spawn_cli({"run", (dir / "naps.dot").string(), "--lib", REDFLOW_TEST_PLUGIN, "-i", "X=" + (dir / "x.bin").string(), "--listen",
                     "tcp://127.0.0.1:*", "--min-workers", "2", "--address-file", addr, "--heartbeat-timeout", "1", "--dashboard",
                     "--dashboard-linger", "60"},
                    (dir / "driver.log").string());
    const std::string driver_log = file_once_it_says(dir / "driver.log", "redflow: dashboard at ", 30);
    const auto at = driver_log.find("redflow: dashboard at http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << driver_log;
    const std::string url = driver_log.substr(at + 22, driver_log.find('\n', at) - at - 22);
    const int port = std::atoi(url.c_str() + url.rfind(':') + 1);
    std::vector<pid_t> workers;
    for (int w = 0; w < 2; ++w)
      workers.push_back(procs.spawn_cli({"--log-level", "info", "worker", "--address-file", addr, "--lib", REDFLOW_TEST_PLUGIN, "--connect-timeout", "30"},
                                        (dir / ("worker" + std::to_string(w) + ".log")).string()));
    for (int w = 0; w < 2; ++w) {
      const std::string log = file_once_it_says(dir / ("worker" + std::to_string(w) + ".log"), "welcomed as tile", 60);
      ASSERT_NE(log.find("welcomed as tile"), std::string::npos) << "worker " << w << ":\n" << log << dumped_text(dir / "driver.log");
    }
    // Both welcomed: the execution has started, each worker napping 8 s.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // into the naps, well before they end
    const auto killed = std::chrono::steady_clock::now();
    ::kill(workers[0], SIGKILL);
    nlohmann::json snap;
    bool lost = false;
    while (!lost && std::chrono::steady_clock::now() - killed < std::chrono::seconds(20)) {
      auto r = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      snap = nlohmann::json::parse(r->body);
      for (const auto& t : snap["tiles"]) lost = lost || t["state"] == "lost";
      if (!lost) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling the dashboard's snapshot
    }
    const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    ASSERT_TRUE(lost) << "no tile shown lost 20 s after the kill:\n" << snap.dump() << "\n" << dumped_text(dir / "driver.log");
    EXPECT_EQ(snap["executions_done"].get<int>(), 0) << "the loss must show inside the execution, not from its stats at the end";
    EXPECT_LE(after_s, 1.0 + 4.0) << "shown lost " << after_s << " s after the kill (heartbeat timeout 1 s, 4 s for a loaded machine)";
    // The loss is among the events (a strike against the actor it ran may follow it).
    std::vector<std::string> events;
    for (const auto& e : snap["events"]) events.push_back(e["what"].get<std::string>());
    EXPECT_NE(std::find(events.begin(), events.end(), "tile-lost"), events.end()) << snap.dump();

    const std::string base = "http://127.0.0.1:" + std::to_string(port);
    const std::string tiles = dom_showing(dir, base + "/tiles", "data-state=\"lost\"", 40);
    EXPECT_EQ(count_in_dom(tiles, "<tr class=\"tile\" data-state=\"lost\""), 1u) << tiles;
    const std::string overview = dom_showing(dir, base + "/", "data-what=\"tile-lost\"", 40);
    EXPECT_EQ(count_in_dom(overview, "data-what=\"tile-lost\""), 1u) << overview;
    // The run goes on on the other worker and finishes: its page then says so.
    const std::string finished = dom_showing(dir, base + "/", "data-state=\"finished\"", 60);
    EXPECT_EQ(text_of(finished, "executions-done"), "1") << finished;
    EXPECT_EQ(text_of(finished, "lost-tiles"), "1") << finished;
    procs.end_all();
    fs::remove_all(dir);
  });
}

class DashboardServer : public testing::ServerClusterFixture {};

// `redflow server --dashboard` with 2 workers and two jobs, one that
// succeeds and one whose input is the wrong size: the snapshot's jobs and
// workers are the server's own (as its client sees them), the jobs'
// changes are events, and the jobs page in the browser shows both jobs in
// their states and both workers.
TEST_F(DashboardServer, TheJobsPageShowsTheServersJobsAndWorkers) {
  const std::string endpoint = start_server(2, {"--dashboard"});
  ASSERT_FALSE(endpoint.empty());
  start_workers(endpoint, 2);
  const std::string log = file_once_it_says(dir_ / "server.log", "redflow: dashboard at ", 30);
  const auto at = log.find("redflow: dashboard at http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << log;
  const int port = std::atoi(log.c_str() + at + 39);
  Client c = client();
  const auto a = random_input("a.bin", 1);
  std::ofstream(dir_ / "short.bin", std::ios::binary) << "abc";
  auto good = c.submit(graph_job(a, dir_ / "y.bin"), dir_.string());
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  auto bad = c.submit({"run", std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot", "--input", "A=" + (dir_ / "short.bin").string()},
                      dir_.string());
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  const JobInfo good_end = wait(c, *good), bad_end = wait(c, *bad);
  ASSERT_EQ(good_end.state, JobState::kSucceeded) << cluster_logs();
  ASSERT_EQ(bad_end.state, JobState::kFailed) << cluster_logs();

  // The snapshot once it has both ends (the server publishes its state five times a second).
  nlohmann::json snap;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    snap = nlohmann::json::parse(r->body);
    if (snap["jobs"].size() == 2 && snap["jobs"][0]["state"] == "succeeded" && snap["jobs"][1]["state"] == "failed" && snap["workers"].size() == 2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling the dashboard's snapshot
  }
  EXPECT_EQ(snap["model"], "server");
  ASSERT_EQ(snap["jobs"].size(), 2u) << snap.dump();
  for (const auto& [j, info] : {std::pair{snap["jobs"][0], good_end}, std::pair{snap["jobs"][1], bad_end}}) {
    EXPECT_EQ(j["id"].get<std::uint64_t>(), info.id);
    EXPECT_EQ(j["state"], to_string(info.state));
    EXPECT_EQ(j["model"], "run");
    EXPECT_EQ(j["exit_status"].get<int>(), info.exit_status);
    EXPECT_EQ(j["starts"].get<std::uint32_t>(), info.starts);
    EXPECT_EQ(j["workers"].get<std::vector<std::string>>(), info.workers);
  }
  ASSERT_EQ(snap["workers"].size(), 2u) << snap.dump();
  std::set<std::string> worker_names;
  for (const auto& w : snap["workers"]) worker_names.insert(w["name"].get<std::string>().substr(0, 2));
  EXPECT_EQ(worker_names, (std::set<std::string>{"p0", "p1"}));
  std::map<std::string, double> counters;
  for (const auto& k : snap["counters"]) counters[k["name"].get<std::string>()] = k["value"].get<double>();
  EXPECT_EQ(counters["jobs succeeded"], 1);
  EXPECT_EQ(counters["jobs failed"], 1);
  EXPECT_EQ(counters["jobs finished"], 2);
  EXPECT_EQ(counters["jobs running"], 0);
  EXPECT_EQ(counters["workers"], 2);
  std::vector<std::string> events;
  for (const auto& e : snap["events"]) events.push_back(e["what"].get<std::string>() + " " + e["detail"].get<std::string>().substr(0, 6));
  EXPECT_NE(std::find(events.begin(), events.end(), "job-succeeded job " + std::to_string(*good) + ":"), events.end()) << snap["events"].dump();
  EXPECT_NE(std::find(events.begin(), events.end(), "job-failed job " + std::to_string(*bad) + ":"), events.end()) << snap["events"].dump();

  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap installs it)";
  const fs::path browser = dir_ / "browser";
  fs::create_directories(browser);
  const std::string page = dom_showing(browser, "http://127.0.0.1:" + std::to_string(port) + "/jobs", "data-state=\"failed\"");
  EXPECT_EQ(count_in_dom(page, "<tr class=\"job\" data-job=\"" + std::to_string(*good) + "\" data-state=\"succeeded\""), 1u) << page;
  EXPECT_EQ(count_in_dom(page, "<tr class=\"job\" data-job=\"" + std::to_string(*bad) + "\" data-state=\"failed\""), 1u) << page;
  EXPECT_EQ(count_in_dom(page, "<tr class=\"worker\""), 2u) << page;
  EXPECT_EQ(text_of(page, "job-count"), "2");
  for (const char* path : {"/", "/jobs"}) expect_screenshot_not_blank(browser, "http://127.0.0.1:" + std::to_string(port), path);
}

// A stream program's streams page: a real run's streams (the Compute Heavy
// Application), one row each with its tokens, in the program's order.
TEST(DashboardBrowser, TheStreamsPageShowsEachStreamsTokens) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap installs it)";
  const fs::path dir = fs::temp_directory_path() / ("redflow_dashboard_streams_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  stream::OperatorRegistry reg = stream::OperatorRegistry::with_builtins();
  stream::add_compute_heavy_operators(reg);
  auto program = stream::cha_program(reg, 200, 100);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto result = stream::run(*program, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  dashboard::Board board("stream", "cha", 1);
  board.streams(result->streams, result->seconds);
  board.finish(Status::Ok());
  auto server = dashboard::DashboardServer::start(board, {});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());
  const std::string page = finished_dom(dir, base + "/streams");
  ASSERT_NE(page.find("data-state=\"finished\""), std::string::npos) << page;
  EXPECT_EQ(count_in_dom(page, "<tr class=\"stream\""), program->streams().size()) << page;
  EXPECT_EQ(text_of(page, "stream-count"), std::to_string(program->streams().size()));
  const stream::StreamProfile& first = result->streams.front();
  EXPECT_NE(page.find("<td>" + first.from + "</td><td>" + first.to + "</td><td>" + std::to_string(first.tokens) + "</td>"), std::string::npos)
      << "the first stream's row does not name it with its tokens:\n" << page;
  expect_screenshot_not_blank(dir, base, "/streams");
  (*server)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace redflow
