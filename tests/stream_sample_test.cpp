// A stream program's live sample (RunOptions::on_sample): each stream's tokens
// and the tokens waiting in it while the operators run, and the dashboard's
// streams (dashboard::Board::streams) built from it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "dashboard/board.hpp"
#include "redflow/stream.hpp"
#include "stream/apps/compute_heavy.hpp"

namespace redflow::stream {
namespace {

// The Compute Heavy Application, long enough (on a loaded machine too) for
// several samples: every sample names every stream, in the program's
// order; a stream's tokens never go down from sample to sample and never
// pass what the run's result counts; what waits in a stream is at most
// what was written into it; and the producer side runs ahead somewhere.
TEST(StreamSample, SamplesCountEachStreamsTokensAndWhatWaitsInItWhileTheProgramRuns) {
  OperatorRegistry reg = OperatorRegistry::with_builtins();
  add_compute_heavy_operators(reg);
  // About 1 s here; a quarter as many blocks under a sanitizer (still
  // seconds): samples come every kSamplePeriodS.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  auto program = cha_program(reg, 1500, 10000);
#else
  auto program = cha_program(reg, 6000, 10000);
#endif
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::mutex mutex;
  std::vector<std::vector<StreamProfile>> samples;
  RunOptions o;
  o.threads = 2;
  o.on_sample = [&](const std::vector<StreamProfile>& s) {
    std::lock_guard lock(mutex);
    samples.push_back(s);
  };
  auto r = run(*program, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GE(samples.size(), 2u) << "the run took " << r->seconds << " s: expected a sample every " << kSamplePeriodS << " s";
  ASSERT_EQ(r->streams.size(), program->streams().size());
  bool any_queued = false;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    ASSERT_EQ(samples[k].size(), r->streams.size()) << "sample " << k;
    for (std::size_t i = 0; i < samples[k].size(); ++i) {
      const StreamProfile& s = samples[k][i];
      EXPECT_EQ(s.from, r->streams[i].from);
      EXPECT_EQ(s.to, r->streams[i].to);
      EXPECT_LE(s.tokens, r->streams[i].tokens) << s.from << " -> " << s.to;
      EXPECT_LE(s.queued, s.tokens) << s.from << " -> " << s.to;
      if (k > 0) {
        EXPECT_GE(s.tokens, samples[k - 1][i].tokens) << s.from << " -> " << s.to << " went down";
      }
      any_queued = any_queued || s.queued > 0;
    }
  }
  EXPECT_TRUE(any_queued) << "the source writes faster than the mixing stages read: tokens wait somewhere";
  // At the end every token was read.
  for (const StreamProfile& s : r->streams) EXPECT_EQ(s.queued, 0u) << s.from << " -> " << s.to;
}

TEST(StreamSample, WithoutACallbackNoSamplerRuns) {
  OperatorRegistry reg = OperatorRegistry::with_builtins();
  add_compute_heavy_operators(reg);
  auto program = cha_program(reg, 50, 10);
  ASSERT_TRUE(program.ok());
  auto r = run(*program, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::uint64_t tokens = 0;
  for (const StreamProfile& s : r->streams) tokens += s.tokens;
  EXPECT_GT(tokens, 0u);
}

// The streams page's numbers: tokens per second between two samples, and
// over the whole run at its end.
TEST(StreamSample, TheBoardsStreamsHaveTokensPerSecondAndWhatQueues) {
  dashboard::Board board("stream", "p", 1);
  board.streams({{"a", "b", 100, 40}, {"b", "c", 60, 0}});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  board.streams({{"a", "b", 300, 90}, {"b", "c", 260, 5}});
  dashboard::Snapshot s = board.snapshot();
  ASSERT_EQ(s.streams.size(), 2u);
  EXPECT_EQ(s.state, "running");
  EXPECT_EQ(s.streams[0].tokens, 300u);
  EXPECT_EQ(s.streams[0].queued, 90u);
  // 200 tokens in about 0.1 s (at least 0.1 s: the rate is at most 2,000 a second, and a loaded machine's sleep is not 10 times longer).
  EXPECT_LE(s.streams[0].per_s, 2000.0 + 1e-9);
  EXPECT_GT(s.streams[0].per_s, 200.0);
  EXPECT_DOUBLE_EQ(s.streams[1].per_s, s.streams[0].per_s) << "both streams gained 200 tokens in the same time";
  board.streams({{"a", "b", 1000, 0}, {"b", "c", 500, 0}}, 2.0);
  s = board.snapshot();
  EXPECT_DOUBLE_EQ(s.streams[0].per_s, 500.0);
  EXPECT_DOUBLE_EQ(s.streams[1].per_s, 250.0);
  const auto j = nlohmann::json::parse(dashboard::to_json(s));
  ASSERT_EQ(j["streams"].size(), 2u);
  EXPECT_EQ(j["streams"][0]["from"], "a");
  EXPECT_EQ(j["streams"][0]["to"], "b");
  EXPECT_EQ(j["streams"][0]["tokens"].get<int>(), 1000);
  EXPECT_EQ(j["streams"][0]["queued"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(j["streams"][0]["per_s"].get<double>(), 500.0);
}

}  // namespace
}  // namespace redflow::stream
