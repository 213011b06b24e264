// Back-pressure in one process (RunOptions::stream_buffer_bytes,
// docs/streams.md "Back-pressure"): a fast producer waits for a slow
// consumer, so the stream between them holds about its bound, not the whole
// run; a program that needs more than the bound in one stream to go on
// still runs (Parks' rule grows that stream); a real deadlock is still named.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "redflow/stream.hpp"

namespace redflow::stream {
namespace {

struct BackPressureMode {
  Mode mode;
  unsigned threads;
};
const BackPressureMode kBackPressureModes[] = {{Mode::kThreadPerOperator, 0}, {Mode::kPool, 1}, {Mode::kPool, 2}};

std::atomic<std::size_t> g_most_waiting{0};

// slow: reads up to 256 tokens a firing, sleeps 1 ms every 4096 tokens,
// and notes the most tokens it ever found waiting on its input.
class SlowReader final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    const std::size_t waiting = ctx.available(0);
    std::size_t seen = g_most_waiting.load();
    while (waiting > seen && !g_most_waiting.compare_exchange_weak(seen, waiting)) {
    }
    std::uint64_t buf[256];
    const std::size_t n = ctx.read_many(0, buf, 256);
    for (std::size_t i = 0; i < n; ++i) sum_ += buf[i];
    read_ += n;
    if (read_ / 4096 != (read_ - n) / 4096) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Fired::kMore;
  }
  void finish(FiringContext& ctx) override { ctx.write(0, &sum_); }

 private:
  std::uint64_t sum_ = 0, read_ = 0;
};

// lopsided n=N: N tokens 0..N-1 on output 0, in firings of 1000, and only
// then the same N on output 1. A reader that needs a token of each (add)
// must find all N of output 0 waiting before output 1's first comes.
class Lopsided final : public Operator {
 public:
  explicit Lopsided(std::uint64_t n) : n_(n) {}
  Fired fire(FiringContext& ctx) override {
    const std::size_t port = next_ < n_ ? 0 : 1;
    const std::uint64_t base = port == 0 ? 0 : n_;
    for (int k = 0; k < 1000 && next_ < 2 * n_; ++k, ++next_) {
      const std::uint64_t v = next_ - base;
      ctx.write(port, &v);
    }
    return next_ == 2 * n_ ? Fired::kDone : Fired::kMore;
  }

 private:
  std::uint64_t n_, next_ = 0;
};

OperatorRegistry backpressure_registry() {
  auto reg = OperatorRegistry::with_builtins();
  reg.add("slow", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{1, 1, {8}, {8}}; },
                                  [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<SlowReader>(); }});
  reg.add("lopsided", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{0, 2, {}, {8, 8}}; },
                                      [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Lopsided>(std::stoull(a.at("n"))); }});
  return reg;
}

class StreamBackPressure : public ::testing::TestWithParam<BackPressureMode> {
 protected:
  RunOptions options(std::size_t buffer_bytes) const {
    RunOptions o{GetParam().mode, GetParam().threads};
    o.stream_buffer_bytes = buffer_bytes;
    return o;
  }
};

TEST_P(StreamBackPressure, AFastProducerWaitsForASlowConsumer) {
  const auto reg = backpressure_registry();
  const std::uint64_t n = 400000;
  auto p = Program::from_dot(R"(digraph b {
      src [operator="counter", args="n=400000"]; slow [operator="slow"]; out [operator="collect"];
      src -> slow [token=8]; slow -> out [token=8]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::uint64_t sum = n * (n - 1) / 2;
  // 64 KiB: 8,192 tokens; the counter writes 4,096 a firing, so the
  // stream holds at most 8,191 + 4,096 when the consumer looks.
  g_most_waiting = 0;
  auto bounded = run(*p, options(64 << 10));
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  std::uint64_t got = 0;
  ASSERT_EQ(bounded->outputs["out"].size(), 8u);
  std::memcpy(&got, bounded->outputs["out"].data(), 8);
  EXPECT_EQ(got, sum);
  EXPECT_LE(g_most_waiting.load(), 8191u + 4096u);
  EXPECT_GT(g_most_waiting.load(), 0u);
  // Unbounded, the same producer runs ahead by far more: the bound is what held it.
  g_most_waiting = 0;
  auto unbounded = run(*p, options(0));
  ASSERT_TRUE(unbounded.ok()) << unbounded.status().ToString();
  EXPECT_EQ(unbounded->outputs["out"], bounded->outputs["out"]);
  EXPECT_GT(g_most_waiting.load(), 4u * (8191u + 4096u));
}

// The lopsided source into an add: output 0 must hold all N before output
// 1's first token comes, and output 1 then trickles in while the add reads.
Result<RunResult> run_lopsided(std::uint64_t n, const RunOptions& options) {
  static const auto reg = backpressure_registry();
  auto p = Program::from_dot("digraph l { src [operator=\"lopsided\", args=\"n=" + std::to_string(n) +
                                 "\"]; add [operator=\"add\"]; out [operator=\"collect\"];"
                                 " src -> add [token=8, from_port=0, to_port=0]; src -> add [token=8, from_port=1, to_port=1]; add -> out [token=8]; }",
                             reg);
  if (!p.ok()) return p.status();
  return run(*p, options);
}
void expect_doubles(const Result<RunResult>& r, std::uint64_t n) {
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Bytes& out = r->outputs.at("out");
  ASSERT_EQ(out.size(), n * 8);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, out.data() + i * 8, 8);
    ASSERT_EQ(v, 2 * i) << "token " << i;
  }
}

TEST_P(StreamBackPressure, AStreamThatMustHoldMoreThanItsBoundGrows) {
  // 8 KiB: 1,024 tokens, a hundredth of what output 0 must hold.
  expect_doubles(run_lopsided(100000, options(8 << 10)), 100000);
}

// An operator reads every token available() counted: the add reads as many
// from its second input as it read from its first, after checking both.
// (The queue once handed back fewer than it had counted, from a stale view
// of the producer's count, and the add summed a leftover batch.)
TEST_P(StreamBackPressure, AReaderTakesEveryTokenAvailableCounted) {
  for (int round = 0; round < 5; ++round) expect_doubles(run_lopsided(100000, options(0)), 100000);
}

// counter -> dup -> concat: the concat reads the dup's first stream to its
// end before the second, so the second must hold all N tokens, a hundred
// times its bound, while the dup writes both in step.
TEST_P(StreamBackPressure, AConcatOfOneSourceTwiceRunsWithStreamsFarBelowWhatItNeeds) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph c {
      src [operator="counter", args="n=100000"]; d [operator="dup"]; cat [operator="concat"]; out [operator="collect"];
      src -> d [token=8]; d -> cat [token=8, from_port=0, to_port=0]; d -> cat [token=8, from_port=1, to_port=1];
      cat -> out [token=8]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const std::size_t bound : {std::size_t{8} << 10, std::size_t{0}}) {
    auto r = run(*p, options(bound));
    ASSERT_TRUE(r.ok()) << "bound " << bound << ": " << r.status().ToString();
    const Bytes& out = r->outputs.at("out");
    ASSERT_EQ(out.size(), 2 * 100000 * 8) << "bound " << bound;
    for (std::uint64_t i = 0; i < 2 * 100000; ++i) {
      std::uint64_t v = 0;
      std::memcpy(&v, out.data() + i * 8, 8);
      ASSERT_EQ(v, i % 100000) << "bound " << bound << ", token " << i;
    }
  }
}

TEST_P(StreamBackPressure, ACycleWithoutInitialTokensIsStillADeadlock) {
  const auto reg = backpressure_registry();
  auto p = Program::from_dot(R"(digraph f {
      in [operator="counter", args="n=100000"]; add [operator="add"]; d [operator="dup"]; out [operator="collect"];
      in -> add [token=8, to_port=0]; d -> add [token=8, to_port=1, from_port=1]; add -> d [token=8]; d -> out [token=8, from_port=0]; })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The add never fires: Parks' rule grows the counter's stream until the
  // counter has written all it has, then nothing can fire: a named deadlock.
  auto r = run(*p, options(8 << 10));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlocked"), std::string::npos) << r.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Modes, StreamBackPressure, ::testing::ValuesIn(kBackPressureModes), [](const auto& info) {
  return std::string(info.param.mode == Mode::kPool ? "pool" : "threads") + std::to_string(info.param.threads);
});

}  // namespace
}  // namespace redflow::stream
