// The driver/tile protocol (tile.hpp) driven on its own, without a driver:
// data node messages, clear slot, clear all, actor -> completion with checksum.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <mutex>
#include <set>
#include <thread>

#include "runtime/local_tile.hpp"
#include "test_graphs.hpp"

namespace redflow::runtime {
namespace {

std::vector<std::byte> bytes_of(std::vector<std::uint32_t> v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(TileProtocolTest, DataNodeThenActorReturnsChecksumOfOutput) {
  LocalTile tile(4, 64, 2);
  auto a = bytes_of({1, 2, 3, 4}), b = bytes_of({10, 20, 30, 40});
  ASSERT_TRUE(tile.data_node({DataTag{1, 0}, 0, a.size(), a}).ok());
  ASSERT_TRUE(tile.data_node({DataTag{1, 1}, 1, b.size(), b}).ok());
  ActorFunction mix = testing::mix;
  SlotId ins[] = {0, 1};
  ActorMessage m;
  m.actor = 7;
  m.execution = 1;
  m.function = &mix;
  m.name = "mix";
  m.args = "salt=5";
  m.input_slots = ins;
  m.output_slot = 2;
  m.output_tag = DataTag{1, 2};
  m.output_bytes = 16;
  m.want_checksum = true;
  Completion c = tile.actor(m);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.actor, 7u);
  std::vector<std::byte> out(16);
  ASSERT_TRUE(tile.read_slot(2, DataTag{1, 2}, out));
  const auto expected = bytes_of({5 + 1 + 20, 5 + 2 + 40, 5 + 3 + 60, 5 + 4 + 80});
  EXPECT_EQ(out, expected);
  EXPECT_EQ(c.checksum, XXH3_64bits(expected.data(), expected.size()));
  // Asking for the wrong value of the slot fails instead of returning stale bytes.
  EXPECT_FALSE(tile.read_slot(2, DataTag{2, 2}, out));
}

TEST(TileProtocolTest, ClearSlotAndClearAllForgetData) {
  LocalTile tile(3, 16, 1);
  auto a = bytes_of({1, 2});
  for (SlotId s = 0; s < 3; ++s) ASSERT_TRUE(tile.data_node({DataTag{1, s}, s, a.size(), a}).ok());
  std::vector<std::byte> out(8);
  tile.clear_slot(1);
  EXPECT_TRUE(tile.read_slot(0, DataTag{1, 0}, out));
  EXPECT_FALSE(tile.read_slot(1, DataTag{1, 1}, out));
  tile.clear_all();
  for (SlotId s = 0; s < 3; ++s) EXPECT_FALSE(tile.read_slot(s, DataTag{1, s}, out));
}

TEST(TileProtocolTest, FetchFromAnotherTile) {
  LocalTile a(2, 32, 1), b(2, 32, 1);
  auto v = bytes_of({9, 8, 7});
  ASSERT_TRUE(a.data_node({DataTag{3, 5}, 1, v.size(), v}).ok());
  DataNodeMessage fetch{DataTag{3, 5}, 0, v.size(), {}, &a, 1};
  ASSERT_TRUE(b.data_node(fetch).ok());
  std::vector<std::byte> out(v.size());
  ASSERT_TRUE(b.read_slot(0, DataTag{3, 5}, out));
  EXPECT_EQ(out, v);
  // Once the source slot is cleared, a fetch reports it instead of copying garbage.
  a.clear_slot(1);
  EXPECT_EQ(b.data_node(fetch).code(), Status::Code::kNotFound);
}

TEST(TileProtocolTest, RejectsOversizedDataAndBadSlots) {
  LocalTile tile(2, 8, 1);
  auto big = std::vector<std::byte>(9);
  EXPECT_EQ(tile.data_node({DataTag{1, 0}, 0, big.size(), big}).code(), Status::Code::kResourceExhausted);
  auto small = std::vector<std::byte>(4);
  EXPECT_EQ(tile.data_node({DataTag{1, 0}, 5, small.size(), small}).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(tile.data_node({DataTag{1, 0}, 0, 8, small}).code(), Status::Code::kInvalidArgument);
}

TEST(TileProtocolTest, FailingActorCompletesWithError) {
  LocalTile tile(2, 8, 1);
  ActorFunction bad = [](ActorContext& ctx) { ctx.fail("bad data"); };
  ActorFunction throws = [](ActorContext&) { throw std::runtime_error("boom"); };
  ActorMessage m;
  m.function = &bad;
  m.output_slot = 0;
  m.output_bytes = 4;
  Completion c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "bad data");
  m.function = &throws;
  c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("boom"), std::string::npos);
}

TEST(TileProtocolTest, ParallelLoopCoversTheRangeOnAllCores) {
  LocalTile tile(2, 4096, 3);
  std::vector<std::atomic<int>> hits(1000);
  std::set<std::thread::id> threads;
  std::mutex mu;
  ActorFunction body = [&](ActorContext& ctx) {
    EXPECT_EQ(ctx.cores(), 3u);
    ctx.parallel_chunks(0, hits.size(), [&](std::size_t b, std::size_t e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      for (std::size_t i = b; i < e; ++i) hits[i]++;
    });
  };
  ActorMessage m;
  m.function = &body;
  m.output_slot = 0;
  m.output_bytes = 4;
  for (int round = 0; round < 50; ++round) ASSERT_TRUE(tile.actor(m).ok);
  for (auto& h : hits) EXPECT_EQ(h.load(), 50);
  EXPECT_EQ(threads.size(), 3u);
}

TEST(TileProtocolTest, ParallelLoopsShorterThanTheCoresRunEachChunkOnce) {
  // Loops of 1..5 elements on 4 cores leave helpers without a chunk; a helper
  // that lags behind must not run a chunk of the next loop twice.
  LocalTile tile(2, 64, 4);
  std::vector<std::atomic<int>> hits(5);
  std::size_t len = 0;
  ActorFunction body = [&](ActorContext& ctx) {
    ctx.parallel_for(0, len, [&](std::size_t i) { hits[i]++; });
  };
  ActorMessage m;
  m.function = &body;
  m.output_slot = 0;
  m.output_bytes = 4;
  std::vector<int> expected(hits.size(), 0);
  for (int round = 0; round < 4000; ++round) {
    len = 1 + static_cast<std::size_t>(round % 5);
    ASSERT_TRUE(tile.actor(m).ok);
    for (std::size_t i = 0; i < len; ++i) expected[i]++;
  }
  for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), expected[i]) << i;
}

TEST(TileProtocolTest, ReadSlotRefusesABufferLargerThanASlot) {
  LocalTile tile(1, 16, 1);
  std::vector<std::byte> v(16, std::byte{1});
  ASSERT_TRUE(tile.data_node({DataTag{1, 0}, 0, v.size(), v}).ok());
  std::vector<std::byte> big(17);
  EXPECT_FALSE(tile.read_slot(0, DataTag{1, 0}, big));
}

TEST(TileProtocolTest, ConcurrentReadersAndClearNeverSeeTornData) {
  LocalTile src(1, 4096, 1);
  std::vector<std::byte> v(4096, std::byte{0x5a});
  std::atomic<bool> stop{false};
  std::atomic<int> reads[2] = {0, 0};  // successful reads of value 1 and of value 2
  std::atomic<int> torn{0};
  std::thread reader([&] {
    std::vector<std::byte> out(4096);
    while (!stop.load()) {
      for (std::uint32_t e = 1; e <= 2; ++e) {
        if (src.read_slot(0, DataTag{e, 0}, out)) {
          for (auto b : out) torn += b != (e == 1 ? std::byte{0x5a} : std::byte{0xa5});
          reads[e - 1]++;
        }
      }
    }
  });
  // Rewrite the slot until the reader has read each value many times while
  // it was being replaced (bounded, so a reader that never succeeds fails
  // the test instead of hanging it).
  std::vector<std::byte> w(4096, std::byte{0xa5});
  for (int i = 0; i < 2000000 && (i < 2000 || reads[0].load() < 100 || reads[1].load() < 100); ++i) {
    ASSERT_TRUE(src.data_node({DataTag{1, 0}, 0, v.size(), v}).ok());
    ASSERT_TRUE(src.data_node({DataTag{2, 0}, 0, w.size(), w}).ok());
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0) << "bytes of a value read while the slot was being replaced";
  EXPECT_GE(reads[0].load(), 100) << "the reader must have read value 1 concurrently with the writer";
  EXPECT_GE(reads[1].load(), 100) << "the reader must have read value 2 concurrently with the writer";
  // A value of another round is another value: the tag alone is not enough.
  EXPECT_FALSE(src.read_slot(0, DataTag{2, 0, 1}, std::span<std::byte>(w)));
}

}  // namespace
}  // namespace redflow::runtime
