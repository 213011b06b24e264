// Parks' rule as the Runner asks it (src/stream/room.hpp), on queues and
// inboxes alone: which stream grows when no operator can fire, when none
// does, the wait for a quiet network on a node fed from elsewhere, and a
// stream from another node whose producer used up its credit.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "stream/inbox.hpp"
#include "stream/room.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {
namespace {

// A queue of 8-byte tokens with `capacity`, holding `tokens`, whose producer waits for room when it is full.
void fill(TokenQueue& q, std::uint64_t capacity, std::size_t tokens) {
  q.set_capacity(capacity);
  const std::uint64_t v = 7;
  for (std::size_t i = 0; i < tokens; ++i) q.push(&v);
  (void)q.wait_for_room();
}

const auto kNoneDone = [](std::size_t) { return false; };

TEST(StreamRoom, TheFullStreamWithTheSmallestBoundDoublesAndItsProducerIsWoken) {
  TokenQueue big(8), small(8), idle(8);
  fill(big, 64, 64);
  fill(small, 16, 16);
  fill(idle, 16, 3);  // room: its producer never waited
  Room room;
  room.add(&big, 1, false);
  room.add(&small, 2, false);
  room.add(&idle, 3, false);
  ASSERT_TRUE(small.producer_waiting());
  EXPECT_FALSE(idle.producer_waiting());
  const auto woken = room.make_room(false, kNoneDone);
  ASSERT_TRUE(woken.has_value());
  EXPECT_EQ(*woken, 2u);
  EXPECT_EQ(small.capacity(), 32u);
  EXPECT_FALSE(small.producer_waiting());
  EXPECT_EQ(big.capacity(), 64u) << "only one stream grows at a time";
  // Next time round, the other.
  EXPECT_EQ(room.make_room(false, kNoneDone), std::optional<std::size_t>(1));
  EXPECT_EQ(big.capacity(), 128u);
  // No producer waits any more: nothing to do (a real deadlock, if nothing can fire).
  EXPECT_FALSE(room.make_room(false, kNoneDone).has_value());
}

TEST(StreamRoom, AProducerWhoseStreamHasRoomAgainIsWokenFirstWithoutGrowing) {
  TokenQueue full(8), drained(8);
  fill(full, 8, 8);
  fill(drained, 64, 64);
  std::uint64_t out[48];
  ASSERT_EQ(drained.pop_many(out, 10), 10u);  // 54 of 64: above half, so its reader did not wake it
  ASSERT_TRUE(drained.producer_waiting());
  Room room;
  room.add(&full, 1, false);
  room.add(&drained, 2, false);
  EXPECT_EQ(room.make_room(false, kNoneDone), std::optional<std::size_t>(2));
  EXPECT_EQ(drained.capacity(), 64u);
  EXPECT_EQ(full.capacity(), 8u);
}

TEST(StreamRoom, NothingGrowsWhileAProducerWaitsForTheNetworkOrOnAFinishedProducer) {
  TokenQueue local(8), remote(8);
  fill(local, 8, 8);
  fill(remote, 8, 8);
  Room room;
  room.add(&local, 1, false);
  room.add(&remote, 2, true);  // read by the I/O thread
  EXPECT_TRUE(room.waits_on_network());
  EXPECT_FALSE(room.make_room(false, kNoneDone).has_value()) << "the I/O thread will take tokens";
  remote.clear_waiting();
  EXPECT_FALSE(room.waits_on_network());
  EXPECT_FALSE(room.make_room(false, [](std::size_t op) { return op == 1; }).has_value()) << "its producer finished";
  EXPECT_EQ(local.capacity(), 8u);
  EXPECT_EQ(room.make_room(false, kNoneDone), std::optional<std::size_t>(1));
}

TEST(StreamRoom, ANodeFedFromElsewhereWaitsForAQuietNetwork) {
  TokenQueue q(8);
  fill(q, 8, 8);
  Room room;
  room.add(&q, 1, false);
  room.heard();
  EXPECT_FALSE(room.make_room(true, kNoneDone).has_value()) << "tokens came just now";
  EXPECT_EQ(q.capacity(), 8u);
  std::this_thread::sleep_for(Room::kQuietNetwork + std::chrono::milliseconds(20));
  EXPECT_EQ(room.make_room(true, kNoneDone), std::optional<std::size_t>(1));
  EXPECT_EQ(q.capacity(), 16u);
}

// An inbox with a window of `window` 8-byte tokens that received `tokens`.
void deliver(Inbox& in, std::uint64_t window, std::size_t tokens) {
  in.set_credit_window(window);
  const std::vector<std::uint64_t> v(tokens, 7);
  in.deliver(v.data(), v.size());
}

TEST(StreamRoom, StreamsFromElsewhereOutOfCreditDoubleTheirWindowsWhenTheNetworkIsQuiet) {
  Inbox small(8, true), large(8, true), flowing(8, true);
  deliver(small, 16, 16);   // all its credit used: its producer waits
  deliver(large, 64, 64);   // so does this one's, with a larger window
  deliver(flowing, 64, 10); // credit left: its producer can still send
  EXPECT_TRUE(small.out_of_credit());
  EXPECT_FALSE(flowing.out_of_credit());
  Room room;
  room.add(&small);
  room.add(&large);
  room.add(&flowing);
  room.heard();
  EXPECT_FALSE(room.make_room(true, kNoneDone).has_value()) << "tokens came just now: one more may be on its way";
  std::this_thread::sleep_for(Room::kQuietCredit + std::chrono::milliseconds(10));
  EXPECT_EQ(room.make_room(true, kNoneDone), std::optional<std::size_t>(Room::kCreditGrown));
  EXPECT_EQ(small.credit_window(), 32u) << "every window out of credit doubles";
  EXPECT_EQ(large.credit_window(), 128u);
  EXPECT_EQ(flowing.credit_window(), 64u) << "its producer can still send";
  EXPECT_FALSE(small.out_of_credit());
  EXPECT_EQ(small.take_credit(), 16u) << "the difference is granted at once, nothing having been taken";
  EXPECT_EQ(small.take_credit(), 0u);
  EXPECT_FALSE(room.make_room(true, kNoneDone).has_value()) << "once a quiet period: the grant is on its way";
  // Taking tokens grants them back as before, the grown window counting.
  std::uint64_t out[16];
  ASSERT_EQ(small.pop_many(out, 16), 16u);
  EXPECT_TRUE(small.credit_due());
  EXPECT_EQ(small.take_credit(), 16u);
}

TEST(StreamRoom, AWindowGrowsAfterAShorterQuietThanALocalStreamAndANodeFedByNoOneGrowsNoInbox) {
  TokenQueue q(8);
  fill(q, 8, 8);
  Inbox in(8, true);
  deliver(in, 8, 8);
  Room room;
  room.add(&q, 1, false);
  room.add(&in);
  std::this_thread::sleep_for(Room::kQuietCredit + std::chrono::milliseconds(10));
  EXPECT_EQ(room.make_room(true, kNoneDone), std::optional<std::size_t>(Room::kCreditGrown))
      << "quiet long enough for a window, not yet for a stream between its own operators";
  EXPECT_EQ(q.capacity(), 8u);
  EXPECT_EQ(in.credit_window(), 16u);
  std::this_thread::sleep_for(Room::kQuietNetwork + std::chrono::milliseconds(20));
  EXPECT_EQ(room.make_room(true, kNoneDone), std::optional<std::size_t>(1)) << "then the local stream";
  EXPECT_EQ(q.capacity(), 16u);
  EXPECT_EQ(in.credit_window(), 16u);
  const std::vector<std::uint64_t> more(8, 7);
  in.deliver(more.data(), more.size());
  ASSERT_TRUE(in.out_of_credit());
  EXPECT_FALSE(room.make_room(false, kNoneDone).has_value()) << "not fed from elsewhere: no window to grow";
  EXPECT_EQ(in.credit_window(), 16u);
}

}  // namespace
}  // namespace redflow::stream
