// Checkpoints of a stream program (src/stream/checkpointer.hpp), in one
// process and without sockets: a Runner takes checkpoint after checkpoint
// while the program runs, and a fresh Runner restored from any of them
// finishes with the outputs of a run that was never interrupted, each token
// once. The programs: a pipeline with a final token (sum), a program with a
// cycle (a delay with initial tokens), the Compute Heavy Application (split
// and merge in turn) and the wavelet encoder (an operator that reads its
// inputs one after the other, and line buffers). Plus the state codec
// (StateWriter/StateReader) and the messages that carry checkpoints.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "redflow/stream.hpp"
#include "stream/apps/compute_heavy.hpp"
#include "stream/apps/wavelet.hpp"
#include "stream/runner.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {
namespace {

using Checkpoint = std::vector<std::optional<OperatorCheckpoint>>;

// Gathers each operator's part of each epoch (NodePart::on_checkpoint) and
// says when an epoch is whole: every operator reported it, or had finished.
class Parts {
 public:
  explicit Parts(std::size_t ops) : ops_(ops), finals_(ops) {}
  void add(std::size_t op, std::uint32_t epoch, OperatorCheckpoint c) {
    std::lock_guard lock(mutex_);
    if (epoch == kFinalEpoch) finals_[op] = std::move(c);
    else epochs_[epoch].emplace(op, std::move(c));
    cv_.notify_all();
  }
  // Waits until `epoch` is whole (its checkpoint) or `ended` holds (nothing).
  template <typename Ended>
  std::optional<Checkpoint> wait_whole(std::uint32_t epoch, Ended ended) {
    std::unique_lock lock(mutex_);
    for (;;) {
      Checkpoint c(ops_);
      bool whole = true;
      for (std::size_t op = 0; op < ops_ && whole; ++op) {
        auto e = epochs_.find(epoch);
        if (e != epochs_.end() && e->second.count(op)) c[op] = e->second.at(op);
        else if (finals_[op]) c[op] = finals_[op];
        else whole = false;
      }
      if (whole) return c;
      if (ended()) return std::nullopt;
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }

 private:
  std::size_t ops_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::uint32_t, std::map<std::size_t, OperatorCheckpoint>> epochs_;
  std::vector<std::optional<OperatorCheckpoint>> finals_;
};

struct Checkpointed {
  Result<RunResult> result = Status::Internal("not run");
  std::vector<std::pair<std::uint32_t, Checkpoint>> whole;  // each whole checkpoint, by epoch
};

// Runs `p` here, asking for the next checkpoint every `gap` once the last is whole.
Checkpointed run_checkpointed(const Program& p, const RunOptions& options, std::chrono::microseconds gap) {
  NodePart part;
  part.local.assign(p.instances().size(), 1);
  Parts parts(p.instances().size());
  part.on_checkpoint = [&](std::size_t op, std::uint32_t epoch, OperatorCheckpoint c) { parts.add(op, epoch, std::move(c)); };
  Runner runner(p, options, &part);
  Checkpointed out;
  if (Status s = runner.prepare(); !s.ok()) {
    out.result = s;
    return out;
  }
  std::atomic<bool> ended{false};
  std::thread t([&] {
    out.result = runner.run();
    ended = true;
  });
  for (std::uint32_t epoch = 1; !ended; ++epoch) {
    std::this_thread::sleep_for(gap);
    runner.request_checkpoint(epoch);
    auto c = parts.wait_whole(epoch, [&] { return ended.load(); });
    if (!c) break;
    out.whole.emplace_back(epoch, std::move(*c));
  }
  t.join();
  return out;
}

// A fresh run of `p` from checkpoint `c` (taken at `epoch`).
Result<RunResult> run_restored(const Program& p, const RunOptions& options, std::uint32_t epoch, const Checkpoint& c) {
  NodePart part;
  part.local.assign(p.instances().size(), 1);
  part.restore = c;
  part.epoch = epoch;
  Runner runner(p, options, &part);
  return runner.run();
}

// Takes checkpoints through a whole run, then restores from up to `samples`
// of them, spread over the run: each restored run's outputs are those of
// `expected`. Returns how many checkpoints were whole.
std::size_t expect_every_restore_finishes_alike(const Program& p, const ByteMap& expected, Mode mode, std::chrono::microseconds gap,
                                                std::size_t samples = 6) {
  RunOptions options{mode, 2};
  Checkpointed c = run_checkpointed(p, options, gap);
  EXPECT_TRUE(c.result.ok()) << c.result.status().ToString();
  if (!c.result.ok()) return 0;
  EXPECT_EQ(c.result->outputs, expected) << "checkpoints change a run's outputs";
  const std::size_t n = c.whole.size();
  for (std::size_t k = 0; k < std::min(samples, n); ++k) {
    const auto& [epoch, checkpoint] = c.whole[samples >= n ? k : k * (n - 1) / (samples - 1)];
    SCOPED_TRACE("restored from checkpoint " + std::to_string(epoch) + " of " + std::to_string(n));
    auto r = run_restored(p, options, epoch, checkpoint);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      EXPECT_TRUE(r->outputs == expected) << "the restored run's outputs differ from the uninterrupted run's";
    }
  }
  return n;
}

Program parse(const std::string& text, const OperatorRegistry& reg) {
  auto p = Program::from_dot(text, reg);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

// A pipeline with a fan-out, a zip and a sum (a final token at its end).
const char* kPipeline = R"(digraph p {
  src [operator="counter", args="n=3000000 start=1"];
  d [operator="dup", args="outputs=3"];
  s [operator="scale", args="k=3"];
  z [operator="add"];
  zipped [operator="collect"];
  tot [operator="sum"];
  total [operator="collect"];
  src -> d [token=8];
  d -> s [token=8, from_port=0]; s -> z [token=8, to_port=0];
  d -> z [token=8, from_port=1, to_port=1];
  z -> zipped [token=8];
  d -> tot [token=8, from_port=2]; tot -> total [token=8];
})";

// Running sums through a cycle: a token goes round through the delay.
const char* kCycle = R"(digraph c {
  src [operator="counter", args="n=TOKENS start=1"];
  a [operator="add"];
  back [operator="delay", args="initial=0 count=1"];
  da [operator="dup", args="outputs=2"];
  running [operator="collect"];
  src -> a [token=8, to_port=0];
  back -> a [token=8, to_port=1];
  a -> da [token=8];
  da -> back [token=8, from_port=0];
  da -> running [token=8, from_port=1];
})";

class StreamCheckpoint : public ::testing::TestWithParam<Mode> {};

TEST_P(StreamCheckpoint, APipelineRestoredFromAnyCheckpointFinishesAlike) {
  const auto reg = OperatorRegistry::with_builtins();
  const Program p = parse(kPipeline, reg);
  auto plain = run(p, RunOptions{GetParam(), 2});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_GE(expect_every_restore_finishes_alike(p, plain->outputs, GetParam(), std::chrono::microseconds(500)), 2u)
      << "too few checkpoints were whole to test restoring";
}

TEST_P(StreamCheckpoint, ACycleRestoredFromAnyCheckpointFinishesAlike) {
  const auto reg = OperatorRegistry::with_builtins();
  // A token round the cycle wakes two threads in the thread-per-operator mode: fewer there.
  const std::uint64_t tokens = GetParam() == Mode::kPool ? 200000 : 20000;
  std::string text = kCycle;
  text.replace(text.find("TOKENS"), 6, std::to_string(tokens));
  const Program p = parse(text, reg);
  auto plain = run(p, RunOptions{GetParam(), 2});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  // The running sums, as the cycle computes them.
  ByteMap expected;
  std::uint64_t sum = 0;
  for (std::uint64_t x = 1; x <= tokens; ++x) {
    sum += x;
    const auto* b = reinterpret_cast<const std::byte*>(&sum);
    expected["running"].insert(expected["running"].end(), b, b + 8);
  }
  ASSERT_EQ(plain->outputs, expected);
  EXPECT_GE(expect_every_restore_finishes_alike(p, expected, GetParam(), std::chrono::microseconds(500)), 2u);
}

TEST_P(StreamCheckpoint, TheComputeHeavyApplicationRestoredFromAnyCheckpointFinishesAlike) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = cha_program(reg, 20000, 20);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto plain = run(*p, RunOptions{GetParam(), 2});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_GE(expect_every_restore_finishes_alike(*p, plain->outputs, GetParam(), std::chrono::microseconds(500)), 2u);
}

TEST_P(StreamCheckpoint, TheWaveletEncoderRestoredFromAnyCheckpointFinishesAlike) {
  const std::string dir = ::testing::TempDir() + "/stream_checkpoint_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string pgm = dir + "/camera.pgm";
  const std::string cmd = std::string(REDFLOW_SOURCE_DIR) + "/scripts/camera-pgm " + pgm;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto image = read_pgm(pgm);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const auto reg = OperatorRegistry::with_builtins();
  auto p = wavelet_program(reg, pgm);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ByteMap expected;
  expected[p->instances()[p->instances().size() - 1].name] = wavelet_encode_sequential(*image);
  auto plain = run(*p, RunOptions{GetParam(), 2});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->outputs.size(), 1u);
  EXPECT_GE(expect_every_restore_finishes_alike(*p, plain->outputs, GetParam(), std::chrono::microseconds(200)), 2u);
  EXPECT_TRUE(plain->outputs.begin()->second == wavelet_encode_sequential(*image));
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Modes, StreamCheckpoint, ::testing::Values(Mode::kPool, Mode::kThreadPerOperator),
                         [](const auto& info) { return info.param == Mode::kPool ? std::string("pool") : std::string("threads"); });

// A checkpoint does not need the operators to stop: barriers are positions,
// and only an operator that reaches one waits for nothing but its own
// snapshot. Every operator of the program reports each whole epoch once.
TEST(StreamCheckpointParts, EveryOperatorReportsEachEpochOnceAndFinishedOnesTheirFinalState) {
  const auto reg = OperatorRegistry::with_builtins();
  const Program p = parse(kPipeline, reg);
  NodePart part;
  part.local.assign(p.instances().size(), 1);
  std::mutex m;
  std::map<std::pair<std::size_t, std::uint32_t>, int> reports;
  part.on_checkpoint = [&](std::size_t op, std::uint32_t epoch, OperatorCheckpoint c) {
    std::lock_guard lock(m);
    ++reports[{op, epoch}];
    if (epoch == kFinalEpoch) {
      EXPECT_TRUE(c.finished);
    }
    EXPECT_EQ(c.channels.size(), epoch == kFinalEpoch ? 0u : p.instances()[op].spec.inputs);
  };
  const RunOptions options{Mode::kPool, 2};  // the Runner keeps a reference: it outlives it
  Runner runner(p, options, &part);
  ASSERT_TRUE(runner.prepare().ok());
  runner.request_checkpoint(1);  // before it starts: the sources take it at their first firing
  auto r = runner.run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (std::size_t op = 0; op < p.instances().size(); ++op) {
    EXPECT_EQ((reports[{op, 1u}]), 1) << p.instances()[op].name << " reports epoch 1 once";
    EXPECT_EQ((reports[{op, kFinalEpoch}]), 1) << p.instances()[op].name << " reports its final state once";
  }
}

TEST(StreamState, ValuesVectorsAndTextComeBackInOrderAndShortStateIsRefused) {
  StateWriter w;
  w.value(std::uint64_t{42});
  w.values(std::vector<std::int16_t>{1, -2, 3});
  w.text("band");
  StateReader r(w.bytes);
  std::uint64_t v = 0;
  std::vector<std::int16_t> xs;
  std::string s;
  r.value(v);
  r.values(xs);
  r.text(s);
  EXPECT_EQ(v, 42u);
  EXPECT_EQ(xs, (std::vector<std::int16_t>{1, -2, 3}));
  EXPECT_EQ(s, "band");
  EXPECT_TRUE(r.done());
  std::vector<std::byte> cut(w.bytes.begin(), w.bytes.begin() + 12);
  StateReader short_state(cut);
  short_state.value(v);
  EXPECT_THROW(short_state.values(xs), std::runtime_error);
}

// Restoring state that does not fit the operator fails the run naming it.
TEST(StreamState, ARestoreFromStateThatDoesNotFitNamesTheOperator) {
  const auto reg = OperatorRegistry::with_builtins();
  const Program p = parse(R"(digraph g { src [operator="counter", args="n=10"]; out [operator="collect"]; src -> out [token=8]; })", reg);
  Checkpoint c(2);
  c[0] = OperatorCheckpoint{false, std::vector<std::byte>(3), {}};  // a counter's state is two u64s
  auto r = run_restored(p, RunOptions{Mode::kPool, 1}, 1, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'src'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("saved state"), std::string::npos) << r.status().ToString();
}

TEST(StreamCheckpointMessages, SetupWithACheckpointBarriersSnapshotsAndReadyRoundTrip) {
  const auto reg = OperatorRegistry::with_builtins();
  std::string text = kCycle;
  text.replace(text.find("TOKENS"), 6, "10");
  const Program p = parse(text, reg);
  SetupMessage setup = make_setup(p, {0, 1, 1, 0, 0}, 1, 2);
  setup.incarnation = 3;
  setup.epoch = 7;
  setup.checkpoints = true;
  setup.restore.emplace_back(1, OperatorCheckpoint{false, {std::byte{1}}, {{std::byte{2}, std::byte{3}}, {}}});
  setup.restore.emplace_back(4, OperatorCheckpoint{true, {}, {}});
  std::vector<std::byte> b;
  encode(setup, b);
  SetupMessage back;
  ASSERT_TRUE(decode(b, back).ok());
  EXPECT_TRUE(back == setup);

  b.clear();
  const std::vector<BarrierEntry> barriers{{2, 7, 12345}, {4, 7, 0}};
  encode_barriers(barriers, b);
  std::vector<BarrierEntry> barriers_back;
  ASSERT_TRUE(decode_barriers(b, barriers_back).ok());
  EXPECT_EQ(barriers_back, barriers);

  b.clear();
  SnapshotMessage snap{7, 2, OperatorCheckpoint{false, {std::byte{9}}, {{}, {std::byte{8}}}}};
  encode(snap, b);
  SnapshotMessage snap_back;
  ASSERT_TRUE(decode(b, snap_back).ok());
  EXPECT_EQ(snap_back.epoch, 7u);
  EXPECT_EQ(snap_back.op, 2u);
  EXPECT_TRUE(snap_back.checkpoint == snap.checkpoint);
  // Cut anywhere, a SNAPSHOT is refused with a named error.
  for (std::size_t n = 1; n < b.size(); ++n) {
    SnapshotMessage cut;
    const Status s = decode(std::span(b.data(), n), cut);
    EXPECT_FALSE(s.ok()) << n;
    EXPECT_NE(s.message().find("stream SNAPSHOT"), std::string::npos) << s.ToString();
  }

  b.clear();
  encode_ready(3, b);
  std::uint32_t incarnation = 0;
  ASSERT_TRUE(decode_ready(b, incarnation).ok());
  EXPECT_EQ(incarnation, 3u);
  b.clear();
  encode_checkpoint(8, b);
  std::uint32_t epoch = 0;
  ASSERT_TRUE(decode_checkpoint(b, epoch).ok());
  EXPECT_EQ(epoch, 8u);
}

}  // namespace
}  // namespace redflow::stream
