// Tokens made and used where they lie (FiringContext::reserve / commit,
// peek / consume; TokenQueue and Inbox underneath): every token arrives once
// and in order whatever the chunks and however blocks are crossed, nothing
// is visible before it is committed, tokens in place are aligned, and an
// operator written this way, with an odd token size, gives in both local
// modes what the copying calls give.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "redflow/stream.hpp"
#include "stream/inbox.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {
namespace {

constexpr std::uint64_t kTokens = 200'000;  // about 49 blocks of 8-byte tokens

TEST(StreamInPlace, AQueueFilledAndReadInPlaceInRandomChunksGivesEveryTokenOnceInOrder) {
  TokenQueue q(8);
  auto produce = [&] {
    std::mt19937 rng(1);
    std::uint64_t next = 0;
    while (next < kTokens) {
      const std::size_t want = std::min<std::uint64_t>(1 + rng() % 9000, kTokens - next);
      std::size_t room = 0;
      auto* at = reinterpret_cast<std::uint64_t*>(q.reserve(want, room));
      ASSERT_GE(room, 1u);
      ASSERT_LE(room, want);
      ASSERT_LE(room, 4096u) << "one block of 32 KiB at most";
      // Only part of the room, sometimes: the rest is given again next time.
      const std::size_t fill = rng() % 4 == 0 ? 1 + rng() % room : room;
      for (std::size_t i = 0; i < fill; ++i) at[i] = next + i;
      q.commit(fill);
      next += fill;
    }
  };
  std::thread producer([&] {
    produce();
    q.close();  // also after a failed check: the reader ends
  });
  std::mt19937 rng(2);
  std::uint64_t expect = 0;
  while (!q.drained()) {
    std::size_t n = 0;
    const auto* at = reinterpret_cast<const std::uint64_t*>(q.look(1 + rng() % 7000, n));
    if (at == nullptr) {
      EXPECT_EQ(n, 0u);
      std::this_thread::yield();
      continue;
    }
    const std::size_t take = rng() % 3 == 0 ? 1 + rng() % n : n;
    for (std::size_t i = 0; i < take; ++i) ASSERT_EQ(at[i], expect + i);
    q.skip(take);
    expect += take;
  }
  producer.join();
  EXPECT_EQ(expect, kTokens);
  EXPECT_EQ(q.popped(), kTokens);
}

TEST(StreamInPlace, NothingReservedIsVisibleBeforeItIsCommittedAndTheCopyingCallsMixIn) {
  TokenQueue q(8);
  std::size_t room = 0;
  auto* at = reinterpret_cast<std::uint64_t*>(q.reserve(10, room));
  ASSERT_EQ(room, 10u);
  for (std::uint64_t i = 0; i < 10; ++i) at[i] = i;
  EXPECT_EQ(q.size(), 0u);
  std::size_t n = 0;
  EXPECT_EQ(q.look(10, n), nullptr);
  EXPECT_EQ(n, 0u);
  q.commit(4);  // 4 of the 10 published
  EXPECT_EQ(q.size(), 4u);
  const std::uint64_t more[] = {100, 101};
  q.push_many(more, 2);  // after the committed 4
  std::uint64_t got[8] = {};
  ASSERT_EQ(q.pop_many(got, 8), 6u);
  EXPECT_EQ((std::vector<std::uint64_t>(got, got + 6)), (std::vector<std::uint64_t>{0, 1, 2, 3, 100, 101}));
}

TEST(StreamInPlace, TokensInPlaceAreAlignedForTheirSize) {
  TokenQueue q(16);
  for (int round = 0; round < 3000; ++round) {
    std::size_t room = 0;
    auto* at = q.reserve(3, room);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(at) % 16, 0u);
    std::memset(at, round & 0xff, room * 16);
    q.commit(room);
    std::size_t n = 0;
    const auto* seen = q.look(room, n);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(seen) % 16, 0u);
    ASSERT_EQ(n, room);
    q.skip(n);
  }
}

// An inbox, with and without two levels: tokens delivered in messages are
// looked at and taken in order, the credit count sees what was taken.
class StreamInPlaceInbox : public ::testing::TestWithParam<bool> {};

TEST_P(StreamInPlaceInbox, TokensDeliveredInMessagesAreLookedAtAndTakenInOrder) {
  Inbox in(8, GetParam());
  in.set_credit_window(1000);
  std::uint64_t next = 0, expect = 0;
  std::mt19937 rng(3);
  for (int message = 0; message < 200; ++message) {
    std::vector<std::uint64_t> m(1 + rng() % 300);
    for (auto& v : m) v = next++;
    in.deliver(m.data(), m.size());
    // Read some of what waits, sometimes all, sometimes none.
    for (int look = rng() % 3; look > 0; --look) {
      std::size_t n = 0;
      const auto* at = reinterpret_cast<const std::uint64_t*>(in.look(1 + rng() % 500, n));
      if (!at) break;
      ASSERT_GT(n, 0u);
      const std::size_t take = 1 + rng() % n;
      for (std::size_t i = 0; i < take; ++i) ASSERT_EQ(at[i], expect + i);
      in.skip(take);
      expect += take;
    }
  }
  std::size_t n = 0;
  while (const auto* at = reinterpret_cast<const std::uint64_t*>(in.look(64, n))) {
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(at[i], expect + i);
    in.skip(n);
    expect += n;
  }
  EXPECT_EQ(expect, next);
  EXPECT_EQ(in.size(), 0u);
  EXPECT_TRUE(in.credit_due()) << "tokens taken in place count toward the credit as popped ones do";
  EXPECT_EQ(in.take_credit(), next);
}

INSTANTIATE_TEST_SUITE_P(Levels, StreamInPlaceInbox, ::testing::Bool(),
                         [](const auto& info) { return info.param ? std::string("TwoLevels") : std::string("OneLevel"); });

// rgb n=N: N 3-byte tokens (i, i+1, i+2 mod 256), made in place.
class Rgb final : public Operator {
 public:
  explicit Rgb(std::uint64_t n) : left_(n) {}
  Fired fire(FiringContext& ctx) override {
    std::size_t room = 0;
    auto* at = static_cast<unsigned char*>(ctx.reserve(0, std::min<std::uint64_t>(left_, 5000), room));
    for (std::size_t i = 0; i < room; ++i, ++next_) {
      at[3 * i] = static_cast<unsigned char>(next_);
      at[3 * i + 1] = static_cast<unsigned char>(next_ + 1);
      at[3 * i + 2] = static_cast<unsigned char>(next_ + 2);
    }
    ctx.commit(0, room);
    left_ -= room;
    return left_ == 0 ? Fired::kDone : Fired::kMore;
  }

 private:
  std::uint64_t left_, next_ = 0;
};

// gray: each 3-byte token to one byte, their mean; read in place (or, with
// copy=1, with read_many) and written in place (or with write_many).
class Gray final : public Operator {
 public:
  explicit Gray(bool copy) : copy_(copy) {}
  Fired fire(FiringContext& ctx) override {
    for (;;) {
      std::size_t n = 0;
      const unsigned char* in = nullptr;
      if (copy_) {
        buffer_.resize(3 * 700);
        n = ctx.read_many(0, buffer_.data(), 700);
        in = buffer_.data();
      } else {
        in = static_cast<const unsigned char*>(ctx.peek(0, 700, n));
      }
      if (n == 0) break;
      std::size_t done = 0;
      while (done < n) {
        std::size_t room = 0;
        auto* out = static_cast<unsigned char*>(ctx.reserve(0, n - done, room));
        for (std::size_t i = 0; i < room; ++i) {
          const unsigned char* t = in + 3 * (done + i);
          out[i] = static_cast<unsigned char>((t[0] + t[1] + t[2]) / 3);
        }
        ctx.commit(0, room);
        done += room;
      }
      if (!copy_) ctx.consume(0, n);
    }
    return Fired::kMore;
  }

 private:
  bool copy_;
  std::vector<unsigned char> buffer_;
};

TEST(StreamInPlace, AnOperatorWithOddTokensInPlaceGivesWhatTheCopyingCallsGiveInBothModes) {
  auto reg = OperatorRegistry::with_builtins();
  reg.add("rgb", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{0, 1, {}, {3}}; },
                                 [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Rgb>(std::stoull(a.at("n"))); }});
  reg.add("gray", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{1, 1, {3}, {1}}; },
                                  [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Gray>(a.count("copy") > 0); }});
  auto program = [&](bool copy) {
    Program p;
    EXPECT_TRUE(p.add(reg, "src", "rgb", {{"n", "100000"}}).ok());
    Args gray_args;
    if (copy) gray_args["copy"] = "1";
    EXPECT_TRUE(p.add(reg, "gray", "gray", gray_args).ok());
    EXPECT_TRUE(p.add(reg, "out", "collect").ok());
    EXPECT_TRUE(p.connect("src", 0, "gray", 0, 3).ok());
    EXPECT_TRUE(p.connect("gray", 0, "out", 0, 1).ok());
    return p;
  };
  std::string expected(100000, '\0');
  for (std::uint64_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<char>(((i & 0xff) + ((i + 1) & 0xff) + ((i + 2) & 0xff)) / 3);
  for (const Mode mode : {Mode::kThreadPerOperator, Mode::kPool})
    for (const bool copy : {false, true}) {
      SCOPED_TRACE(std::string(mode == Mode::kPool ? "pool" : "threads") + (copy ? ", copying reads" : ", in place"));
      // A small bound, so the producer waits for room and blocks are reused.
      RunOptions o{mode, 2};
      o.stream_buffer_bytes = 4096;
      auto r = run(program(copy), o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const auto& got = r->outputs.at("out");
      ASSERT_EQ(got.size(), expected.size());
      EXPECT_TRUE(std::memcmp(got.data(), expected.data(), expected.size()) == 0);
    }
}

}  // namespace
}  // namespace redflow::stream
