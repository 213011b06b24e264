// The `redflow` command's ways to see a run: run --trace/--gantt, the
// schedule command, the progress bar (only on a terminal), --log-level and
// the help of every subcommand. Real processes, real files.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_helpers.hpp"
#include "svg_check.hpp"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;

namespace {

struct TerminalRun {
  int exit_code;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SeeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_see");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // stdout and stderr to separate files: stderr is not a terminal here.
  TerminalRun run(const std::string& args) {
    const std::string cmd = std::string(REDFLOW_CLI) + " " + args + " >" + path("stdout") + " 2>" + path("stderr");
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(path("stdout")), slurp(path("stderr"))};
  }

  // Runs the command on a pseudo-terminal (stdout and stderr both) and returns what it wrote there.
  TerminalRun run_on_terminal(const std::vector<std::string>& args) {
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(REDFLOW_CLI));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(REDFLOW_CLI, argv.data());
      _exit(127);
    }
    EXPECT_GT(pid, 0);
    std::string out;
    std::array<char, 4096> buf;
    for (;;) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, 60000) <= 0) break;
      const ssize_t n = read(master, buf.data(), buf.size());
      if (n <= 0) break;  // EIO once the child has exited and closed the terminal
      out.append(buf.data(), static_cast<std::size_t>(n));
    }
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, ""};
  }

  fs::path dir_;
};

using redflow::testing::kDemo;
const std::string kDemoRun = "run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin";

TEST_F(SeeCliTest, RunWritesATraceAndAGanttChartOfTheLastExecution) {
  auto r = run(kDemoRun + " --tiles 2 --repeat 3 --trace " + path("t.json") + " --gantt " + path("g.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trace = nlohmann::json::parse(slurp(path("t.json")));
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<std::string> processes;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(processes, (std::set<std::string>{"driver (main memory)", "tile 0", "tile 1"}));
  EXPECT_EQ(trace["otherData"]["scheduler"], "heft");
  const auto svg = redflow::testing::parse_xml(slurp(path("g.svg")));
  ASSERT_EQ(svg.error, "");
  EXPECT_EQ(svg.find("g", "class", "row").size(), 3u);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().string().find("redflow-tmp"), std::string::npos);
}

TEST_F(SeeCliTest, TheTraceOfARedundantRunShowsReplicasFaultsAndTheQuarantine) {
  auto r = run(kDemoRun + " --tiles 3 --redundancy 3x-diff --inject faulty-tile:1 --stats " + path("s.json") + " --trace " +
               path("t.json") + " --gantt " + path("g.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stats = nlohmann::json::parse(slurp(path("s.json")));
  const auto trace = nlohmann::json::parse(slurp(path("t.json")));
  std::map<int, std::string> process;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
  std::size_t actor_slices = 0, replicas = 0, faults = 0, flows_s = 0, flows_f = 0, counters = 0, quarantines = 0;
  std::set<std::string> replica_tiles_of_mm;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"], cat = e.value("cat", "");
    if (ph == "X" && cat.rfind("actor", 0) == 0) {
      ++actor_slices;
      if (e["args"].contains("replica")) ++replicas;
      if (e["args"].value("actor", "") == "mm") replica_tiles_of_mm.insert(process.at(e["pid"]));
    }
    faults += ph == "i" && e["name"] == "fault injected";
    flows_s += ph == "s";
    flows_f += ph == "f";
    counters += ph == "C";
    quarantines += ph == "i" && e["name"] == "quarantine";
  }
  EXPECT_EQ(actor_slices, stats["actors_executed"].get<std::size_t>());
  // Every tile actor is a replica (mm, add, sort_lo, sort_hi: up to three each; fewer once tile 1 is
  // quarantined, since two agreeing results suffice); the splits and the collect run once on the driver.
  EXPECT_EQ(replicas, actor_slices - 3);
  EXPECT_GE(replicas, 8u);
  EXPECT_EQ(replica_tiles_of_mm.size(), 3u) << "3x-diff replicas run on distinct tiles";
  EXPECT_EQ(faults, stats["injected_faults"].get<std::size_t>());
  EXPECT_GT(faults, 0u);
  EXPECT_EQ(flows_s, stats["transfers"].get<std::size_t>());
  EXPECT_EQ(flows_f, flows_s);
  EXPECT_GT(counters, 0u);
  // Tile 1 runs a replica of each of the 4 tile actors and loses every vote:
  // its third lost vote quarantines it (--quarantine-after 3), exactly once.
  EXPECT_EQ(stats["quarantined_tiles"], nlohmann::json::array({1}));
  EXPECT_GE(stats["tiles"][1]["lost_votes"].get<int>(), 3);
  EXPECT_EQ(quarantines, 1u) << "the trace marks the quarantine";
  const auto svg = redflow::testing::parse_xml(slurp(path("g.svg")));
  ASSERT_EQ(svg.error, "");
  std::size_t hatched = 0;
  for (const auto& e : svg.elements)
    hatched += e.attr("fill") == "url(#hatch)" && !e.ancestors.empty() && svg.elements[e.ancestors.back()].attr("class") == "actor";
  EXPECT_EQ(hatched, replicas);
  EXPECT_EQ(svg.find("g", "class", "row").size(), 4u);
}

TEST_F(SeeCliTest, ScheduleOfARedundantConfigurationPlacesReplicasOnDistinctTiles) {
  auto r = run("schedule " + kDemo + "pipeline.dot --tiles 3 --redundancy 3x-diff --svg " + path("s.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto svg = redflow::testing::parse_xml(slurp(path("s.svg")));
  ASSERT_EQ(svg.error, "");
  std::map<std::string, std::string> row_of;  // actor -> row
  for (const auto* g : svg.find("g", "class", "actor")) {
    for (const auto& e : svg.elements)
      if (e.name == "title" && !e.ancestors.empty() && &svg.elements[e.ancestors.back()] == g) row_of[e.text.substr(0, e.text.find(' '))] = g->attr("data-row");
  }
  EXPECT_EQ((std::set<std::string>{row_of["mm.r1"], row_of["mm.r2"], row_of["mm.r3"]}).size(), 3u);
  EXPECT_EQ(row_of["mm.compare"], "driver");
  auto too_few = run("schedule " + kDemo + "pipeline.dot --tiles 2 --redundancy 3x-diff");
  EXPECT_EQ(too_few.exit_code, 2) << too_few.err;
  EXPECT_NE(too_few.err.find("3x-diff"), std::string::npos) << too_few.err;
}

TEST_F(SeeCliTest, AFailedRunWritesNoTraceOrChart) {
  auto r = run("run " + kDemo + "pipeline.dot --trace " + path("t.json") + " --gantt " + path("g.svg"));  // input A missing
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("'A'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("t.json")));
  EXPECT_FALSE(fs::exists(path("g.svg")));
}

TEST_F(SeeCliTest, ScheduleCommandPrintsAndDrawsTheHeftSchedule) {
  auto r = run("schedule " + kDemo + "pipeline.dot --tiles 2 --svg " + path("s.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* actor : {"mm", "add", "split_lo", "split_hi", "sort_lo", "sort_hi", "join"})
    EXPECT_NE(r.out.find(std::string("\n") + actor + " "), std::string::npos) << actor << "\n" << r.out;
  EXPECT_NE(r.out.find("estimated makespan"), std::string::npos);
  const auto svg = redflow::testing::parse_xml(slurp(path("s.svg")));
  ASSERT_EQ(svg.error, "");
  EXPECT_EQ(svg.find("g", "class", "actor").size(), 7u);
  EXPECT_EQ(svg.find("g", "class", "row").size(), 3u);
  auto quiet = run("schedule " + kDemo + "pipeline.dot --tiles 3 --quiet --svg " + path("q.svg"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(redflow::testing::parse_xml(slurp(path("q.svg"))).find("g", "class", "row").size(), 4u);
}

TEST_F(SeeCliTest, ScheduleCommandRefusesBadFlagsByName) {
  auto bad = run("schedule " + kDemo + "pipeline.dot --redundancy 4x-same");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--redundancy"), std::string::npos) << bad.err;
  auto steal = run("schedule " + kDemo + "pipeline.dot --scheduler steal");
  EXPECT_NE(steal.exit_code, 0);
  EXPECT_NE(steal.err.find("--scheduler"), std::string::npos) << steal.err;
  auto missing = run("schedule " + path("nope.dot"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nope.dot"), std::string::npos) << missing.err;
}

TEST_F(SeeCliTest, NoProgressBarWhenStderrIsNotATerminal) {
  auto r = run(kDemoRun + " --repeat 300 --tiles 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("300/300"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[="), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\033["), std::string::npos) << r.err;
  // The summary line is still there, and it is the only line.
  EXPECT_EQ(r.err.rfind("redflow: 7 actors", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(SeeCliTest, ProgressBarOnATerminal) {
  auto r = run_on_terminal({"run", kDemo + "pipeline.dot", "--input", "A=" + kDemo + "A.bin", "--repeat", "300", "--tiles", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\rrun ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("300/300"), std::string::npos) << r.out;
  // The campaign command uses the same bar.
  auto campaign = run_on_terminal({"campaign", kDemo + "pipeline.dot", "--runs", "20", "--redundancy", "none,2x-same", "--inject",
                                   "bitflip:p=0.1", "--tiles", "2"});
  ASSERT_EQ(campaign.exit_code, 0) << campaign.out;
  EXPECT_NE(campaign.out.find("\rcampaign ["), std::string::npos) << campaign.out;
  EXPECT_NE(campaign.out.find("40/40"), std::string::npos) << campaign.out;
  // A single run is not worth a bar.
  auto one = run_on_terminal({"run", kDemo + "pipeline.dot", "--input", "A=" + kDemo + "A.bin", "--tiles", "2"});
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_NE(one.out.find("redflow: 7 actors"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("1/1"), std::string::npos) << one.out;
}

TEST_F(SeeCliTest, LogLevelControlsMessagesOnStderr) {
  auto quiet = run(kDemoRun + " --tiles 2 --gantt " + path("g.svg"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("info"), std::string::npos) << quiet.err;
  auto info = run("--log-level info " + kDemoRun + " --tiles 2 --gantt " + path("g.svg"));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.err.find("wrote the Gantt chart"), std::string::npos) << info.err;
  auto after = run(kDemoRun + " --tiles 2 --gantt " + path("g.svg") + " --log-level info");  // after the subcommand too
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.err.find("wrote the Gantt chart"), std::string::npos) << after.err;
  auto bad = run("--log-level chatty actors");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--log-level"), std::string::npos) << bad.err;
}

#ifdef REDFLOW_TEST_PLUGIN
// A new user's first plugin: "--lib my_actors.so" names the file in the current
// directory (dlopen alone would search the library path and not find it).
TEST_F(SeeCliTest, LibTakesAPluginInTheCurrentDirectoryByItsBareName) {
  fs::copy_file(REDFLOW_TEST_PLUGIN, path("my_actors.so"));
  std::ofstream(path("neg.dot")) << R"(digraph g { X [kind=input, bytes=8]; Y [kind=output, bytes=8]; n [actor="test.negate"]; X -> n [port=0]; n -> Y; })";
  std::ofstream(path("x.bin"), std::ios::binary).write("\x05\0\0\0\x07\0\0\0", 8);
  const std::string cmd = "cd " + dir_.string() + " && " + REDFLOW_CLI + " run neg.dot --lib my_actors.so --input X=x.bin --print >" +
                          path("stdout") + " 2>" + path("stderr");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("stderr"));
  EXPECT_NE(slurp(path("stdout")).find("-5       -7"), std::string::npos) << slurp(path("stdout"));
}
#endif

TEST_F(SeeCliTest, EveryHelpTeachesPurposeDefaultsAndTwoExamples) {
  auto top = run("--help");
  ASSERT_EQ(top.exit_code, 0);
  for (const char* s : {"run", "schedule", "graph", "actors", "--log-level", "=warn", "Examples:"})
    EXPECT_NE(top.out.find(s), std::string::npos) << s << "\n" << top.out;
  for (const char* sub : {"run", "schedule", "graph", "actors", "campaign"}) {
    auto h = run(std::string(sub) + " --help");
    ASSERT_EQ(h.exit_code, 0) << sub;
    const auto ex = h.out.find("Examples:");
    ASSERT_NE(ex, std::string::npos) << sub << "\n" << h.out;
    // Two example command lines after "Examples:".
    std::size_t examples = 0;
    for (auto at = h.out.find("\n  redflow " + std::string(sub), ex); at != std::string::npos;
         at = h.out.find("\n  redflow " + std::string(sub), at + 1))
      ++examples;
    EXPECT_GE(examples, 2u) << sub << "\n" << h.out;
    // Every option line states its default: "=VALUE" from CLI11 or "default:" in the text.
    const auto opts = h.out.find("\nOptions:");
    ASSERT_NE(opts, std::string::npos) << sub;
    const auto opts_end = h.out.find("\nExamples:", opts);
    std::istringstream lines(h.out.substr(opts + 1, opts_end == std::string::npos ? std::string::npos : opts_end - opts));
    std::string line, option;
    auto check = [&] {
      if (!option.empty() && option.find("--help") == std::string::npos) {
        EXPECT_TRUE(option.find('=') != std::string::npos || option.find("default") != std::string::npos ||
                    option.find("REQUIRED") != std::string::npos || option.find("required") != std::string::npos)
            << sub << ": no default in\n" << option;
      }
      option.clear();
    };
    bool in_options = false;
    while (std::getline(lines, line)) {
      if (line.rfind("Options:", 0) == 0) in_options = true;
      if (!in_options) continue;
      if (line.rfind("  -", 0) == 0) check();
      if (line.rfind("  ", 0) == 0) option += line + "\n";
    }
    check();
  }
}

}  // namespace
