// Launch where clusters launch (src/net/address_file.hpp, launcher.hpp):
// real processes racing for one address file, torn and stale files named,
// each launcher's environment read, and `mpirun -n 3` of the launch probe
// finding one driver and two tiles through the file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <regex>

#include "cli_helpers.hpp"
#include "net/address_file.hpp"
#include "net/keys.hpp"
#include "net/launcher.hpp"

namespace redflow::net {
namespace {

namespace fs = std::filesystem;
using redflow::testing::CliTest;
using namespace std::chrono_literals;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// A command started in its own shell and process, output and stderr piped.
FILE* start(const std::string& command) { return popen((command + " 2>&1").c_str(), "r"); }

// Waits for a command start() began: its exit code and output.
redflow::testing::RunResult finish(FILE* p) {
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Starts every command at once and returns their outputs and exit codes
// once all have ended.
std::vector<redflow::testing::RunResult> run_together(const std::vector<std::string>& commands) {
  std::vector<FILE*> pipes;
  for (const auto& c : commands) pipes.push_back(start(c));
  std::vector<redflow::testing::RunResult> results;
  for (FILE* p : pipes) results.push_back(finish(p));
  return results;
}

TEST(NetLaunchEnvTest, EachLauncherIsReadFromItsVariables) {
  auto none = detect_launch(env_of({{"HOME", "/root"}}));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  auto ompi = detect_launch(env_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_MCA_ess_base_jobid", "14938"},
                                    {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}}));
  ASSERT_TRUE(ompi.ok() && ompi->has_value()) << ompi.status().ToString();
  EXPECT_EQ((*ompi)->launcher, Launcher::kOpenMpi) << "mpirun inside a Slurm allocation is mpirun";
  EXPECT_EQ((*ompi)->rank, 0);
  EXPECT_EQ((*ompi)->size, 3);
  EXPECT_TRUE((*ompi)->driver());
  EXPECT_EQ(*launch_address_file(**ompi, "/shared"), "/shared/redflow-mpirun-14938.address");
  auto ompi5 = detect_launch(env_of({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"}, {"PMIX_NAMESPACE", "prterun-x-1@1"}}));
  ASSERT_TRUE(ompi5.ok() && ompi5->has_value());
  EXPECT_FALSE((*ompi5)->driver());
  EXPECT_EQ(*launch_address_file(**ompi5, ""), "./redflow-mpirun-prterun-x-1_1.address");

  auto slurm = detect_launch(env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "777"}, {"SLURM_STEP_ID", "2"}}));
  ASSERT_TRUE(slurm.ok() && slurm->has_value());
  EXPECT_EQ((*slurm)->launcher, Launcher::kSlurm);
  EXPECT_EQ((*slurm)->rank, 1);
  EXPECT_EQ((*slurm)->size, 4);
  EXPECT_EQ(*launch_address_file(**slurm, "/home/u"), "/home/u/redflow-srun-777.2.address");

  auto pmi = detect_launch(env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PMI_JOBID", "j9"}}));
  ASSERT_TRUE(pmi.ok() && pmi->has_value());
  EXPECT_EQ((*pmi)->launcher, Launcher::kPmi);
  EXPECT_EQ((*pmi)->job_id, "j9");

  auto no_id = detect_launch(env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  ASSERT_TRUE(no_id.ok() && no_id->has_value());
  auto file = launch_address_file(**no_id, "/x");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("give --address-file"), std::string::npos);
}

TEST(NetLaunchEnvTest, NonsenseInALaunchersVariablesIsNamed) {
  auto r = detect_launch(env_of({{"SLURM_PROCID", "x1"}, {"SLURM_NTASKS", "4"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("SLURM_PROCID='x1' is not a rank"), std::string::npos) << r.status().ToString();
  r = detect_launch(env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "3"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("OMPI_COMM_WORLD_RANK=3 is not below OMPI_COMM_WORLD_SIZE=3"), std::string::npos);
  r = detect_launch(env_of({{"PMI_RANK", "0"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("PMI_RANK is set but PMI_SIZE is not"), std::string::npos);
}

class NetLaunchTest : public CliTest {};

TEST_F(NetLaunchTest, RecordsRoundTripAndTornOrForeignFilesAreNamed) {
  AddressRecord r = this_process_record();
  r.endpoint = "tcp://127.0.0.1:5555";
  r.server_public_key = generate_key_pair()->public_key;
  const std::string text = format_address_record(r);
  auto back = parse_address_record(text, "f");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->endpoint, r.endpoint);
  EXPECT_EQ(back->server_public_key, r.server_public_key);
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->start_ticks, r.start_ticks);
  EXPECT_GT(r.start_ticks, 0u);

  // Every cut of the text short of the whole is refused, never read as a shorter record.
  for (std::size_t n = 0; n < text.size(); ++n) EXPECT_FALSE(parse_address_record(text.substr(0, n), "f").ok()) << n;
  auto torn = parse_address_record(text.substr(0, text.size() - 4), "job.address");
  EXPECT_NE(torn.status().message().find("address file job.address: torn: no 'end' line"), std::string::npos) << torn.status().ToString();
  auto foreign = parse_address_record("tcp://1.2.3.4:5\n", "job.address");
  EXPECT_NE(foreign.status().message().find("not written by redflow"), std::string::npos);
  auto unknown = parse_address_record("redflow-address-file 1\npid 1\nhost h\nport 9\nend\n", "job.address");
  EXPECT_NE(unknown.status().message().find("job.address:4: unknown field 'port'"), std::string::npos) << unknown.status().ToString();

  // A reader waiting on a torn file names it after its grace second rather than waiting out its timeout.
  write("torn.address", text.substr(0, text.size() - 4));
  const auto start = std::chrono::steady_clock::now();
  auto waited = wait_for_address(path("torn.address"), 20s);
  ASSERT_FALSE(waited.ok());
  EXPECT_NE(waited.status().message().find("torn"), std::string::npos) << waited.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST_F(NetLaunchTest, AStaleFileFromADeadDriverIsReportedNotWaitedOn) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // reaped: its pid names no process now
  AddressRecord dead = this_process_record();
  dead.pid = child;
  dead.endpoint = "tcp://127.0.0.1:1";
  write("job.address", format_address_record(dead));
  auto r = wait_for_address(path("job.address"), 20s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is stale: its driver (pid " + std::to_string(child)), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("remove the file"), std::string::npos);

  // The same through the command a batch script runs.
  auto cli = redflow::testing::run_cli("launch-probe --address-file " + path("job.address") + " --timeout 20");
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_NE(cli.output.find("is stale"), std::string::npos) << cli.output;

  // A live driver that has claimed but not yet published is waited on, then named.
  AddressRecord claimed = this_process_record();
  write("claimed.address", format_address_record(claimed));
  r = wait_for_address(path("claimed.address"), 200ms);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wrote no endpoint within 200 ms"), std::string::npos) << r.status().ToString();
  r = wait_for_address(path("never.address"), 100ms);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("never appeared"), std::string::npos) << r.status().ToString();
}

TEST_F(NetLaunchTest, OnlyTheFirstClaimWinsAndOnlyItsOwnerPublishesOrRemoves) {
  auto first = claim_address_file(path("a.address"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, Claim::kDriver);
  EXPECT_EQ(*claim_address_file(path("a.address")), Claim::kWorker);
  ASSERT_TRUE(publish_address(path("a.address"), {.endpoint = "tcp://127.0.0.1:7"}).ok());
  auto r = wait_for_address(path("a.address"), 1s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->endpoint, "tcp://127.0.0.1:7");

  AddressRecord other = this_process_record();
  other.pid = 1;  // init: alive, never this test
  write("b.address", format_address_record(other));
  Status s = publish_address(path("b.address"), {.endpoint = "tcp://127.0.0.1:8"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("claimed by pid 1"), std::string::npos) << s.message();
  EXPECT_FALSE(release_address_file(path("b.address")).ok());
  EXPECT_TRUE(fs::exists(path("b.address")));
  EXPECT_TRUE(release_address_file(path("a.address")).ok());
  EXPECT_FALSE(fs::exists(path("a.address")));
}

TEST_F(NetLaunchTest, AStarterThatCannotDriveLeavesNoFileBehind) {
  auto r = redflow::testing::run_cli("launch-probe --address-file " + path("job.address") + " --listen tcp://0.0.0.0:0 --timeout 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("refusing to listen on tcp://0.0.0.0:0 without keys"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("job.address"))) << "a failed starter left a file the next job would wait on";
  // Claimed, then the bind fails: the claim is withdrawn.
  r = redflow::testing::run_cli("launch-probe --address-file " + path("job.address") + " --listen tcp://127.0.0.1:noport --timeout 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--listen tcp://127.0.0.1:noport"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("job.address")));
}

TEST_F(NetLaunchTest, StartersRacingForOneFileMakeExactlyOneDriver) {
  for (int round = 0; round < 3; ++round) {
    const std::string file = path("race" + std::to_string(round) + ".address");
    std::vector<std::string> commands(4, std::string(REDFLOW_CLI) + " launch-probe --address-file " + file + " --tiles 3 --timeout 30");
    const auto results = run_together(commands);
    std::string all;
    for (const auto& r : results) {
      EXPECT_EQ(r.exit_code, 0) << r.output;
      all += r.output;
    }
    EXPECT_EQ(count(all, "driver: starter listening on tcp://127.0.0.1:"), 1) << all;
    EXPECT_EQ(count(all, "tile: starter joined the driver"), 3) << all;
    EXPECT_EQ(count(all, "driver: tile joined: starter host"), 3) << all;
    EXPECT_EQ(count(all, "driver: 3 tiles found the driver"), 1) << all;
    EXPECT_FALSE(fs::exists(file)) << "the driver leaves its address file behind";
  }
}

TEST_F(NetLaunchTest, KeysTravelThroughTheAddressFileAndSecureTheRendezvous) {
  std::string authorized;
  std::vector<std::string> commands;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "node" + std::to_string(i);
    ASSERT_EQ(redflow::testing::run_cli("keygen --out " + path(name)).exit_code, 0);
    authorized += *read_public_key_file(path(name + ".pub")) + " " + name + "\n";
    commands.push_back(std::string(REDFLOW_CLI) + " launch-probe --address-file " + path("job.address") + " --tiles 2 --timeout 30 --key " +
                       path(name + ".key") + " --authorized-keys " + path("workers.keys"));
  }
  write("workers.keys", authorized);
  const auto results = run_together(commands);
  std::string all;
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    all += r.output;
  }
  EXPECT_EQ(count(all, "driver: 2 tiles found the driver"), 1) << all;

  ASSERT_EQ(redflow::testing::run_cli("keygen --out " + path("stranger")).exit_code, 0);
  const std::string probe = std::string(REDFLOW_CLI) + " launch-probe --address-file " + path("job2.address") + " --tiles 1 --timeout 4";
  // The listed starter drives (its file published before the stranger starts), then the stranger tries to join.
  FILE* driver = start(probe + " --key " + path("node0.key") + " --authorized-keys " + path("workers.keys"));
  auto published = wait_for_address(path("job2.address"), 20s);
  const auto stranger = run_together({probe + " --key " + path("stranger.key")});
  const std::vector<redflow::testing::RunResult> pair = {finish(driver), stranger[0]};
  ASSERT_TRUE(published.ok()) << published.status().ToString() << pair[0].output;
  EXPECT_EQ(pair[0].exit_code, 1) << pair[0].output;
  EXPECT_NE(pair[0].output.find("0 of 1 tiles joined"), std::string::npos) << pair[0].output;
  EXPECT_NE(pair[0].output.find("refused a CURVE peer"), std::string::npos) << pair[0].output;
  EXPECT_EQ(pair[1].exit_code, 1) << pair[1].output;
  EXPECT_NE(pair[1].output.find("no answer from the driver"), std::string::npos) << pair[1].output;
}

TEST_F(NetLaunchTest, MpirunRankZeroDrivesAndTheOtherRanksFindItThroughTheFile) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed (scripts/bootstrap installs openmpi-bin)";
  const std::string cmd = "timeout 60 mpirun -n 3 --oversubscribe --allow-run-as-root " + std::string(REDFLOW_CLI) +
                          " launch-probe --rendezvous-dir " + dir_.string() + " --timeout 30";
  const auto r = run_together({cmd})[0];
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "driver: rank 0 of 3 (mpirun) listening on"), 1) << r.output;
  EXPECT_EQ(count(r.output, "tile: rank 1 of 3 (mpirun) joined the driver"), 1) << r.output;
  EXPECT_EQ(count(r.output, "tile: rank 2 of 3 (mpirun) joined the driver"), 1) << r.output;
  EXPECT_EQ(count(r.output, "driver: 2 tiles found the driver"), 1) << r.output;
  for (const auto& e : fs::directory_iterator(dir_)) ADD_FAILURE() << "left behind: " << e.path();
}

TEST_F(NetLaunchTest, SlurmAndPmiRanksMeetTheSameWay) {
  for (const std::string launcher : {"slurm", "pmi"}) {
    std::vector<std::string> commands;
    for (int rank = 0; rank < 3; ++rank) {
      const std::string env = launcher == "slurm" ? fmt::format("SLURM_PROCID={} SLURM_NTASKS=3 SLURM_JOB_ID=4242 SLURM_STEP_ID=0", rank)
                                                  : fmt::format("PMI_RANK={} PMI_SIZE=3 PMI_JOBID=job7", rank);
      commands.push_back("env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE " + env + " " + REDFLOW_CLI +
                         " launch-probe --rendezvous-dir " + dir_.string() + " --timeout 30");
    }
    std::swap(commands[0], commands[2]);  // rank 0 starts last: the others must wait for its file
    std::string all;
    for (const auto& r : run_together(commands)) {
      EXPECT_EQ(r.exit_code, 0) << r.output;
      all += r.output;
    }
    const std::string name = launcher == "slurm" ? "srun" : "pmi";
    EXPECT_EQ(count(all, "driver: rank 0 of 3 (" + name + ")"), 1) << all;
    EXPECT_EQ(count(all, "(" + name + ") joined the driver"), 2) << all;
  }
}

// examples/cluster/ keeps its promises: its scripts run as the README says.
TEST_F(NetLaunchTest, TheClusterExamplesRun) {
  const std::string examples = std::string(REDFLOW_SOURCE_DIR) + "/examples/cluster/";
  const std::string env = std::string("REDFLOW=") + REDFLOW_CLI + " timeout 90 ";
  auto r = run_together({env + examples + "address_file.sh " + path("af")})[0];
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "published in"), 1) << r.output;
  EXPECT_EQ(count(r.output, "on 2 tiles"), 1) << r.output;
  EXPECT_EQ(count(r.output, "a later starter serves a tile"), 2) << r.output;
  EXPECT_EQ(count(r.output, "the same output as a one-process run"), 1) << r.output;
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed (scripts/bootstrap installs openmpi-bin)";
  r = run_together({env + examples + "mpirun.sh " + path("mpi") + " 3"})[0];
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "(mpirun) serves a tile"), 2) << r.output;
  EXPECT_EQ(count(r.output, "the same output as a one-process run"), 1) << r.output;
}

}  // namespace
}  // namespace redflow::net
