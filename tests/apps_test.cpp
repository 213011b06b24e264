// Tests for the benchmark applications (apps/): every generated graph, run by
// the runtime under both schedulers on one and several tiles, against a
// reference written independently of the graph (textbook matmul, FFTW,
// std::sort); the block kernels against plain loops on ragged shapes; the
// generators' choices (data nodes fit a slot, so no compute actor lands on
// the driver) and their errors, which name the flag at fault.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "apps/apps.hpp"
#include "redflow/redflow.hpp"
#include "schedule/heft.hpp"
#include "test_graphs.hpp"

namespace redflow::apps {
namespace {

using Bytes = std::vector<std::byte>;
using cd = std::complex<double>;

using redflow::testing::from_bytes;

template <typename T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), static_cast<const void*>(v.data()), b.size());
  return b;
}

struct RunConfig {
  Scheduler scheduler = Scheduler::kHeft;
  unsigned tiles = 1;
  unsigned cores_per_tile = 1;
};

std::string describe(const RunConfig& c) {
  return std::string(to_string(c.scheduler)) + ", " + std::to_string(c.tiles) + " tile(s) x " +
         std::to_string(c.cores_per_tile) + " core(s)";
}

// Both schedulers, on one tile and on three (uneven against 2^k blocks), and
// one tile with a three-core parallel loop.
std::vector<RunConfig> all_configs() {
  return {{Scheduler::kHeft, 1, 1}, {Scheduler::kSteal, 1, 1}, {Scheduler::kHeft, 3, 1},
          {Scheduler::kSteal, 3, 1}, {Scheduler::kSteal, 2, 3}};
}

// Runs the problem's graph twice (the second execution reuses the loaded
// graph, as benchmarks do) and returns the output of the second run.
Bytes run_problem(const AppProblem& p, const Target& target, const RunConfig& c) {
  RuntimeOptions o;
  o.tiles = c.tiles;
  o.cores_per_tile = c.cores_per_tile;
  o.slots = target.slots;
  o.slot_bytes = target.slot_bytes;
  o.scheduler = c.scheduler;
  Runtime rt(o);
  auto loaded = rt.load(p.graph, app_registry());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return {};
  Inputs in;
  for (const auto& [name, bytes] : p.inputs) in[name] = bytes;
  Bytes last;
  for (int run = 0; run < 2; ++run) {
    auto out = loaded->execute(in);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return {};
    EXPECT_EQ(loaded->last_stats().actors_executed, p.graph.actors().size());
    last = out->at(p.output);
  }
  return last;
}

// Every compute actor of the graph fits a tile of `target` (the paper's rule:
// no compute actor is pushed to the driver for want of slots).
void expect_compute_actors_fit(const Graph& g, const Target& target) {
  MachineModel m;
  m.tiles = target.tiles;
  m.slots = target.slots;
  m.slot_bytes = target.slot_bytes;
  const Registry reg = app_registry();
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    const ActorSpec* spec = reg.find(g.actor(a).function);
    ASSERT_NE(spec, nullptr) << g.actor(a).function;
    if (spec->on_driver) continue;
    EXPECT_FALSE(runs_on_driver(g, a, m, reg)) << "actor '" << g.actor(a).name << "' (" << g.actor(a).function
                                               << ") does not fit a tile of " << target.slots << " x "
                                               << target.slot_bytes << " bytes";
  }
}

// ---------------------------------------------------------------- matmul

TEST(MatmulKernel, MatchesPlainLoopsOnRaggedShapes) {
  std::mt19937 rng(11);
  // Shapes around the register tile (6 or 4 rows x 32 columns) and the k block (256).
  const std::tuple<std::size_t, std::size_t, std::size_t> shapes[] = {
      {1, 1, 1}, {6, 32, 256}, {7, 33, 257}, {5, 31, 3}, {13, 70, 300}, {12, 64, 512}, {3, 100, 1}, {17, 9, 40}};
  for (auto [m, cols, k] : shapes) {
    SCOPED_TRACE(::testing::Message() << m << " x " << k << " times " << k << " x " << cols);
    const std::size_t lda = k + 3, ldb = cols + 5, ldc = cols + 2;
    std::vector<std::int32_t> A(m * lda), B(k * ldb), C(m * ldc, 0x5a5a5a5a), R(m * ldc, 0x5a5a5a5a);
    for (auto& v : A) v = static_cast<std::int32_t>(rng());
    for (auto& v : B) v = static_cast<std::int32_t>(rng());
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        std::uint32_t s = 0;
        for (std::size_t p = 0; p < k; ++p) s += static_cast<std::uint32_t>(A[i * lda + p]) * static_cast<std::uint32_t>(B[p * ldb + j]);
        R[i * ldc + j] = static_cast<std::int32_t>(s);
      }
    matmul_kernel(A.data(), lda, B.data(), ldb, C.data(), ldc, m, cols, k);
    EXPECT_EQ(C, R);  // also: the padding columns of C are left alone
  }
}

TEST(MatmulKernel, DirectBaselineMatchesNaive) {
  std::mt19937 rng(3);
  for (std::size_t n : {1, 19, 67, 600}) {  // 600: two packed panels of B, three row blocks
    std::vector<std::int32_t> A(n * n), B(n * n), C(n * n, -1), R(n * n);
    for (auto& v : A) v = static_cast<std::int32_t>(rng());
    for (auto& v : B) v = static_cast<std::int32_t>(rng());
    matmul_naive(A.data(), B.data(), R.data(), n);
    MatmulDirect direct(n, 2);
    direct.run(A.data(), B.data(), C.data());
    EXPECT_EQ(C, R) << "n = " << n;
  }
}

class MatmulGraph : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(MatmulGraph, MatchesNaiveUnderEveryConfiguration) {
  const auto [n, block] = GetParam();
  const Target target{.slot_bytes = 64 << 10, .slots = 16, .tiles = 3};
  auto p = make_problem("matmul", n, block, target, 5);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  expect_compute_actors_fit(p->graph, target);
  const auto A = from_bytes<std::int32_t>(p->inputs.at("A")), B = from_bytes<std::int32_t>(p->inputs.at("B"));
  std::vector<std::int32_t> ref(n * n);
  matmul_naive(A.data(), B.data(), ref.data(), n);
  for (const RunConfig& c : all_configs()) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(from_bytes<std::int32_t>(run_problem(*p, target, c)), ref);
  }
}

// Sides that are not multiples of anything (1, 37, 100), with the default
// cut and with explicit blocks that leave a ragged last panel.
INSTANTIATE_TEST_SUITE_P(Sizes, MatmulGraph,
                         ::testing::Values(std::make_tuple(1, 0), std::make_tuple(5, 2), std::make_tuple(37, 0),
                                         std::make_tuple(37, 10), std::make_tuple(64, 0), std::make_tuple(100, 33)));

TEST(MatmulGraph, PanelsAreCutFromTheSlotSize) {
  // 2048^2 int32 is 16 MiB per matrix: with 8 MiB slots a panel of at most 1024 rows fits.
  const Target t{.slot_bytes = 8 << 20, .slots = 16, .tiles = 2};
  auto parts = matmul_parts({.n = 2048, .block = 0, .target = t});
  ASSERT_TRUE(parts.ok());
  EXPECT_GE(*parts * *parts, 8u * t.tiles);  // several blocks per tile
  auto g = matmul_graph({.n = 2048, .block = 0, .target = t});
  ASSERT_TRUE(g.ok());
  expect_compute_actors_fit(*g, t);
  // With 1 MiB slots, 2048-int32 rows allow panels of 128 rows: 16 panels per side.
  auto small = matmul_parts({.n = 2048, .block = 0, .target = {.slot_bytes = 1 << 20, .slots = 16, .tiles = 2}});
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, 16u);
}

// ---------------------------------------------------------------- FFT

class FftGraph : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(FftGraph, MatchesFftwUnderEveryConfiguration) {
  const auto [n, block] = GetParam();
  const Target target{.slot_bytes = 16 << 10, .slots = 16, .tiles = 3};
  auto p = make_problem("fft", n, block, target, 9);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  expect_compute_actors_fit(p->graph, target);
  const auto ref = fft_reference(from_bytes<cd>(p->inputs.at("X")));
  for (const RunConfig& c : all_configs()) {
    SCOPED_TRACE(describe(c));
    const auto y = from_bytes<cd>(run_problem(*p, target, c));
    ASSERT_EQ(y.size(), n);
    // Rounding makes both O(1e-16 log n) off the exact DFT; any index or twiddle mistake is O(1).
    EXPECT_LT(relative_error(y.data(), ref.data(), n), 1e-12);
  }
}

// 2^0 .. 2^11 points, odd and even exponents (N1 != N2 and N1 == N2),
// default cuts and explicit panel sizes; 16 KiB slots hold 1024 points.
INSTANTIATE_TEST_SUITE_P(Sizes, FftGraph,
                         ::testing::Values(std::make_tuple(1, 0), std::make_tuple(2, 0), std::make_tuple(8, 0),
                                         std::make_tuple(32, 8), std::make_tuple(128, 0), std::make_tuple(512, 64),
                                         std::make_tuple(1024, 0), std::make_tuple(2048, 256)));

TEST(FftGraph, DirectBaselineMatchesReference) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cd> x(4096);
  for (auto& v : x) v = {u(rng), u(rng)};
  FftDirect direct(x.size(), 2);
  std::copy(x.begin(), x.end(), direct.input());
  direct.run();
  const auto ref = fft_reference(x);
  EXPECT_LT(relative_error(direct.output(), ref.data(), x.size()), 1e-12);
  // The reference itself: a delta at 1 transforms to w^k.
  std::vector<cd> delta(8);
  delta[1] = 1;
  const auto d = fft_reference(delta);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_NEAR(std::abs(d[k] - std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(k) / 8)), 0, 1e-15) << k;
}

TEST(FftGraph, TwoToTheTwentyTwoFitsDefaultSlots) {
  const Target t{.slot_bytes = 8 << 20, .slots = 16, .tiles = 2};
  auto g = fft_graph({.n = std::size_t{1} << 22, .block = 0, .target = t});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  expect_compute_actors_fit(*g, t);
  // The strided copies at both ends run on the tiles: the driver only splits and collects.
  const Registry reg = app_registry();
  for (const ActorNode& a : g->actors()) {
    if (reg.find(a.function)->on_driver) {
      EXPECT_TRUE(a.function == "rf.split" || a.function == "rf.collect") << a.name;
    }
  }
}

// ---------------------------------------------------------------- bitonic

TEST(BitonicMerge, MergeRangeIsASliceOfTheMerge) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t na = rng() % 20, nb = rng() % 20;
    std::vector<std::int32_t> a(na), b(nb);
    for (auto& v : a) v = static_cast<std::int32_t>(rng() % 7) - 3;  // many ties
    for (auto& v : b) v = static_cast<std::int32_t>(rng() % 7) - 3;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<std::int32_t> all(na + nb);
    std::merge(a.begin(), a.end(), b.begin(), b.end(), all.begin());
    const std::size_t first = all.empty() ? 0 : rng() % (all.size() + 1);
    const std::size_t m = rng() % (all.size() - first + 1);
    std::vector<std::int32_t> out(m, 99);
    merge_range(a.data(), na, b.data(), nb, first, out.data(), m);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), all.begin() + static_cast<std::ptrdiff_t>(first)))
        << "na=" << na << " nb=" << nb << " first=" << first << " m=" << m;
  }
}

class BitonicGraph : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(BitonicGraph, SortsLikeStdSortUnderEveryConfiguration) {
  const auto [n, block] = GetParam();
  const Target target{.slot_bytes = 4 << 10, .slots = 16, .tiles = 3};
  auto p = make_problem("bitonic", n, block, target, 13);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  expect_compute_actors_fit(p->graph, target);
  for (bool ties : {false, true}) {
    SCOPED_TRACE(ties ? "values in 0..4" : "uniform int32");
    if (ties) {
      auto x = from_bytes<std::int32_t>(p->inputs.at("X"));
      for (auto& v : x) v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) % 5);
      p->inputs["X"] = to_bytes(x);
    }
    auto ref = from_bytes<std::int32_t>(p->inputs.at("X"));
    std::sort(ref.begin(), ref.end());
    for (const RunConfig& c : all_configs()) {
      SCOPED_TRACE(describe(c));
      EXPECT_EQ(from_bytes<std::int32_t>(run_problem(*p, target, c)), ref);
    }
  }
}

// 4 KiB slots hold 1024 int32: 4096 elements need at least 4 blocks.
INSTANTIATE_TEST_SUITE_P(Sizes, BitonicGraph,
                         ::testing::Values(std::make_tuple(1, 0), std::make_tuple(2, 1), std::make_tuple(16, 0),
                                         std::make_tuple(64, 8), std::make_tuple(4096, 0), std::make_tuple(4096, 256)));

TEST(BitonicGraph, BlocksAreCutFromTheSlotSize) {
  const Target t{.slot_bytes = 8 << 20, .slots = 16, .tiles = 2};
  auto k = bitonic_blocks({.n = std::size_t{1} << 24, .block = 0, .target = t});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, 8u);  // 64 MiB of int32 in blocks of one 8 MiB slot
  auto g = bitonic_graph({.n = std::size_t{1} << 24, .block = 0, .target = t});
  ASSERT_TRUE(g.ok());
  expect_compute_actors_fit(*g, t);
  // 8 sorts, 8 * (1+2+3) merge-splits, 8 splits and one collect.
  EXPECT_EQ(g->actors().size(), 8u + 48u + 8u + 1u);
}

TEST(BitonicGraph, DirectBaselineSorts) {
  std::mt19937 rng(8);
  std::vector<std::int32_t> v(100000);
  for (auto& x : v) x = static_cast<std::int32_t>(rng());
  auto ref = v;
  std::sort(ref.begin(), ref.end());
  sort_direct(v.data(), v.size(), 2);
  EXPECT_EQ(v, ref);
}

// ---------------------------------------------------------------- rearrangement actors

TEST(Rearrange, ColsAndHcatAreInverse) {
  // A 5 x 7 matrix of 8-byte elements cut into column panels of widths 3, 4 and put back.
  const std::size_t rows = 5, cols = 7, elem = 8;
  Graph g("cols");
  std::mt19937 rng(6);
  Bytes m(rows * cols * elem);
  for (auto& b : m) b = static_cast<std::byte>(rng());
  const DataId in = g.input("M", m.size());
  const DataId left = g.inner("L", rows * 3 * elem), right = g.inner("R", rows * 4 * elem);
  const DataId back = g.output("B", m.size());
  g.actor("l", "mat.cols", {in}, left).args("cols=7,first=0,elem=8");
  g.actor("r", "mat.cols", {in}, right).args("cols=7,first=3,elem=8");
  const DataId right_out = g.output("Rout", rows * 4 * elem);
  g.actor("copy", "mat.hcat", {right}, right_out).args("rows=5,elem=8");
  g.actor("join", "mat.hcat", {left, right}, back).args("rows=5,elem=8");
  const DataId back_on_tile = g.output("Btile", m.size());
  g.actor("join_on_tile", "mat.hcat.tile", {left, right}, back_on_tile).args("rows=5,elem=8");
  Runtime rt({.tiles = 2});
  auto loaded = rt.load(g, app_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto out = loaded->execute({{"M", m}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("B"), m);
  EXPECT_EQ(out->at("Btile"), m);
  const Bytes& r = out->at("Rout");
  for (std::size_t i = 0; i < rows; ++i)
    EXPECT_EQ(0, std::memcmp(r.data() + i * 4 * elem, m.data() + (i * cols + 3) * elem, 4 * elem)) << "row " << i;
}

TEST(Rearrange, ShapeChecksSayWhatIsWrong) {
  const Registry reg = app_registry();
  auto check = [&](const char* fn, std::vector<std::size_t> in, std::size_t out, const char* args) {
    return reg.find(fn)->check(ActorShape{in, out, args});
  };
  EXPECT_EQ(check("mat.cols", {5 * 7 * 8}, 5 * 3 * 8, "cols=7,first=4,elem=8"), "");
  EXPECT_NE(check("mat.cols", {5 * 7 * 8}, 5 * 3 * 8, "cols=7,first=5,elem=8").find("beyond the input's 7 columns"),
            std::string::npos);
  EXPECT_NE(check("mat.cols", {100}, 8, "cols=7,first=0,elem=8").find("not whole rows"), std::string::npos);
  EXPECT_NE(check("mat.cols", {56}, 8, "first=0,elem=8").find("missing required arg 'cols'"), std::string::npos);
  EXPECT_NE(check("mat.hcat", {40, 41}, 81, "rows=5,elem=8").find("input 1"), std::string::npos);
  EXPECT_NE(check("mat.hcat", {40, 40}, 40, "rows=5,elem=8").find("inputs hold 80 bytes"), std::string::npos);
  EXPECT_NE(check("mm.block", {4 * 6, 4 * 6}, 4 * 6, "k=3").find("expected 2 x 2 int32"), std::string::npos);
  EXPECT_EQ(check("fft.cols", {16 * 8, 16 * 6}, 16 * 8, "len=4,first=0,logn=3"), "");  // tables of 4 + 2 points
  EXPECT_NE(check("fft.cols", {16 * 8, 16 * 5}, 16 * 8, "len=4,first=0,logn=3").find("twiddle"), std::string::npos);
  EXPECT_NE(check("fft.rows", {16 * 2, 16 * 2}, 16 * 8, "len=8").find("expected len=8"), std::string::npos);
  // The band form (cols=C): row bands of the whole len x C matrix, then the tables.
  EXPECT_EQ(check("fft.cols", {16 * 4, 16 * 4, 16 * 6}, 16 * 4, "len=2,first=2,logn=3,cols=4"), "");
  EXPECT_NE(check("fft.cols", {16 * 4, 16 * 3, 16 * 6}, 16 * 4, "len=2,first=2,logn=3,cols=4").find("row bands must be equal"),
            std::string::npos);
  EXPECT_NE(check("fft.cols", {16 * 4, 16 * 6}, 16 * 4, "len=2,first=2,logn=3,cols=4").find("not len=2 rows"), std::string::npos);
  EXPECT_NE(check("fft.cols", {16 * 4, 16 * 4, 16 * 6}, 16 * 4, "len=2,first=3,logn=3,cols=4").find("beyond the input's cols=4"),
            std::string::npos);
  EXPECT_NE(check("fft.cols", {16 * 4, 16 * 4, 16 * 6}, 16 * 4, "len=2,first=0,logn=3,cols=0").find("cols"), std::string::npos);
  EXPECT_NE(check("sort.low", {8, 8}, 20, "").find("at most the inputs' 16"), std::string::npos);
}

// ---------------------------------------------------------------- overhead shapes

TEST(OverheadShapes, RunUnderBothSchedulersAndMatchTbbNodeCounts) {
  Registry reg = app_registry();
  for (Shape s : kAllShapes) {
    for (std::size_t n : {1, 2, 7, 50}) {
      SCOPED_TRACE(::testing::Message() << to_string(s) << " n=" << n);
      const Graph g = overhead_graph(s, n);
      ASSERT_TRUE(g.validate_structure().ok()) << g.validate_structure().ToString();
      std::size_t expected = n;
      if (s == Shape::kFanout) expected = n + 2;
      if (s == Shape::kWavefront) expected = static_cast<std::size_t>(std::llround(std::sqrt(double(n)))) *
                                             static_cast<std::size_t>(std::llround(std::sqrt(double(n))));
      EXPECT_EQ(g.actors().size(), expected);
      TbbShape tbb(s, n);
      EXPECT_EQ(tbb.nodes(), expected);
      tbb.run();
      for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
        Runtime rt({.tiles = 2, .scheduler = sched});
        auto loaded = rt.load(g, reg);
        ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
        auto out = loaded->execute({{"X", {}}});
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(loaded->last_stats().actors_executed, expected);
        EXPECT_EQ(out->count("Y"), 1u);
      }
    }
  }
}

TEST(OverheadShapes, EdgesFollowTheShape) {
  // Tree: actor i reads the output of actor (i - 1) / 2.
  const Graph tree = overhead_graph(Shape::kTree, 6);
  for (ActorId a = 1; a < 6; ++a) {
    const DataId in = tree.actor(a).inputs.at(0);
    ASSERT_EQ(tree.data(in).producers.size(), 1u);
    EXPECT_EQ(tree.data(in).producers[0], (a - 1) / 2) << "actor " << a;
  }
  // Wavefront: inner actors read two nodes; the fan-in sink reads all n middles.
  const Graph wave = overhead_graph(Shape::kWavefront, 9);
  EXPECT_EQ(wave.actor(*wave.find_actor("a1_1")).inputs.size(), 2u);
  const Graph fan = overhead_graph(Shape::kFanout, 10);
  EXPECT_EQ(fan.actor(*fan.find_actor("sink")).inputs.size(), 10u);
}

// ---------------------------------------------------------------- errors

TEST(AppErrors, NameTheFlagAtFault) {
  const Target t;
  auto message = [&](const char* app, std::size_t n, std::size_t block) {
    auto p = make_problem(app, n, block, t, 1);
    EXPECT_FALSE(p.ok()) << app << " n=" << n << " block=" << block;
    return p.ok() ? std::string() : p.status().ToString();
  };
  EXPECT_NE(message("fft", 1000, 0).find("--n must be a power of two for fft"), std::string::npos);
  EXPECT_NE(message("bitonic", 3, 0).find("--n must be a power of two for bitonic"), std::string::npos);
  for (const char* app : {"matmul", "fft", "bitonic"}) EXPECT_NE(message(app, 0, 0).find("--n"), std::string::npos) << app;
  EXPECT_NE(message("sort", 16, 0).find("unknown app 'sort'"), std::string::npos);
  EXPECT_NE(message("bitonic", 1024, 3).find("--block 3"), std::string::npos);
  EXPECT_NE(message("fft", 1024, 8).find("--block 8"), std::string::npos);  // smaller than a 32-point row
  EXPECT_NE(message("matmul", 4096, 4096).find("--block 4096"), std::string::npos);  // 64 MiB panel, 8 MiB slot
  // A row actor needs all column panels in its tile: too many panels for 4 slots.
  auto p = fft_graph({.n = 1 << 12, .block = 64, .target = {.slot_bytes = 8 << 20, .slots = 4, .tiles = 2}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--slots"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace redflow::apps
