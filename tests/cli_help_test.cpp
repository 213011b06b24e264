// The command line as a new user meets it: `redflow --help` lists the
// commands under what they are for, one line each, the developers' tools
// last; launcher flags are named where a launcher refuses without them; and
// every subcommand follows one exit status convention (docs/guide.md, "Exit
// statuses"): 2 when the command line is wrong and nothing ran, 1 when the
// command ran and failed. Every command `redflow --help` lists is checked,
// so a new one without an entry here fails.
#include <map>
#include <set>
#include <sstream>

#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::run_cli;

TEST_F(CliTest, HelpGroupsTheCommandsDevelopersToolsLast) {
  auto r = run_cli("--help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> groups = {"Run a program:", "Inspect a program:", "Run on a cluster:", "Use a server:",
                                           "Reproduce the papers:", "Develop redflow:"};
  std::size_t at = 0;
  for (const std::string& g : groups) {
    const std::size_t found = r.output.find("\n" + g + "\n", at);
    ASSERT_NE(found, std::string::npos) << g << " missing or out of order:\n" << r.output;
    at = found;
  }
  // Each command under its group: run first, difftest among the developers' tools.
  const std::size_t develop = r.output.find("Develop redflow:");
  EXPECT_LT(r.output.find("\n  run "), r.output.find("Inspect a program:")) << r.output;
  EXPECT_GT(r.output.find("\n  difftest "), develop) << r.output;
  EXPECT_GT(r.output.find("\n  launch-probe "), develop) << r.output;
  // One line per command: examples stay in the command's own --help.
  EXPECT_EQ(r.output.find("Examples:\n    redflow gen"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("redflow gen fft --n"), std::string::npos) << r.output;
  auto gen = run_cli("gen --help");
  EXPECT_NE(gen.output.find("redflow gen fft --n"), std::string::npos) << gen.output;
}

TEST_F(CliTest, MpirunExamplesSayWhenOpenMpiNeedsItsFlags) {
  for (const char* cmd : {"run --help", "launch-probe --help"}) {
    auto r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("--allow-run-as-root"), std::string::npos) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find("--oversubscribe"), std::string::npos) << cmd << ":\n" << r.output;
  }
}

// The commands `redflow --help` lists under its groups.
std::set<std::string> listed_commands() {
  std::set<std::string> names;
  std::istringstream help(run_cli("--help").output);
  bool after_options = false, in_group = false;
  for (std::string line; std::getline(help, line);) {
    if (line == "Options:") after_options = true;
    if (!line.empty() && line.back() == ':' && line[0] != ' ') {
      in_group = after_options && line != "Options:";
      continue;
    }
    if (in_group && line.starts_with("  ") && line.size() > 2 && line[2] != ' ') names.insert(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

TEST_F(CliTest, EveryCommandExitsTwoOnAUsageErrorAndOneOnAFailure) {
  write("bad.dot", "garbage {\n");
  write("bad.so", "not a shared object\n");
  const std::string dot = path("bad.dot"), so = path("bad.so"), nowhere = path("no/such/dir");
  // A command that runs and fails, for each command.
  const std::map<std::string, std::string> failing = {
      {"run", "run " + dot},
      {"stream", "stream " + dot},
      {"spits", "spits " + so},
      {"rem", "rem " + dot},
      {"campaign", "campaign " + dot + " --inject bitflip:p=0.1"},
      {"graph", "graph " + dot},
      {"actors", "actors --lib " + so},
      {"schedule", "schedule " + dot},
      {"place", "place " + dot},
      {"worker", "worker --connect tcp://127.0.0.1:1 --connect-timeout 0.3"},
      {"keygen", "keygen --out " + nowhere + "/k"},
      {"tile", "tile --connect tcp://127.0.0.1:1 --connect-timeout 0.3"},
      {"stream-worker", "stream-worker --connect tcp://127.0.0.1:1 --connect-timeout 0.3"},
      {"spits-worker", "spits-worker " + so + " --announce-dir " + path("announce")},
      {"gen", "gen matmul --n 4 --out /proc/" + std::string("redflow-no")},
      {"import", "import wfformat " + dot + " --out " + path("imported")},  // not JSON
      {"bench", "bench matmul --n 4 --json " + nowhere + "/b.json"},
      {"table1", "table1 --rows matmul:1000 --runs 1 --json " + nowhere + "/t.json"},
      {"difftest", "difftest --replay " + path("")},
      {"launch-probe", "launch-probe"},  // no mpirun, srun, PMI nor --address-file around: nothing to meet through
      {"server", "server --min-workers 1 --journal " + dot + " --server-file " + path("sf")},  // a journal that is a file
      {"submit", "submit --server-file " + nowhere + " run " + dot},  // no server
      {"jobs", "jobs --server-file " + nowhere},
      {"job", "job 1 --server-file " + nowhere},
      {"wait", "wait 1 --server-file " + nowhere},
      {"fetch", "fetch 1 --server-file " + nowhere},
      {"cancel", "cancel 1 --server-file " + nowhere},
      {"workers", "workers --server-file " + nowhere},
      {"view", "view " + dot},  // not a run's stats
  };
  // A usage error each command finds after parsing (a value that does not
  // parse, flags that need each other), and the flag and value it names.
  const std::string& demo = redflow::testing::kDemo;
  const std::map<std::string, std::pair<std::string, std::string>> usage = {
      {"run", {"run " + dot + " --redundancy 4x-same", "--redundancy: unknown redundancy configuration '4x-same'"}},
      {"stream", {"stream " + dot + " --place bogus", "--place: unknown placement algorithm 'bogus'"}},
      {"spits", {"spits " + so + " --listen 10.0.0.1:7000", "(--listen) '10.0.0.1:7000': expected tcp://HOST:PORT"}},
      {"rem", {"rem " + demo + "pipeline.dot --input A=" + demo + "A.bin --store memcached://nohost", "--store memcached://nohost: 'nohost' is not HOST:PORT"}},
      {"campaign", {"campaign " + dot + " --inject nope", "--inject 'nope': expected"}},
      {"graph", {"graph " + dot + " --redundancy 4x", "--redundancy: unknown configuration '4x'"}},
      {"actors", {"actors --lib " + path("none.so"), "--lib: cannot open '" + path("none.so") + "'"}},
      {"schedule", {"schedule " + dot + " --redundancy 5x", "--redundancy: 5x not in"}},
      {"place", {"place " + dot + " --algo smart_min", "--algo smart_min needs --profile"}},
      {"worker", {"worker --connect 127.0.0.1:5555", "--connect '127.0.0.1:5555': expected tcp://HOST:PORT"}},
      {"keygen", {"keygen --out ''", "--out '': give the files' path prefix"}},
      {"tile", {"tile --connect tcp://127.0.0.1:0", "--connect 'tcp://127.0.0.1:0': expected tcp://HOST:PORT"}},
      {"stream-worker", {"stream-worker --connect tcp://nohost", "--connect 'tcp://nohost': expected tcp://HOST:PORT"}},
      {"spits-worker", {"spits-worker " + so + " --announce " + path("") + " --listen tcp://10.0.0.1:7000", "refusing to listen on tcp://10.0.0.1:7000 without keys"}},
      {"gen", {"gen fft --n 100 --out " + path("gen"), "--n must be a power of two for fft (the number of points), got 100"}},
      {"import", {"import dax " + dot + " --out " + path("imported"), "import: format 'dax' is not one redflow reads (wfformat)"}},
      {"bench", {"bench overhead --shape ring", "--shape ring: expected"}},
      {"table1", {"table1 --rows nope", "--rows nope: 'nope' is not a row"}},
      {"difftest", {"difftest --seeds 5..2", "--seeds '5..2': expected"}},
      {"launch-probe", {"launch-probe --connect localhost", "--connect 'localhost': expected tcp://HOST:PORT"}},
      {"server", {"server --listen 10.0.0.1:7000", "needs --min-workers N"}},
      {"submit", {"submit --server-file " + nowhere + " run " + dot + " --listen tcp://127.0.0.1:5", "submit: --listen is the server's"}},
      {"jobs", {"jobs --server-file ''", "no server given: --server ENDPOINT or --server-file FILE"}},
      {"job", {"job 0", "'0' is not a job id"}},
      {"wait", {"wait 1 --server-file ''", "no server given"}},
      {"fetch", {"fetch 0", "'0' is not a job id"}},
      {"cancel", {"cancel x1", "'x1' is not a job id"}},
      {"workers", {"workers --server-file ''", "no server given"}},
      {"view", {"view " + dot + " --dashboard 127.0.0.1:99999", "'127.0.0.1:99999'"}},
  };
  const std::set<std::string> listed = listed_commands();
  ASSERT_GE(listed.size(), 19u);
  for (const std::string& name : listed) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(failing.count(name)) << "no failing command for '" << name << "': add one to this test";
    ASSERT_TRUE(usage.count(name)) << "no usage error for '" << name << "': add one to this test";
    // A usage error: an unknown flag (CLI11 names a missing required argument first, where there is one).
    auto unknown = run_cli(name + " --no-such-flag");
    EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
    EXPECT_TRUE(unknown.output.find("unknown option '--no-such-flag'") != std::string::npos ||
                unknown.output.find(" is required") != std::string::npos)
        << unknown.output;
    const auto& [line, names] = usage.at(name);
    auto wrong = run_cli(line);
    EXPECT_EQ(wrong.exit_code, 2) << line << "\n" << wrong.output;
    EXPECT_NE(wrong.output.find("redflow: error: "), std::string::npos) << wrong.output;
    EXPECT_NE(wrong.output.find(names), std::string::npos) << line << "\n" << wrong.output;
    auto failed = run_cli(failing.at(name));
    EXPECT_EQ(failed.exit_code, 1) << failing.at(name) << "\n" << failed.output;
    EXPECT_NE(failed.output.find("redflow: error: "), std::string::npos) << failed.output;
  }
  // Other usage errors: a file named that cannot be read, a missing argument, an unknown command.
  auto missing = run_cli("run " + path("nope.dot"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  auto none = run_cli("run");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  auto unknown = run_cli("rnu");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  auto flag = run_cli("run " + dot + " --no-such-flag");
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  EXPECT_NE(flag.output.find("unknown option '--no-such-flag'"), std::string::npos) << flag.output;
}

}  // namespace
