// Tests for the paper profile (apps/paper.hpp): the actor counts of all
// sixteen sizes of the paper's Table 1, from the closed forms and from the
// generators (without running them); every paper-profile graph at small sizes
// run on the paper's machine (16 tiles, 8 slots of 160 KiB) under both
// schedulers against an independent reference (textbook matmul, FFTW,
// std::sort); the size errors, which name --n and what the profile needs.

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "apps/apps.hpp"
#include "redflow/redflow.hpp"
#include "test_graphs.hpp"

namespace redflow::apps {
namespace {

using Bytes = std::vector<std::byte>;
using cd = std::complex<double>;
using redflow::testing::from_bytes;

// Runs `p` on the paper's machine under `sched` and returns its output.
Bytes run_on_paper_machine(const AppProblem& p, Scheduler sched, Redundancy r = Redundancy::kNone) {
  RuntimeOptions o;
  apply_paper_machine(o);
  o.scheduler = sched;
  Runtime rt(o);
  auto loaded = rt.load(p.graph, app_registry());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return {};
  Inputs in;
  for (const auto& [name, bytes] : p.inputs) in[name] = bytes;
  ExecuteOptions eo;
  eo.redundancy = r;
  auto out = loaded->execute(in, eo);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  // Section 6.1: data nodes fit the slots, so the driver runs only the special actors.
  const Registry reg = app_registry();
  std::size_t special = 0;
  for (const ActorNode& a : p.graph.actors()) special += reg.find(a.function)->on_driver ? 1 : 0;
  EXPECT_EQ(loaded->last_stats().driver.actors, special);
  return out->at(p.output);
}

TEST(PaperProfile, ClosedFormsGiveTable1) {
  ASSERT_EQ(paper_table1().size(), 16u);
  for (const PaperTable1Row& row : paper_table1()) {
    auto count = paper_actor_count(row.app, row.n);
    ASSERT_TRUE(count.ok()) << count.status().ToString();
    EXPECT_EQ(*count, row.actors) << row.app << " n=" << row.n;
  }
}

// The generators build all sixteen graphs of Table 1 (not run) with exactly the paper's actor counts.
TEST(PaperProfile, GeneratorsGiveTable1) {
  for (const PaperTable1Row& row : paper_table1()) {
    auto g = paper_graph(row.app, row.n);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(g->actors().size(), row.actors) << row.app << " n=" << row.n;
  }
}

TEST(PaperProfile, GeneratorsMatchClosedFormsAtSmallSizes) {
  for (std::size_t n : {200, 400, 600, 1000}) EXPECT_EQ(paper_graph("matmul", n)->actors().size(), *paper_actor_count("matmul", n));
  for (std::size_t p = 1; p <= 32; p *= 2) {
    EXPECT_EQ(paper_graph("fft", p << 13)->actors().size(), *paper_actor_count("fft", p << 13)) << p;
    EXPECT_EQ(paper_graph("bitonic", p << 15)->actors().size(), *paper_actor_count("bitonic", p << 15)) << p;
  }
  // Fig. 2 of the paper: four blocks, 18 actors.
  EXPECT_EQ(*paper_actor_count("fft", 4 << 13), 18u);
}

TEST(PaperProfile, EveryDataNodeATileTouchesFitsASlot) {
  for (const auto& [app, n] : std::vector<std::pair<std::string, std::size_t>>{{"matmul", 600}, {"fft", 1 << 16}, {"bitonic", 1 << 18}}) {
    auto g = paper_graph(app, n);
    ASSERT_TRUE(g.ok());
    const Registry reg = app_registry();
    for (const ActorNode& a : g->actors()) {
      if (reg.find(a.function)->on_driver) continue;
      EXPECT_LE(a.inputs.size() + 1, kPaperSlots) << a.name;
      for (DataId d : a.outputs) EXPECT_LE(g->data(d).bytes, kPaperSlotBytes) << a.name;
      for (DataId d : a.inputs) EXPECT_LE(g->data(d).bytes, kPaperSlotBytes) << a.name;
    }
  }
}

TEST(PaperProfile, BadSizesNameTheFlagAndTheRule) {
  auto m = paper_graph("matmul", 300);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--profile paper --n 300"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("multiple of 200"), std::string::npos);
  auto f = paper_graph("fft", 4096);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("2^13"), std::string::npos) << f.status().message();
  auto b = paper_graph("bitonic", (1 << 16) + 4);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("power of two"), std::string::npos) << b.status().message();
  auto blocked = make_problem("matmul", 400, 100, Target{}, 1, Profile::kPaper);
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.status().message().find("--block 100"), std::string::npos) << blocked.status().message();
  EXPECT_FALSE(parse_profile("slow").ok());
  EXPECT_NE(parse_profile("slow").status().message().find("--profile slow"), std::string::npos);
}

class PaperRun : public ::testing::TestWithParam<Scheduler> {};

TEST_P(PaperRun, MatmulEqualsTheTextbookProduct) {
  for (std::size_t n : {200, 400}) {
    auto p = make_problem("matmul", n, 0, Target{}, 5, Profile::kPaper);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto c = from_bytes<std::int32_t>(run_on_paper_machine(*p, GetParam()));
    std::vector<std::int32_t> want(n * n);
    matmul_naive(from_bytes<std::int32_t>(p->inputs.at("A")).data(), from_bytes<std::int32_t>(p->inputs.at("B")).data(),
                 want.data(), n);
    EXPECT_EQ(c, want) << "n=" << n;
  }
}

TEST_P(PaperRun, FftEqualsFftw) {
  for (std::size_t n : {std::size_t{1} << 13, std::size_t{1} << 15, std::size_t{1} << 16}) {
    auto p = make_problem("fft", n, 0, Target{}, 3, Profile::kPaper);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto y = from_bytes<cd>(run_on_paper_machine(*p, GetParam()));
    ASSERT_EQ(y.size(), n);
    const auto want = fft_reference(from_bytes<cd>(p->inputs.at("X")));
    EXPECT_LT(relative_error(y.data(), want.data(), n), 1e-12) << "n=" << n;
  }
}

TEST_P(PaperRun, BitonicEqualsStdSort) {
  for (std::size_t n : {std::size_t{1} << 15, std::size_t{1} << 17, std::size_t{1} << 18}) {
    auto p = make_problem("bitonic", n, 0, Target{}, 9, Profile::kPaper);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    if (n == std::size_t{1} << 17) {  // many equal values
      auto x = from_bytes<std::int32_t>(p->inputs.at("X"));
      for (auto& v : x) v %= 50;
      std::memcpy(p->inputs.at("X").data(), x.data(), x.size() * 4);
    }
    auto y = from_bytes<std::int32_t>(run_on_paper_machine(*p, GetParam()));
    auto want = from_bytes<std::int32_t>(p->inputs.at("X"));
    std::sort(want.begin(), want.end());
    EXPECT_EQ(y, want) << "n=" << n;
  }
}

// Fig. 6's configurations run on the paper profile too (replicas on distinct tiles among 16).
TEST_P(PaperRun, RedundantExecutionGivesTheSameResult) {
  auto p = make_problem("bitonic", std::size_t{1} << 17, 0, Target{}, 4, Profile::kPaper);
  ASSERT_TRUE(p.ok());
  auto want = from_bytes<std::int32_t>(p->inputs.at("X"));
  std::sort(want.begin(), want.end());
  for (Redundancy r : {Redundancy::kDoubleSame, Redundancy::kTripleDiff})
    EXPECT_EQ(from_bytes<std::int32_t>(run_on_paper_machine(*p, GetParam(), r)), want) << to_string(r);
}

INSTANTIATE_TEST_SUITE_P(BothSchedulers, PaperRun, ::testing::Values(Scheduler::kHeft, Scheduler::kSteal),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace redflow::apps
