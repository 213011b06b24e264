// Stream programs in one process (include/redflow/stream.hpp): results equal a
// sequential computation in both local modes and for several pool sizes;
// cycles work; end of stream ends every operator; invalid programs, a
// deadlocked cycle and a throwing operator are named errors; the profile
// counts tokens; placement reads the profile back.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <stdexcept>

#include "redflow/stream.hpp"
#include "stream/profile.hpp"

namespace redflow::stream {
namespace {

std::vector<std::uint64_t> tokens_of(const Bytes& bytes) {
  std::vector<std::uint64_t> v(bytes.size() / 8);
  std::memcpy(v.data(), bytes.data(), v.size() * 8);
  return v;
}

struct ModeCase {
  Mode mode;
  unsigned threads;
};
const ModeCase kModes[] = {{Mode::kThreadPerOperator, 0}, {Mode::kPool, 1}, {Mode::kPool, 2}, {Mode::kPool, 4}};

class StreamModes : public ::testing::TestWithParam<ModeCase> {
 protected:
  RunOptions options() const { return RunOptions{GetParam().mode, GetParam().threads}; }
};

// a = 0..n-1, b = 0,3,6..; out = (a + b) * 5, then the sum at end of stream.
TEST_P(StreamModes, ADiamondEqualsTheSequentialComputation) {
  auto reg = OperatorRegistry::with_builtins();
  const std::uint64_t n = 100000;
  auto p = Program::from_dot(R"(digraph d {
      a [operator="counter", args="n=100000"]; b [operator="counter", args="n=100000 step=3"];
      add [operator="add"]; x5 [operator="scale", args="k=5"]; d [operator="dup", args="outputs=2"];
      all [operator="collect"]; s [operator="sum"]; total [operator="collect"];
      a -> add [token=8, to_port=0]; b -> add [token=8, to_port=1]; add -> x5 [token=8]; x5 -> d [token=8];
      d -> all [token=8, from_port=0]; d -> s [token=8, from_port=1]; s -> total [token=8]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = run(*p, options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto all = tokens_of(r->outputs["all"]);
  ASSERT_EQ(all.size(), n);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(all[i], (i + 3 * i) * 5) << "token " << i;
    sum += all[i];
  }
  EXPECT_EQ(tokens_of(r->outputs["total"]), std::vector<std::uint64_t>{sum});
  for (const auto& s : r->streams) EXPECT_EQ(s.tokens, s.from == "s" ? 1u : n) << s.from << " -> " << s.to;
  for (const auto& o : r->operators) EXPECT_GT(o.firings, 0u) << o.name << " never fired";
}

TEST_P(StreamModes, ACycleComputesRunningSumsAndEndsAtEndOfStream) {
  auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph f {
      in [operator="counter", args="n=5000 start=1"]; add [operator="add"]; d [operator="dup"];
      back [operator="delay", args="initial=0 count=1"]; sums [operator="collect"];
      in -> add [token=8, to_port=0]; back -> add [token=8, to_port=1]; add -> d [token=8];
      d -> sums [token=8, from_port=0]; d -> back [token=8, from_port=1]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = run(*p, options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto sums = tokens_of(r->outputs["sums"]);
  ASSERT_EQ(sums.size(), 5000u);
  for (std::uint64_t i = 0; i < sums.size(); ++i) ASSERT_EQ(sums[i], (i + 1) * (i + 2) / 2) << "sum " << i;
}

TEST_P(StreamModes, ACycleWithoutInitialTokensIsADeadlockNamedNotAHang) {
  auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph f {
      in [operator="counter", args="n=10"]; add [operator="add"]; d [operator="dup"];
      back [operator="delay", args="count=0"]; sums [operator="collect"];
      in -> add [token=8, to_port=0]; back -> add [token=8, to_port=1]; add -> d [token=8];
      d -> sums [token=8, from_port=0]; d -> back [token=8, from_port=1]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = run(*p, options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlocked"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'add'"), std::string::npos) << r.status().message();
}

// A user's operator, written against the C++ API: throws on its 100th token.
class Fragile final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    std::uint64_t v;
    while (ctx.read(0, v)) {
      if (++seen_ == 100) throw std::runtime_error("token 100 is too many");
      ctx.write_value(0, v);
    }
    return Fired::kMore;
  }

 private:
  int seen_ = 0;
};

TEST_P(StreamModes, AThrowingOperatorEndsTheRunWithAnErrorNamingIt) {
  auto reg = OperatorRegistry::with_builtins();
  reg.add("fragile", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{1, 1, {8}, {8}}; },
                                     [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Fragile>(); }});
  Program p;
  ASSERT_TRUE(p.add(reg, "src", "counter", {{"n", "1000"}}).ok());
  ASSERT_TRUE(p.add(reg, "weak", "fragile").ok());
  ASSERT_TRUE(p.add(reg, "out", "collect").ok());
  ASSERT_TRUE(p.connect("src", 0, "weak", 0, 8).ok());
  ASSERT_TRUE(p.connect("weak", 0, "out", 0, 8).ok());
  auto r = run(p, options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'weak' threw: token 100 is too many"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().ToString().find("user code error: stream operator 'weak' threw"), std::string::npos) << "an operator is not an actor\n"
                                                                                                           << r.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Local, StreamModes, ::testing::ValuesIn(kModes), [](const auto& info) {
  return info.param.mode == Mode::kThreadPerOperator ? std::string("ThreadPerOperator") : "Pool" + std::to_string(info.param.threads);
});

TEST(StreamProgram, InvalidProgramsAreNamedErrors) {
  auto reg = OperatorRegistry::with_builtins();
  auto expect_error = [&](const char* dot, const char* words) {
    auto p = Program::from_dot(dot, reg);
    ASSERT_FALSE(p.ok()) << dot;
    EXPECT_NE(p.status().message().find(words), std::string::npos) << p.status().message();
  };
  expect_error(R"(digraph g { a [operator="counter"]; b [operator="add"]; a -> b [token=8]; })", "input port 1 of 'b' (add) has 0 streams");
  expect_error(R"(digraph g { a [operator="counter"]; b [operator="collect"]; a -> b [token=4]; })",
               "carries 4-byte tokens, but output port 0 of 'a' (counter) takes 8-byte tokens");
  expect_error(R"(digraph g { a [operator="teleport"]; })", "names 'teleport', which is not registered");
  expect_error(R"(digraph g { a [operator="countre"]; })", "names 'countre', which is not registered (did you mean 'counter'?)");
  expect_error(R"(digraph g { a [operator="counter", args="n=many"]; })", "arg n=many is not a non-negative integer");
  expect_error(R"(digraph g { a [operator="counter"]; b [operator="collect"]; a -> b; })", "no token=BYTES");
  expect_error(R"(digraph g { a [operator="counter"]; b [operator="collect"]; a -> b [token=8, to_port=3]; })", "no input port 3");
  expect_error(R"(digraph g { a [operator="counter"]; c [operator="collect"]; d [operator="collect"]; a -> c [token=8]; a -> d [token=8]; })",
               "output port 0 of 'a' (counter) has 2 streams");
  expect_error(R"(digraph g { a [label="x"]; })", "no operator=NAME");
  expect_error("digraph g { a [operator=\"counter\" ", "cannot parse DOT");
  expect_error(R"(graph g { a [operator="counter"]; })", "a stream program is a digraph");
}

TEST(StreamProgram, TheProfileWeighsThePlacement) {
  auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph d {
      a [operator="counter", args="n=50000"]; d [operator="dup"]; s [operator="sum"]; t [operator="collect"]; all [operator="collect"];
      a -> d [token=8]; d -> all [token=8, from_port=0]; d -> s [token=8, from_port=1]; s -> t [token=8]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = run(*p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The tokens each stream carried are the run's; the busy times measured
  // are the machine's (under two sanitizer stages at once, one operator's
  // time dwarfed the others' and the balanced placement put all five on one
  // node). Equal busy times leave the tokens to weigh the placement.
  for (auto& o : r->operators) o.busy_s = 1e-3;
  PlacementGraph g = placement_graph(*p);
  ASSERT_TRUE(annotate(g, *p, profile_json(*r), "run").ok());
  ASSERT_EQ(g.busy.size(), 5u);
  double heavy = 0, light = 1e18;
  for (const auto& s : g.streams) {
    heavy = std::max(heavy, s.tokens);
    light = std::min(light, s.tokens);
  }
  EXPECT_EQ(heavy, 50000);
  EXPECT_EQ(light, 1);  // s -> t: the one sum
  // The weighted placement's cut is counted in the profile's tokens.
  auto placed = place(g, 2, PlaceAlgo::kSmartMin);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  double cut = 0;
  for (const auto& s : g.streams)
    if (placed->node_of[s.from] != placed->node_of[s.to]) cut += s.tokens;
  EXPECT_EQ(placed->edge_cut, cut);
  EXPECT_GT(cut, 0) << "2 nodes, 5 operators, and nothing cut";
  EXPECT_FALSE(annotate(g, *p, "{\"operators\": []}", "bad").ok());
  auto missing = annotate(g, *p, R"({"operators": [{"name": "zz", "busy_s": 1}], "streams": []})", "p.json");
  EXPECT_NE(missing.message().find("operator 'zz' is not in the program"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace redflow::stream
