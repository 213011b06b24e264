// `--report-json FILE` on run, spits, stream and rem: the one report shape
// written by each command, parsed back and checked against what the command's
// own output files say about the same run.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace redflow::testing {
namespace {

class ReportJsonCli : public CliTest {
 protected:
  nlohmann::json json_of(const std::string& name) {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in);
  }
};

const std::string kSource = REDFLOW_SOURCE_DIR;

TEST_F(ReportJsonCli, RunWritesTheReportOfTheLastExecution) {
  auto r = run_cli("run " + kSource + "/examples/demo/pipeline.dot --input A=" + kSource + "/examples/demo/A.bin --tiles 2 --stats " +
                   path("s.json") + " --report-json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto stats = json_of("s.json"), rep = json_of("r.json");
  EXPECT_EQ(rep["model"], "graph");
  EXPECT_EQ(rep["units"], stats["actors_executed"]);
  EXPECT_EQ(rep["seconds"], stats["makespan_s"]);
  EXPECT_GE(rep["places"].size(), 2u);
}

TEST_F(ReportJsonCli, StreamWritesFiringsPerRun) {
  auto r = run_cli("stream " + kSource + "/examples/streams/sum.dot --profile " + path("p.json") + " --report-json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto profile = json_of("p.json"), rep = json_of("r.json");
  std::uint64_t firings = 0;
  for (const auto& o : profile["operators"]) firings += o["firings"].get<std::uint64_t>();
  EXPECT_EQ(rep["model"], "stream");
  EXPECT_GT(firings, 0u);
  EXPECT_EQ(rep["units"].get<std::uint64_t>(), firings);
}

TEST_F(ReportJsonCli, SpitsWritesCommitsAndPoisonedTasks) {
  auto r = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB + " tasks=20 poison=5 out=" + path("out.txt") + " --local-workers 2 --stats " +
                   path("s.json") + " --report-json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 3) << r.output;  // a poisoned task; the report is written all the same
  const auto stats = json_of("s.json"), rep = json_of("r.json");
  EXPECT_EQ(rep["model"], "spits");
  EXPECT_EQ(rep["units"], stats["committed"]);
  EXPECT_EQ(rep["failed"]["tasks_poisoned"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(rep["failed"]["task_failures"], stats["strikes"]);
}

TEST_F(ReportJsonCli, RemWritesTaskExecutions) {
  auto r = run_cli("rem " + kSource + "/examples/demo/pipeline.dot --input A=" + kSource + "/examples/demo/A.bin --stats " + path("s.json") +
                   " --report-json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto stats = json_of("s.json"), rep = json_of("r.json");
  EXPECT_EQ(rep["model"], "rem");
  EXPECT_EQ(rep["units"], stats["executed"]);
  EXPECT_EQ(rep["places"][0]["bytes_out"], stats["bytes_written"]);
}

}  // namespace
}  // namespace redflow::testing
