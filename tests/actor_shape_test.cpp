// A plugin author's mistakes end in clear errors, never in a silent crash:
// a declared shape (one line at registration) lets `graph` and `run` refuse a
// graph with a missing edge; an undeclared one fails the execution at the bad
// input port naming the actor, and the process goes on; a crash inside an actor names it.
#include "cli_helpers.hpp"
#include "redflow/redflow.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::run_cli;

// Two int32 inputs expected; the port=1 edge is missing.
std::string one_edge_graph(const std::string& function) {
  return "digraph g {\n  A [kind=input, bytes=16];\n  B [kind=input, bytes=16];\n  Y [kind=output, bytes=16];\n"
         "  sum [actor=\"" + function + "\"];\n  A -> sum [port=0];\n  sum -> Y;\n}\n";
}

TEST_F(CliTest, DeclaredArityRefusesAGraphWithAMissingEdge) {
  write("g.dot", one_edge_graph("test.add2"));
  write_i32("a.bin", {1, 2, 3, 4});
  auto g = run_cli("graph " + path("g.dot") + " --lib " + REDFLOW_TEST_PLUGIN);
  EXPECT_EQ(g.exit_code, 1) << g.output;
  EXPECT_NE(g.output.find("actor 'sum' (function 'test.add2'): expects 2 input(s)"), std::string::npos) << g.output;
  auto r = run_cli("run " + path("g.dot") + " --lib " + REDFLOW_TEST_PLUGIN + " --input A=" + path("a.bin") + " --input B=" + path("a.bin"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("expects 2 input(s)"), std::string::npos) << r.output;
}

TEST_F(CliTest, UndeclaredArityFailsTheRunAtTheBadPortNamingTheActor) {
  write("g.dot", one_edge_graph("test.add2_unchecked"));
  write_i32("a.bin", {1, 2, 3, 4});
  auto r = run_cli("run " + path("g.dot") + " --lib " + REDFLOW_TEST_PLUGIN + " --tiles 1 --input A=" + path("a.bin") + " --input B=" +
                   path("a.bin") + " --output Y=" + path("y.bin"));
  EXPECT_EQ(r.exit_code, 1) << r.output;  // a failed run, not SIGABRT's 134
  EXPECT_NE(r.output.find("user code error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'sum'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reads input port 1 but has 1 input(s)"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.bin")));
}

// In a program that embeds redflow, the bad graph costs its own execution
// only: the error names the actor, and the process runs the next one.
TEST(ActorShape, AnUndeclaredPortFailsTheExecutionNotTheProcess) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  reg.add("host.add2", [](redflow::ActorContext& ctx) {
    auto a = ctx.input<const std::int32_t>(0);
    auto b = ctx.input<const std::int32_t>(1);
    auto y = ctx.output<std::int32_t>();
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = a[i] + b[i];
  });
  auto build = [](int edges) {
    redflow::Graph g;
    auto a = g.input("A", 16);
    auto b = g.input("B", 16);
    auto y = g.output("Y", 16);
    if (edges == 2)
      g.actor("sum", "host.add2", {a, b}, y);
    else
      g.actor("sum", "host.add2", {a}, y);
    return g;
  };
  const std::vector<std::int32_t> xs = {1, 2, 3, 4};
  const redflow::Inputs inputs = {{"A", redflow::as_bytes_of(xs)}, {"B", redflow::as_bytes_of(xs)}};
  redflow::Runtime rt({.tiles = 2});
  for (auto scheduler : {redflow::Scheduler::kHeft, redflow::Scheduler::kSteal}) {
    redflow::Runtime each({.tiles = 2, .scheduler = scheduler});
    auto bad = each.load(build(1), reg);
    ASSERT_TRUE(bad.ok()) << bad.status().ToString();
    auto out = bad->execute(inputs);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), redflow::Status::Code::kActorFailed) << out.status().ToString();
    EXPECT_NE(out.status().message().find("'sum'"), std::string::npos) << out.status().ToString();
    EXPECT_NE(out.status().message().find("reads input port 1 but has 1 input(s)"), std::string::npos) << out.status().ToString();
  }
  auto good = rt.load(build(2), reg);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  auto out = good->execute(inputs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<std::int32_t> y(4);
  ASSERT_EQ(out->at("Y").size(), 16u);
  std::memcpy(y.data(), out->at("Y").data(), 16);
  EXPECT_EQ(y, (std::vector<std::int32_t>{2, 4, 6, 8}));
}

// The same read inside a parallel loop's chunk, on the tile's helper threads
// (the second half of the range) or on the actor's own (the first quarter),
// fails that execution with the same named error; the tile's loop serves the
// next execution as before.
TEST(ActorShape, AnUndeclaredPortReadInAParallelChunkFailsTheExecution) {
  constexpr std::size_t kInts = 64;
  redflow::Registry reg = redflow::Registry::with_builtins();
  auto cores = std::make_shared<std::atomic<unsigned>>(0);  // the width the actor ran with: the chunks are on several threads
  for (const char* where : {"helper", "caller"}) {
    const bool helper = std::string_view(where) == "helper";
    reg.add(std::string("host.par_add2_") + where, [helper, cores](redflow::ActorContext& ctx) {
      cores->store(ctx.cores());
      auto y = ctx.output<std::int32_t>();
      ctx.parallel_for(0, y.size(), [&](std::size_t i) {
        const bool second = helper ? i >= y.size() / 2 : i < y.size() / 4;
        y[i] = ctx.input<const std::int32_t>(0)[i] + (second ? ctx.input<const std::int32_t>(1)[i] : 0);
      });
    });
  }
  auto build = [](const std::string& function, int edges) {
    redflow::Graph g;
    auto a = g.input("A", kInts * 4);
    auto b = g.input("B", kInts * 4);
    auto y = g.output("Y", kInts * 4);
    if (edges == 2)
      g.actor("psum", function, {a, b}, y);
    else
      g.actor("psum", function, {a}, y);
    return g;
  };
  std::vector<std::int32_t> xs(kInts);
  for (std::size_t i = 0; i < kInts; ++i) xs[i] = static_cast<std::int32_t>(i);
  const redflow::Inputs inputs = {{"A", redflow::as_bytes_of(xs)}, {"B", redflow::as_bytes_of(xs)}};
  for (const char* where : {"helper", "caller"}) {
    SCOPED_TRACE(where);
    const std::string function = std::string("host.par_add2_") + where;
    redflow::Runtime rt({.tiles = 1, .cores_per_tile = 4});
    auto bad = rt.load(build(function, 1), reg);
    ASSERT_TRUE(bad.ok()) << bad.status().ToString();
    for (int run = 0; run < 3; ++run) {
      auto out = bad->execute(inputs);
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), redflow::Status::Code::kActorFailed) << out.status().ToString();
      EXPECT_NE(out.status().message().find("'psum'"), std::string::npos) << out.status().ToString();
      EXPECT_NE(out.status().message().find("reads input port 1 but has 1 input(s)"), std::string::npos) << out.status().ToString();
      EXPECT_EQ(cores->load(), 4u);
    }
    auto good = rt.load(build(function, 2), reg);
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    for (int run = 0; run < 3; ++run) {
      auto out = good->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<std::int32_t> y(kInts), want(kInts);
      ASSERT_EQ(out->at("Y").size(), kInts * 4);
      std::memcpy(y.data(), out->at("Y").data(), kInts * 4);
      for (std::size_t i = 0; i < kInts; ++i) {
        const bool second = std::string_view(where) == "helper" ? i >= kInts / 2 : i < kInts / 4;
        want[i] = xs[i] + (second ? xs[i] : 0);
      }
      EXPECT_EQ(y, want);
    }
  }
}

TEST_F(CliTest, ACrashInsideAnActorNamesTheActor) {
  write("g.dot", "digraph c {\n  Y [kind=output, bytes=64];\n  boom [actor=\"test.crash\"];\n  boom -> Y;\n}\n");
  auto r = run_cli("run " + path("g.dot") + " --lib " + REDFLOW_TEST_PLUGIN + " --tiles 1 --cores-per-tile 2");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SIGSEGV"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("inside actor 'boom'"), std::string::npos) << r.output;
}

// In a chain one context moves from actor to actor (the thread's current
// actor is set once for the whole chain): a crash in its middle still names
// the actor that crashed, not the chain's first one.
TEST_F(CliTest, ACrashInTheMiddleOfAChainNamesTheActor) {
  write("chain.dot", R"(digraph c {
    X [kind=input, bytes=4]; d0 [kind=inner, bytes=4]; d1 [kind=inner, bytes=4]; d2 [kind=inner, bytes=4];
    Y [kind=output, bytes=4];
    first [actor="test.negate"]; second [actor="test.negate"]; boom [actor="test.crash"]; last [actor="test.negate"];
    X -> first [port=0]; first -> d0; d0 -> second [port=0]; second -> d1; d1 -> boom [port=0]; boom -> d2;
    d2 -> last [port=0]; last -> Y; })");
  write_i32("x.bin", {1});
  for (const char* scheduler : {"heft", "steal"}) {
    auto r = run_cli("run " + path("chain.dot") + " --input X=" + path("x.bin") + " --lib " + REDFLOW_TEST_PLUGIN +
                     " --tiles 1 --cores-per-tile 1 --scheduler " + scheduler);
    EXPECT_NE(r.exit_code, 0) << scheduler << ": " << r.output;
    EXPECT_NE(r.output.find("SIGSEGV"), std::string::npos) << scheduler << ": " << r.output;
    EXPECT_NE(r.output.find("inside actor 'boom'"), std::string::npos) << scheduler << ": " << r.output;
  }
}

TEST(ActorShape, ElementwiseChecksArityAndSizes) {
  auto check = redflow::shape::elementwise<std::int32_t>(2);
  std::vector<std::size_t> two = {16, 16}, one = {16}, uneven = {16, 12};
  EXPECT_EQ(check({two, 16, ""}), "");
  EXPECT_NE(check({one, 16, ""}).find("expects 2 input(s)"), std::string::npos);
  EXPECT_NE(check({uneven, 16, ""}).find("input 1 has 12 bytes"), std::string::npos);
  EXPECT_NE(check({two, 32, ""}).find("input 0 has 16 bytes, the output 32"), std::string::npos);
  std::vector<std::size_t> odd = {6, 6};
  EXPECT_NE(check({odd, 6, ""}).find("whole number"), std::string::npos);
  EXPECT_EQ(redflow::shape::inputs(0)({{}, 8, ""}), "");
}

}  // namespace
