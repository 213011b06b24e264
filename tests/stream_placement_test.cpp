// Placement is decided once at load time and never revisited, so a wrong or
// unstable placement silently costs every run: these tests pin down the
// paper's rules (cycles co-placed, heavy streams kept or split) and that bad
// graphs are refused rather than crashing the loader.
#include "stream/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <thread>

namespace redflow::stream {
namespace {

constexpr PlaceAlgo kAll[] = {PlaceAlgo::kNaive, PlaceAlgo::kTopological, PlaceAlgo::kSmart, PlaceAlgo::kSmartMin, PlaceAlgo::kSmartMax};

PlacementGraph with_operators(unsigned n) {
  PlacementGraph g;
  for (unsigned i = 0; i < n; i++) g.operators.push_back("op" + std::to_string(i));
  return g;
}

PlacementGraph chain(unsigned n) {
  PlacementGraph g = with_operators(n);
  for (unsigned i = 0; i + 1 < n; i++) g.streams.push_back({i, i + 1, 1});
  return g;
}

PlacementGraph ring(unsigned n) {
  PlacementGraph g = chain(n);
  g.streams.push_back({n - 1, 0, 1});
  return g;
}

PlacementGraph fan_out(unsigned leaves) {
  PlacementGraph g = with_operators(leaves + 1);
  for (unsigned i = 1; i <= leaves; i++) g.streams.push_back({0, i, 1});
  return g;
}

PlacementGraph random_graph(unsigned n, unsigned streams, std::uint64_t seed) {
  PlacementGraph g = with_operators(n);
  std::mt19937_64 rng(seed);
  for (unsigned i = 0; i < n; i++) g.busy.push_back(1 + static_cast<double>(rng() % 100));
  for (unsigned i = 0; i < streams; i++)
    g.streams.push_back({static_cast<unsigned>(rng() % n), static_cast<unsigned>(rng() % n), static_cast<double>(1 + rng() % 50)});
  return g;
}

void expect_valid(const PlacementGraph& g, unsigned nodes, PlaceAlgo algo, const Placement& p) {
  SCOPED_TRACE(std::string(place_algo_name(algo)) + " on " + std::to_string(nodes) + " nodes");
  ASSERT_EQ(p.node_of.size(), g.operators.size());
  for (unsigned node : p.node_of) EXPECT_LT(node, nodes);
  // The cut and balance counted here from their definitions, not with
  // score(), so a wrong score() does not agree with itself.
  double cut = 0;
  for (const auto& s : g.streams) cut += p.node_of[s.from] != p.node_of[s.to] ? s.tokens : 0;
  std::vector<double> load(nodes);
  for (std::size_t v = 0; v < p.node_of.size(); ++v) load[p.node_of[v]] += g.busy.empty() ? 1.0 : g.busy[v];
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  EXPECT_DOUBLE_EQ(p.edge_cut, cut);
  EXPECT_DOUBLE_EQ(p.balance, total > 0 ? *std::max_element(load.begin(), load.end()) * nodes / total : 1.0);
  if (nodes == 1) {
    EXPECT_EQ(p.edge_cut, 0);
  }
  if (algo == PlaceAlgo::kNaive && g.operators.size() >= nodes) {
    EXPECT_EQ(std::set<unsigned>(p.node_of.begin(), p.node_of.end()).size(), nodes);
  }
}

TEST(StreamPlacement, EveryAlgorithmGivesAValidPlacement) {
  const std::pair<const char*, PlacementGraph> graphs[] = {
      {"chain", chain(8)}, {"ring", ring(7)}, {"fan-out", fan_out(6)}, {"random", random_graph(30, 70, 42)}, {"tiny", chain(3)}};
  for (const auto& [name, g] : graphs)
    for (PlaceAlgo algo : kAll)
      for (unsigned nodes = 1; nodes <= 5; nodes++) {
        SCOPED_TRACE(name);
        auto p = place(g, nodes, algo);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        expect_valid(g, nodes, algo, *p);
      }
}

TEST(StreamPlacement, AlgorithmsAreDeterministic) {
  const PlacementGraph g = random_graph(30, 70, 7);
  for (PlaceAlgo algo : kAll) {
    auto a = place(g, 3, algo, 99), b = place(g, 3, algo, 99);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->node_of, b->node_of) << place_algo_name(algo);
  }
}

TEST(StreamPlacement, TopologicalKeepsCyclesTogether) {
  // Two 3-operator loops joined by a chain: 9 operators, capacity 3 on 3 nodes.
  PlacementGraph g = with_operators(9);
  g.streams = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}, {5, 6}, {6, 7}, {7, 8}};
  auto p = place(g, 3, PlaceAlgo::kTopological);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->node_of[0], p->node_of[1]);
  EXPECT_EQ(p->node_of[0], p->node_of[2]);
  EXPECT_EQ(p->node_of[3], p->node_of[4]);
  EXPECT_EQ(p->node_of[3], p->node_of[5]);
  EXPECT_NE(p->node_of[0], p->node_of[3]);  // packing spreads the loops, capacity is 3
  EXPECT_DOUBLE_EQ(p->balance, 1.0);

  // A loop larger than a node's capacity still goes whole to one node.
  PlacementGraph big = ring(5);
  big.operators.push_back("lone");
  auto q = place(big, 3, PlaceAlgo::kTopological);
  ASSERT_TRUE(q.ok());
  for (unsigned v = 1; v < 5; v++) EXPECT_EQ(q->node_of[v], q->node_of[0]);
  EXPECT_NE(q->node_of[5], q->node_of[0]);
  EXPECT_EQ(q->edge_cut, 0);
}

TEST(StreamPlacement, SmartCutsOnlyTheBridgeBetweenTwoClusters) {
  PlacementGraph g = with_operators(12);
  for (unsigned base : {0u, 6u})
    for (unsigned i = 0; i < 6; i++)
      for (unsigned j = i + 1; j < 6; j++) g.streams.push_back({base + i, base + j, 1});
  g.streams.push_back({5, 6, 1});
  for (std::uint64_t seed : {1, 2, 3}) {
    auto p = place(g, 2, PlaceAlgo::kSmart, seed);
    ASSERT_TRUE(p.ok());
    EXPECT_DOUBLE_EQ(p->edge_cut, 1);
    EXPECT_NE(p->node_of[0], p->node_of[11]);
  }
}

TEST(StreamPlacement, SmartMinNeverCutsAHeavyStream) {
  PlacementGraph g = random_graph(30, 70, 5);
  g.streams.push_back({3, 17, 1e7});
  for (unsigned nodes = 2; nodes <= 4; nodes++)
    for (std::uint64_t seed : {1, 2, 3}) {
      auto p = place(g, nodes, PlaceAlgo::kSmartMin, seed);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->node_of[3], p->node_of[17]) << nodes << " nodes, seed " << seed;
      EXPECT_LT(p->edge_cut, 1e7);
    }
}

TEST(StreamPlacement, OnlyTheProfiledAlgorithmsSeeTokens) {
  // Two 4-operator cliques joined by one stream that carries nearly all tokens.
  PlacementGraph g = with_operators(8);
  for (unsigned base : {0u, 4u})
    for (unsigned i = 0; i < 4; i++)
      for (unsigned j = i + 1; j < 4; j++) g.streams.push_back({base + i, base + j, 1});
  g.streams.push_back({3, 4, 1e6});
  auto smart = place(g, 2, PlaceAlgo::kSmart), min = place(g, 2, PlaceAlgo::kSmartMin);
  ASSERT_TRUE(smart.ok() && min.ok());
  EXPECT_NE(smart->node_of[3], smart->node_of[4]);  // unit weights: the bridge is the cheapest cut
  EXPECT_EQ(min->node_of[3], min->node_of[4]);
  EXPECT_LT(min->edge_cut, 100);
}

TEST(StreamPlacement, SmartMaxCutsTheHeaviestStream) {
  PlacementGraph g = chain(8);
  g.busy.assign(8, 1);
  g.streams[1].tokens = 1000;  // op1 -> op2: a min-cut keeps it whole
  for (unsigned nodes = 2; nodes <= 4; nodes++)
    for (std::uint64_t seed : {1, 2, 3}) {
      auto p = place(g, nodes, PlaceAlgo::kSmartMax, seed);
      ASSERT_TRUE(p.ok());
      EXPECT_NE(p->node_of[1], p->node_of[2]) << nodes << " nodes, seed " << seed;
      // A chain is bipartite: on two nodes alternating operators cuts every stream.
      if (nodes == 2) {
        EXPECT_DOUBLE_EQ(p->edge_cut, 1006);
      }
      auto min = place(g, nodes, PlaceAlgo::kSmartMin, seed);
      ASSERT_TRUE(min.ok());
      EXPECT_GT(p->edge_cut, min->edge_cut);
    }
}

TEST(StreamPlacement, NaiveIsReproducibleAndSeeded) {
  const PlacementGraph g = random_graph(30, 70, 11);
  auto a = place(g, 4, PlaceAlgo::kNaive, 123), b = place(g, 4, PlaceAlgo::kNaive, 123);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->node_of, b->node_of);
  bool differs = false;
  for (std::uint64_t seed = 124; seed < 134 && !differs; seed++) differs = place(g, 4, PlaceAlgo::kNaive, seed)->node_of != a->node_of;
  EXPECT_TRUE(differs);
}

TEST(StreamPlacement, MoreNodesThanOperators) {
  const PlacementGraph g = ring(3);
  for (PlaceAlgo algo : kAll) {
    auto p = place(g, 6, algo);
    ASSERT_TRUE(p.ok()) << place_algo_name(algo) << ": " << p.status().ToString();
    expect_valid(g, 6, algo, *p);
  }
}

TEST(StreamPlacement, LargeGraphsStayValid) {
  // Past the dense max-cut limit Smart_max inverts only the existing streams.
  for (unsigned n : {1024u, 1500u}) {
    PlacementGraph g = ring(n);
    g.streams[7].tokens = 1e6;
    for (PlaceAlgo algo : kAll) {
      auto p = place(g, 4, algo);
      ASSERT_TRUE(p.ok()) << place_algo_name(algo) << ": " << p.status().ToString();
      expect_valid(g, 4, algo, *p);
    }
    EXPECT_NE(place(g, 4, PlaceAlgo::kSmartMax)->node_of[7], place(g, 4, PlaceAlgo::kSmartMax)->node_of[8]);
  }
}

TEST(StreamPlacement, BadInputIsAnErrorNamingTheProblem) {
  auto expect_error = [](const PlacementGraph& g, unsigned nodes, const std::string& words) {
    for (PlaceAlgo algo : kAll) {
      auto p = place(g, nodes, algo);
      ASSERT_FALSE(p.ok()) << place_algo_name(algo);
      EXPECT_NE(p.status().message().find(words), std::string::npos) << p.status().message();
    }
  };
  expect_error(chain(4), 0, "nodes is 0");
  expect_error(PlacementGraph{}, 2, "no operators");
  PlacementGraph dangling = chain(4);
  dangling.streams.push_back({2, 9, 1});
  expect_error(dangling, 2, "names operator 9");
  PlacementGraph short_busy = chain(4);
  short_busy.busy = {1, 2};
  expect_error(short_busy, 2, "busy has 2 entries");
  PlacementGraph bad_busy = chain(4);
  bad_busy.busy = {1, 2, -3, 4};
  expect_error(bad_busy, 2, "operator 'op2'");
  PlacementGraph bad_tokens = chain(4);
  bad_tokens.streams[1].tokens = std::numeric_limits<double>::quiet_NaN();
  expect_error(bad_tokens, 2, "'op1' -> 'op2'");

  auto algo = parse_place_algo("fancy");
  ASSERT_FALSE(algo.ok());
  EXPECT_NE(algo.status().message().find("'fancy'"), std::string::npos);
  EXPECT_NE(algo.status().message().find("smart_max"), std::string::npos);
  for (PlaceAlgo a : kAll) {
    auto parsed = parse_place_algo(place_algo_name(a));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
  }
}

TEST(StreamPlacement, ScoreComputesCutAndBalance) {
  PlacementGraph g = with_operators(4);
  g.busy = {1, 2, 3, 4};
  g.streams = {{0, 1, 5}, {1, 2, 7}, {2, 3, 2}, {3, 0, 1.5}, {2, 2, 9}};
  Placement p;
  p.node_of = {0, 0, 1, 1};
  score(g, 2, p);
  EXPECT_DOUBLE_EQ(p.edge_cut, 8.5);  // 1->2 and 3->0
  EXPECT_DOUBLE_EQ(p.balance, 1.4);   // loads 3 and 7, mean 5

  g.busy.clear();  // unit weights: loads 3, 1, 0 on three nodes
  p.node_of = {0, 0, 0, 1};
  score(g, 3, p);
  EXPECT_DOUBLE_EQ(p.edge_cut, 2 + 1.5);
  EXPECT_DOUBLE_EQ(p.balance, 2.25);

  p.node_of = {0, 0, 3, 1};  // node 3 does not exist
  score(g, 3, p);
  EXPECT_TRUE(std::isnan(p.edge_cut));
  EXPECT_TRUE(std::isnan(p.balance));
}

TEST(StreamPlacement, ConcurrentPlacementsAgree) {
  const PlacementGraph g = random_graph(30, 70, 3);
  // Each algorithm's placement, one at a time, then every algorithm in four threads at once.
  std::vector<std::vector<unsigned>> expected;
  for (PlaceAlgo algo : kAll) {
    auto p = place(g, 4, algo);
    ASSERT_TRUE(p.ok()) << place_algo_name(algo);
    expected.push_back(p->node_of);
  }
  std::vector<std::vector<std::vector<unsigned>>> got(4);
  std::vector<std::thread> threads;
  for (auto& out : got)
    threads.emplace_back([&g, &out] {
      for (PlaceAlgo algo : kAll) {
        auto p = place(g, 4, algo);
        out.push_back(p.ok() ? p->node_of : std::vector<unsigned>{});
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& out : got) {
    ASSERT_EQ(out.size(), expected.size());
    for (std::size_t a = 0; a < out.size(); ++a) EXPECT_EQ(out[a], expected[a]) << place_algo_name(kAll[a]);
  }
}

}  // namespace
}  // namespace redflow::stream
