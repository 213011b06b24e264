// `redflow gen` and `redflow bench` as a user runs them: real processes and
// files. Generated graphs must run with plain `redflow run` (no --lib) and
// give the reference result; bench must write the documented JSON keys; bad
// arguments must fail with a message naming the flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/apps.hpp"
#include "cli_helpers.hpp"

namespace {

namespace fs = std::filesystem;
using redflow::testing::run_cli;

class AppsCliTest : public redflow::testing::CliTest {
 protected:
  template <typename T>
  std::vector<T> read(const std::string& name) {
    std::ifstream in(path(name), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(static_cast<void*>(v.data()), bytes.data(), v.size() * sizeof(T));
    return v;
  }
  nlohmann::json bench_json(const std::string& args) {
    auto r = run_cli("bench " + args + " --runs 1 --json " + path("b.json"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(path("b.json"));
    if (!in) return nullptr;
    return nlohmann::json::parse(in);
  }
};

TEST_F(AppsCliTest, GeneratedMatmulRunsAndMatchesTheTextbookProduct) {
  auto g = run_cli("gen matmul --n 37 --block 10 --out " + path("mm"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  // The line to paste names the command as it was invoked (here the build tree's), and runs as printed.
  const std::string prompt = std::string("run it with:\n  ") + REDFLOW_CLI + " run ";
  const std::size_t at = g.output.find(prompt);
  ASSERT_NE(at, std::string::npos) << g.output;
  const std::size_t args = at + prompt.size() - 4;
  const auto pasted = run_cli(g.output.substr(args, g.output.find('\n', args) - args));
  ASSERT_EQ(pasted.exit_code, 0) << pasted.output;
  EXPECT_TRUE(std::filesystem::exists(path("mm/C.bin"))) << g.output;
  for (const char* sched : {"heft", "steal"}) {
    auto r = run_cli("run " + path("mm/matmul.dot") + " --input A=" + path("mm/A.bin") + " --input B=" + path("mm/B.bin") +
                 " --output C=" + path("c.bin") + " --tiles 2 --scheduler " + sched);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto A = read<std::int32_t>("mm/A.bin"), B = read<std::int32_t>("mm/B.bin");
    ASSERT_EQ(A.size(), 37u * 37u);
    std::vector<std::int32_t> ref(A.size());
    redflow::apps::matmul_naive(A.data(), B.data(), ref.data(), 37);
    EXPECT_EQ(read<std::int32_t>("c.bin"), ref) << sched;
  }
}

TEST_F(AppsCliTest, GeneratedFftRunsAndMatchesFftw) {
  auto g = run_cli("gen fft --n 1024 --out " + path("fft"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  EXPECT_TRUE(fs::exists(path("fft/T.bin")));  // the twiddle constant beside the DOT file
  auto r = run_cli("run " + path("fft/fft.dot") + " --input X=" + path("fft/X.bin") + " --output Y=" + path("y.bin") +
               " --tiles 3 --scheduler steal");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto x = read<std::complex<double>>("fft/X.bin");
  const auto y = read<std::complex<double>>("y.bin");
  ASSERT_EQ(x.size(), 1024u);
  ASSERT_EQ(y.size(), 1024u);
  const auto ref = redflow::apps::fft_reference(x);
  EXPECT_LT(redflow::apps::relative_error(y.data(), ref.data(), ref.size()), 1e-12);
}

TEST_F(AppsCliTest, GeneratedBitonicRunsAndSorts) {
  auto g = run_cli("gen bitonic --n 4096 --block 512 --seed 3 --out " + path("sort"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  auto r = run_cli("run " + path("sort/bitonic.dot") + " --input X=" + path("sort/X.bin") + " --output Y=" + path("y.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto ref = read<std::int32_t>("sort/X.bin");
  ASSERT_EQ(ref.size(), 4096u);
  std::sort(ref.begin(), ref.end());
  EXPECT_EQ(read<std::int32_t>("y.bin"), ref);
}

TEST_F(AppsCliTest, BenchWritesTheDocumentedJsonKeys) {
  const std::pair<std::string, std::string> cases[] = {
      {"matmul", "matmul --n 40"},
      {"fft", "fft --n 1024 --fftw-planning estimate --fftw-wisdom ''"},
      {"bitonic", "bitonic --n 4096 --scheduler steal"},
      {"overhead", "overhead --shape wavefront --n 100"}};
  for (const auto& [app, args] : cases) {
    SCOPED_TRACE(args);
    const nlohmann::json j = bench_json(args);
    ASSERT_TRUE(j.is_object());
    for (const char* key : {"app", "n", "redflow_s", "baseline_s", "ratio", "verified", "steals", "transfers"})
      EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["app"], app);
    EXPECT_EQ(j["verified"], true);
    EXPECT_GT(j["redflow_s"].get<double>(), 0);
    EXPECT_GT(j["baseline_s"].get<double>(), 0);
    EXPECT_NEAR(j["ratio"].get<double>(), j["baseline_s"].get<double>() / j["redflow_s"].get<double>(), 1e-9);
    EXPECT_EQ(j["redundancy"], "none");
    ASSERT_EQ(j["configs"].size(), 1u);
    if (app == "matmul") {
      EXPECT_GT(j.value("sgemm_s", 0.0), 0) << "OpenBLAS's ceiling, opened on first use";
    }
  }
}

// The command opens OpenBLAS only for the matmul bench's ceiling: its
// threaded build starts a thread as it loads that spins for about 0.1 s of a
// core, and every worker process is this command.
TEST_F(AppsCliTest, TheCommandLoadsOpenBlasOnlyForTheMatmulCeiling) {
  auto loaded = [](const std::string& args) {
    const auto r = run_cli(args, "LD_DEBUG=libs");  // the loader says each library it loads
    EXPECT_EQ(r.exit_code, 0) << args << ":\n" << r.output.substr(0, 2000);
    return r.output.find("libopenblas") != std::string::npos;
  };
  EXPECT_FALSE(loaded("actors"));
  EXPECT_FALSE(loaded("bench overhead --shape chain --n 100 --runs 1"));
  EXPECT_TRUE(loaded("bench matmul --n 40 --runs 1")) << "the ceiling opens it";
}

TEST_F(AppsCliTest, BenchWithoutBaselineStillVerifies) {
  const nlohmann::json j = bench_json("bitonic --n 1024 --no-baseline");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["verified"], true);
  EXPECT_TRUE(j["baseline_s"].is_null());
  EXPECT_TRUE(j["ratio"].is_null());
}

TEST_F(AppsCliTest, BenchMeasuresEverySchedulerAndRedundancyConfigurationItIsGiven) {
  // 3 tiles, so that 3x-diff has a tile for each replica.
  const nlohmann::json j =
      bench_json("bitonic --n 2048 --tiles 3 --no-baseline --scheduler heft,steal --redundancy none,2x-same,3x-diff");
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["configs"].size(), 6u);
  const char* names[] = {"none", "2x-same", "3x-diff"};
  for (std::size_t s = 0; s < 2; ++s) {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& c = j["configs"][s * 3 + i];
      EXPECT_EQ(c["scheduler"], s == 0 ? "heft" : "steal");
      EXPECT_EQ(c["redundancy"], names[i]);
      EXPECT_EQ(c["verified"], true) << names[i];
      EXPECT_GT(c["redflow_s"].get<double>(), 0) << names[i];
    }
    // Normalised to none under the same scheduler.
    EXPECT_DOUBLE_EQ(j["configs"][s * 3]["normalized"].get<double>(), 1.0);
    // Replicas on distinct tiles move more data than one execution does.
    EXPECT_GT(j["configs"][s * 3 + 2]["transfers"].get<double>(), j["configs"][s * 3]["transfers"].get<double>());
  }
  EXPECT_EQ(j["configs"][0]["steals"], 0.0);  // HEFT never steals
  // 3x-diff cannot run on 2 tiles: an error naming --tiles, before any measurement.
  auto r = run_cli("bench bitonic --n 2048 --tiles 2 --runs 1 --redundancy none,3x-diff");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--tiles"), std::string::npos) << r.output;
}

TEST_F(AppsCliTest, BadArgumentsNameTheFlag) {
  const std::pair<std::string, std::string> cases[] = {
      {"gen fft --n 1000 --out " + path("x"), "--n must be a power of two for fft"},
      {"gen bitonic --n 12 --out " + path("x"), "--n must be a power of two for bitonic"},
      {"gen matmul --n 0 --out " + path("x"), "--n"},
      {"gen bitonic --n 0 --out " + path("x"), "--n"},
      {"gen fft --n 0 --out " + path("x"), "--n"},
      {"gen qsort --n 16 --out " + path("x"), "unknown app 'qsort'"},
      {"gen bitonic --n 1024 --block 100 --out " + path("x"), "--block 100"},
      {"bench fft --n 3000", "--n must be a power of two for fft"},
      {"bench heapsort --n 16", "unknown app 'heapsort'"},
      {"bench overhead --shape star", "--shape star"},
      {"bench matmul --n 16 --redundancy 4x-same", "--redundancy"},
      {"bench matmul --n 16 --scheduler heft,fifo", "--scheduler heft,fifo"},
      {"gen matmul --out " + path("x"), "--n"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_cli(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(path("x/fft.dot")));  // nothing written on failure
}

TEST_F(AppsCliTest, ActorsListsTheApplicationActors) {
  auto r = run_cli("actors");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"mm.block", "fft.cols", "fft.rows", "sort.low", "sort.high", "mat.cols", "mat.hcat", "mat.hcat.tile", "noop", "wf.task", "wf.digest"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name;
}

}  // namespace
