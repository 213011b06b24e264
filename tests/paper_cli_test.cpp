// The paper profile from the command line, as a user runs it: a generated
// paper graph written as DOT and run on --machine paper gives the textbook
// product; `redflow table1` prints the paper's numbers beside verified ones;
// bad sizes, rows and conflicting machine flags are errors that name them.

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/matmul.hpp"
#include "cli_helpers.hpp"

namespace {

using redflow::testing::run_cli;

class PaperCliTest : public redflow::testing::CliTest {};

TEST_F(PaperCliTest, GeneratedPaperMatmulRunsOnThePaperMachine) {
  auto g = run_cli("gen matmul --profile paper --n 400 --out " + path("mm"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  EXPECT_NE(g.output.find("(19 actors"), std::string::npos) << g.output;  // k = 2: 8 + 8 + 3
  EXPECT_NE(g.output.find("--machine paper"), std::string::npos) << g.output;
  auto r = run_cli("run " + path("mm/matmul.dot") + " --input A=" + path("mm/A.bin") + " --input B=" + path("mm/B.bin") +
                   " --output C=" + path("c.bin") + " --machine paper --scheduler steal");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on 16 tiles"), std::string::npos) << r.output;
  const auto A = read_i32("mm/A.bin"), B = read_i32("mm/B.bin");
  std::vector<std::int32_t> want(400 * 400);
  redflow::apps::matmul_naive(A.data(), B.data(), want.data(), 400);
  EXPECT_EQ(read_i32("c.bin"), want);
}

TEST_F(PaperCliTest, Table1PrintsThePaperBesideOurs) {
  auto r = run_cli("table1 --rows fft:1048576 --runs 2 --json " + path("t1.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| fft | 2^20 | 1154 | 1154 | 331.8 |"), std::string::npos) << r.output;
  std::ifstream in(path("t1.json"));
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["actors"], 1154);
  EXPECT_EQ(j["rows"][0]["stolen_runs"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["verified"], true);
}

TEST_F(PaperCliTest, BadInputIsNamed) {
  auto n = run_cli("gen matmul --profile paper --n 300 --out " + path("x"));
  EXPECT_NE(n.exit_code, 0);
  EXPECT_NE(n.output.find("--profile paper --n 300: matmul needs n a positive multiple of 200"), std::string::npos) << n.output;
  auto row = run_cli("table1 --rows matmul:1500");
  EXPECT_NE(row.exit_code, 0);
  EXPECT_NE(row.output.find("'matmul:1500' is not a row of the paper's Table 1 (matmul sizes: 1000, 2000"), std::string::npos)
      << row.output;
  auto both = run_cli("bench fft --profile paper --n 8192 --machine paper --tiles 2");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.output.find("--machine"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("--tiles"), std::string::npos) << both.output;
  auto profile = run_cli("bench fft --profile slow");
  EXPECT_NE(profile.exit_code, 0);
  EXPECT_NE(profile.output.find("--profile slow"), std::string::npos) << profile.output;
}

}  // namespace
