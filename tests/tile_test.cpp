// The driver/tile protocol (tile.hpp) driven on its own, without a driver:
// data node messages, clear slot, clear all, read slot, actor table, fault
// configuration, actor -> completion with checksum, and a tile that dies.
// Every protocol test runs on both transports: LocalTile called directly,
// and WireTile, where each message crosses as bytes to the tile's executor.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "runtime/local_tile.hpp"
#include "runtime/tile_service.hpp"
#include "runtime/wire_tile.hpp"
#include "test_graphs.hpp"
#include "tile_messages.hpp"

namespace redflow::runtime {
namespace {

using namespace tile_messages;

enum class Transport { kDirect, kWire };

class TileTest : public ::testing::TestWithParam<Transport> {
 protected:
  // A tile on the transport under test; tiles made by one test are each other's peers.
  Tile& make(unsigned slots, std::size_t bytes, unsigned cores) {
    auto local = std::make_unique<LocalTile>(slots, bytes, cores, static_cast<unsigned>(tiles_.size()));
    if (GetParam() == Transport::kWire) {
      tiles_.push_back(std::make_unique<WireTile>(std::move(local)));
    } else {
      tiles_.push_back(std::move(local));
    }
    peers_.push_back(tiles_.back().get());
    for (auto& t : tiles_) {
      if (GetParam() == Transport::kWire) {
        static_cast<WireTile&>(*t).set_peers(peers_);
      } else {
        static_cast<LocalTile&>(*t).set_peers(peers_);
      }
    }
    return *tiles_.back();
  }

 private:
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Tile*> peers_;
};

INSTANTIATE_TEST_SUITE_P(Transports, TileTest, ::testing::Values(Transport::kDirect, Transport::kWire),
                         [](const auto& info) { return info.param == Transport::kWire ? std::string("Wire") : std::string("Direct"); });

TEST_P(TileTest, DataNodeThenActorReturnsChecksumOfOutput) {
  Tile& tile = make(4, 64, 2);
  auto a = u32_bytes({1, 2, 3, 4}), b = u32_bytes({10, 20, 30, 40});
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 0}, 0, a)).ok());
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 1}, 1, b)).ok());
  Table table({ActorFunction(testing::mix)}, "salt=5");
  ASSERT_TRUE(table.load(tile).ok());
  SlotId ins[] = {0, 1};
  ActorMessage m = actor_message(ins, 2, DataTag{1, 2}, 16);
  m.want_checksum = true;
  Completion c = tile.actor(m);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_FALSE(c.lost);
  EXPECT_EQ(c.actor, 0u);
  EXPECT_EQ(c.executions, 1u);
  std::vector<std::byte> out(16);
  ASSERT_TRUE(read(tile, 2, DataTag{1, 2}, out));
  const auto expected = u32_bytes({5 + 1 + 20, 5 + 2 + 40, 5 + 3 + 60, 5 + 4 + 80});
  EXPECT_EQ(out, expected);
  EXPECT_EQ(c.checksum, XXH3_64bits(expected.data(), expected.size()));
  // Asking for the wrong value of the slot fails instead of returning stale bytes.
  EXPECT_FALSE(read(tile, 2, DataTag{2, 2}, out));
}

TEST_P(TileTest, ClearSlotAndClearAllForgetData) {
  Tile& tile = make(3, 16, 1);
  auto a = u32_bytes({1, 2});
  for (SlotId s = 0; s < 3; ++s) ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, s}, s, a)).ok());
  std::vector<std::byte> out(8);
  tile.clear_slot(1);
  EXPECT_TRUE(read(tile, 0, DataTag{1, 0}, out));
  EXPECT_FALSE(read(tile, 1, DataTag{1, 1}, out));
  tile.clear_all();
  for (SlotId s = 0; s < 3; ++s) EXPECT_FALSE(read(tile, s, DataTag{1, s}, out));
}

TEST_P(TileTest, FetchFromAnotherTileNamedById) {
  Tile& a = make(2, 32, 1);
  Tile& b = make(2, 32, 1);
  auto v = u32_bytes({9, 8, 7});
  ASSERT_TRUE(a.data_node(from_driver(DataTag{3, 5}, 1, v)).ok());
  DataNodeMessage fetch;
  fetch.tag = DataTag{3, 5};
  fetch.slot = 0;
  fetch.bytes = v.size();
  fetch.source_tile = static_cast<std::int32_t>(a.index());
  fetch.source_slot = 1;
  ASSERT_TRUE(b.data_node(fetch).ok());
  std::vector<std::byte> out(v.size());
  ASSERT_TRUE(read(b, 0, DataTag{3, 5}, out));
  EXPECT_EQ(out, v);
  // Once the source slot is cleared, a fetch reports it instead of copying garbage.
  a.clear_slot(1);
  EXPECT_EQ(b.data_node(fetch).code(), Status::Code::kNotFound);
  // A source tile that does not exist is refused by name.
  fetch.source_tile = 7;
  EXPECT_EQ(b.data_node(fetch).code(), Status::Code::kInvalidArgument);
}

// A transfer into a slot that failed leaves it empty (a fetch that found
// nothing, above; in a worker process, a value fetched ahead of its actor,
// docs/remote.md): the actor behind it runs nothing instead of reading
// whatever the slot held before, and says which input.
TEST_P(TileTest, AnActorWhoseInputSlotHoldsNoValueRunsNothing) {
  Tile& tile = make(3, 16, 1);
  std::atomic<int> runs{0};
  Table table({ActorFunction([&](ActorContext&) { ++runs; })});
  ASSERT_TRUE(table.load(tile).ok());
  auto v = u32_bytes({1, 2});
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 0}, 0, v)).ok());
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 1}, 1, v)).ok());
  tile.clear_slot(1);
  SlotId ins[] = {0, 1};
  const Completion c = tile.actor(actor_message(ins, 2, DataTag{1, 2}, 8));
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.lost);
  EXPECT_NE(c.error.find("input slot 1 holds no value"), std::string::npos) << c.error;
  EXPECT_EQ(runs.load(), 0);
  std::vector<std::byte> out(8);
  EXPECT_FALSE(read(tile, 2, DataTag{1, 2}, out)) << "no output was published";
}

// The driver frees every slot as an execution starts, so a slot whose
// transfer failed may still hold a value of an earlier execution: the actor
// of this one runs nothing on it, as on an empty slot.
TEST_P(TileTest, AnActorWhoseInputSlotHoldsAnEarlierExecutionsValueRunsNothing) {
  Tile& tile = make(3, 16, 1);
  std::atomic<int> runs{0};
  Table table({ActorFunction([&](ActorContext&) { ++runs; })});
  ASSERT_TRUE(table.load(tile).ok());
  auto v = u32_bytes({1, 2});
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 0}, 0, v)).ok());
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{2, 1}, 1, v)).ok());
  SlotId ins[] = {1, 0};
  ActorMessage m = actor_message(ins, 2, DataTag{2, 2}, 8);
  m.execution = 2;
  const Completion c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.lost);
  EXPECT_NE(c.error.find("input slot 0 holds no value of execution 2"), std::string::npos) << c.error;
  EXPECT_EQ(runs.load(), 0);
  // The value of this execution in the same slot is read.
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{2, 0}, 0, v)).ok());
  EXPECT_TRUE(tile.actor(m).ok);
  EXPECT_EQ(runs.load(), 1);
}

TEST_P(TileTest, RejectsOversizedDataAndBadSlots) {
  Tile& tile = make(2, 8, 1);
  auto big = std::vector<std::byte>(9);
  EXPECT_EQ(tile.data_node(from_driver(DataTag{1, 0}, 0, big)).code(), Status::Code::kResourceExhausted);
  auto small = std::vector<std::byte>(4);
  EXPECT_EQ(tile.data_node(from_driver(DataTag{1, 0}, 5, small)).code(), Status::Code::kInvalidArgument);
  DataNodeMessage lying = from_driver(DataTag{1, 0}, 0, small);
  lying.bytes = 8;
  EXPECT_EQ(tile.data_node(lying).code(), Status::Code::kInvalidArgument);
  std::vector<std::byte> big_out(17);
  EXPECT_FALSE(read(tile, 0, DataTag{1, 0}, big_out));
}

TEST_P(TileTest, FailingActorCompletesWithError) {
  Tile& tile = make(2, 8, 1);
  Table table({[](ActorContext& ctx) { ctx.fail("bad data"); }, [](ActorContext&) { throw std::runtime_error("boom"); }});
  ASSERT_TRUE(table.load(tile).ok());
  ActorMessage m;
  m.actor = 0;
  m.output_slot = 0;
  m.output_bytes = 4;
  Completion c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.actor_failed);
  EXPECT_EQ(c.error, "bad data");
  m.actor = 1;
  c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("boom"), std::string::npos);
  // An actor id outside the table is a protocol error, not the actor's.
  m.actor = 2;
  c = tile.actor(m);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.actor_failed);
  EXPECT_NE(c.error.find("table of 2"), std::string::npos) << c.error;
}

TEST_P(TileTest, ActorTableResolvesFunctionsInTheTilesRegistry) {
  Tile& tile = make(2, 8, 1);
  Table table({[](ActorContext&) {}});
  Registry empty;
  const Status s = tile.load_actors(table.message(), empty);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("'f0'"), std::string::npos) << s.message();
  // An entry naming a function beyond the table's list is refused by name too.
  const ActorTableEntry beyond[] = {{"a0", "", 5, 1}};
  const Status b = tile.load_actors(ActorTableMessage{1, table.function_views, beyond}, table.registry);
  // (Direct: the tile refuses it; wire: the decoder does, as malformed.)
  EXPECT_FALSE(b.ok());
  EXPECT_NE(b.message().find("function 5 of a table of 1 functions"), std::string::npos) << b.message();
}

TEST_P(TileTest, SameRunsVoteOnTheTile) {
  // 3x-same through the table's `runs`: three clean runs agree; on a tile
  // that flips every output, each run's flip lands on its own bit, so the
  // runs cannot all agree and the completion says so.
  Tile& tile = make(4, 16, 1);
  Table table({[](ActorContext& ctx) { std::memset(ctx.output_bytes().data(), 7, ctx.output_bytes().size()); }}, "", 3);
  ASSERT_TRUE(table.load(tile).ok());
  SlotId extra[] = {1, 2};
  ActorMessage m;
  m.output_slot = 0;
  m.output_bytes = 16;
  m.output_tag = DataTag{1, 0};
  m.extra_output_slots = extra;
  m.max_rounds = 1;
  Completion c = tile.actor(m);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_TRUE(c.agreed);
  EXPECT_EQ(c.executions, 3u);
  EXPECT_EQ(c.rejected, 0u);
  FaultConfigMessage f;
  f.faulty = true;
  ASSERT_TRUE(tile.configure_faults(f).ok());
  c = tile.actor(m);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.injected, 3u);
  EXPECT_FALSE(c.agreed && c.rejected == 0) << "three flipped runs cannot all agree";
}

TEST_P(TileTest, SameRunsCountRoundsWhereTwoFlipsLandAlike) {
  // On a tile that flips every output, a 1-byte output has 8 bits to flip:
  // two of three runs often get the same one and then agree on a wrong value.
  // The completion counts those rounds from what the injector flipped; with
  // every run flipped, two runs agree exactly when their flips landed alike.
  Tile& tile = make(4, 16, 1);
  Table table({[](ActorContext& ctx) { std::memset(ctx.output_bytes().data(), 7, ctx.output_bytes().size()); }}, "", 3);
  ASSERT_TRUE(table.load(tile).ok());
  FaultConfigMessage f;
  f.faulty = true;
  ASSERT_TRUE(tile.configure_faults(f).ok());
  SlotId extra[] = {1, 2};
  ActorMessage m;
  m.output_slot = 0;
  m.output_bytes = 1;
  m.output_tag = DataTag{1, 0};
  m.extra_output_slots = extra;
  m.max_rounds = 1;
  unsigned alike = 0, apart = 0;
  for (std::uint64_t e = 1; e <= 200; ++e) {
    m.fault_execution = e;
    m.output_tag = DataTag{static_cast<std::uint32_t>(e), 0};
    const Completion c = tile.actor(m);
    ASSERT_TRUE(c.ok) << c.error;
    ASSERT_EQ(c.injected, 3u);
    EXPECT_EQ(c.alike_flips, c.agreed ? 1u : 0u) << "execution " << e;
    (c.alike_flips ? alike : apart) += 1;
  }
  EXPECT_GT(alike, 0u) << "no two flips landed alike in 200 rounds: the count is never shown non-zero";
  EXPECT_GT(apart, 0u);
}

TEST_P(TileTest, CrashTileDiesAfterKActorsAndAnswersLost) {
  Tile& tile = make(2, 8, 1);
  int runs = 0;
  Table table({[&](ActorContext&) { ++runs; }});
  ASSERT_TRUE(table.load(tile).ok());
  auto v = u32_bytes({1});
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 0}, 1, v)).ok());
  FaultConfigMessage f;
  f.crash_after = 2;
  ASSERT_TRUE(tile.configure_faults(f).ok());
  ActorMessage m;
  m.output_slot = 0;
  m.output_bytes = 4;
  EXPECT_TRUE(tile.actor(m).ok);
  EXPECT_TRUE(tile.actor(m).ok);
  EXPECT_FALSE(tile.lost());
  const Completion c = tile.actor(m);
  EXPECT_TRUE(c.lost);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(tile.lost());
  EXPECT_EQ(runs, 2) << "a dead tile runs nothing";
  // Gone for good: nothing it held can be read, nothing can be placed, nothing runs.
  std::vector<std::byte> out(4);
  EXPECT_FALSE(read(tile, 1, DataTag{1, 0}, out));
  EXPECT_FALSE(tile.data_node(from_driver(DataTag{1, 1}, 0, v)).ok());
  EXPECT_TRUE(tile.actor(m).lost);
  EXPECT_EQ(runs, 2);
}

TEST_P(TileTest, ParallelLoopCoversTheRangeOnAllCores) {
  Tile& tile = make(2, 4096, 3);
  std::vector<std::atomic<int>> hits(1000);
  std::set<std::thread::id> threads;
  std::mutex mu;
  // Each chunk waits (up to 10 s) until all three have started: the runner
  // runs every chunk no helper claimed, so only chunks that meet show that
  // the helpers take part.
  std::atomic<unsigned> started{0};
  Table table({[&](ActorContext& ctx) {
    EXPECT_EQ(ctx.cores(), 3u);
    started = 0;
    ctx.parallel_chunks(0, hits.size(), [&](std::size_t b, std::size_t e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      for (std::size_t i = b; i < e; ++i) hits[i]++;
    });
  }});
  ASSERT_TRUE(table.load(tile).ok());
  ActorMessage m;
  m.output_slot = 0;
  m.output_bytes = 4;
  for (int round = 0; round < 50; ++round) ASSERT_TRUE(tile.actor(m).ok);
  for (auto& h : hits) EXPECT_EQ(h.load(), 50);
  EXPECT_EQ(threads.size(), 3u);
}

TEST_P(TileTest, ParallelLoopsShorterThanTheCoresRunEachChunkOnce) {
  // Loops of 1..5 elements on 4 cores leave helpers without a chunk; a helper
  // that lags behind must not run a chunk of the next loop twice.
  Tile& tile = make(2, 64, 4);
  std::vector<std::atomic<int>> hits(5);
  std::size_t len = 0;
  Table table({[&](ActorContext& ctx) { ctx.parallel_for(0, len, [&](std::size_t i) { hits[i]++; }); }});
  ASSERT_TRUE(table.load(tile).ok());
  ActorMessage m;
  m.output_slot = 0;
  m.output_bytes = 4;
  std::vector<int> expected(hits.size(), 0);
  const int rounds = GetParam() == Transport::kWire ? 1000 : 4000;
  for (int round = 0; round < rounds; ++round) {
    len = 1 + static_cast<std::size_t>(round % 5);
    ASSERT_TRUE(tile.actor(m).ok);
    for (std::size_t i = 0; i < len; ++i) expected[i]++;
  }
  for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), expected[i]) << i;
}

TEST(WireTileTest, EveryCallCrossesAsAFrame) {
  WireTile tile(std::make_unique<LocalTile>(2, 16, 1, 0));
  auto v = u32_bytes({4, 5});
  const std::uint64_t before = tile.frames();
  ASSERT_TRUE(tile.data_node(from_driver(DataTag{1, 0}, 0, v)).ok());
  std::vector<std::byte> out(v.size());
  ASSERT_TRUE(read(tile, 0, DataTag{1, 0}, out));
  EXPECT_EQ(out, v);
  EXPECT_EQ(tile.frames(), before + 2);
}

// The direct transport lets a peer read a slot while its tile rewrites it.
TEST(LocalTileTest, ConcurrentReadersAndClearNeverSeeTornData) {
  LocalTile src(1, 4096, 1);
  std::vector<std::byte> v(4096, std::byte{0x5a});
  std::atomic<bool> stop{false};
  std::atomic<int> reads[2] = {0, 0};  // successful reads of value 1 and of value 2
  std::atomic<int> torn{0};
  std::thread reader([&] {
    std::vector<std::byte> out(4096);
    while (!stop.load()) {
      for (std::uint32_t e = 1; e <= 2; ++e) {
        if (src.read_slot(ReadSlotMessage{0, DataTag{e, 0}, out.size()}, out)) {
          for (auto b : out) torn += b != (e == 1 ? std::byte{0x5a} : std::byte{0xa5});
          reads[e - 1]++;
        }
      }
    }
  });
  // Rewrite the slot until the reader has read each value many times while
  // it was being replaced. Bounded by a wall-clock deadline, not a count of
  // rewrites: on a loaded machine the reader may sleep through millions of
  // them, and a reader that never succeeds must fail the test, not hang it.
  std::vector<std::byte> w(4096, std::byte{0xa5});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < 2000 || ((reads[0].load() < 100 || reads[1].load() < 100) && std::chrono::steady_clock::now() < deadline);
       ++i) {
    ASSERT_TRUE(src.data_node(from_driver(DataTag{1, 0}, 0, v)).ok());
    ASSERT_TRUE(src.data_node(from_driver(DataTag{2, 0}, 0, w)).ok());
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0) << "bytes of a value read while the slot was being replaced";
  EXPECT_GE(reads[0].load(), 100) << "the reader must have read value 1 concurrently with the writer";
  EXPECT_GE(reads[1].load(), 100) << "the reader must have read value 2 concurrently with the writer";
  // A value of another round is another value: the tag alone is not enough.
  EXPECT_FALSE(src.read_slot(ReadSlotMessage{0, DataTag{2, 0, 1}, w.size()}, std::span<std::byte>(w)));
}

// The pieces of a value a worker's transport fetches from a peer in chunks:
// written in order into the slot, published only by the piece that ends it;
// and reads of a range give those bytes of the value, only while the slot
// holds it.
TEST(LocalTileTest, PiecesArePublishedByTheLastAndRangesReadBack) {
  LocalTile tile(2, 64, 1, 0);
  const auto value = u32_bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});  // 40 bytes
  DataNodeMessage m = from_driver(DataTag{1, 3, 0}, 1, {});
  m.bytes = value.size();
  m.payload = {};
  std::vector<std::byte> whole(value.size());
  ASSERT_TRUE(tile.write_piece(m, 0, std::span(value).first(16)).ok());
  EXPECT_FALSE(read(tile, 1, m.tag, whole)) << "published before its last piece";
  ASSERT_TRUE(tile.write_piece(m, 16, std::span(value).subspan(16, 16)).ok());
  EXPECT_FALSE(read(tile, 1, m.tag, whole));
  ASSERT_TRUE(tile.write_piece(m, 32, std::span(value).subspan(32)).ok());
  ASSERT_TRUE(read(tile, 1, m.tag, whole));
  EXPECT_EQ(whole, value);
  // A range: 12 bytes from byte 8, and the rest from byte 36.
  std::vector<std::byte> part(12), tail(4);
  ReadSlotMessage r{1, m.tag, value.size()};
  r.offset = 8;
  r.length = 12;
  ASSERT_TRUE(tile.read_slot(r, part));
  EXPECT_TRUE(std::equal(part.begin(), part.end(), value.begin() + 8));
  r.offset = 36;
  r.length = kWholeValue;
  ASSERT_TRUE(tile.read_slot(r, tail));
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), value.begin() + 36));
  // Ranges past the value, and pieces past it, are refused.
  r.offset = 30;
  r.length = 12;
  EXPECT_FALSE(tile.read_slot(r, part));
  EXPECT_FALSE(tile.write_piece(m, 32, std::span(value).first(9)).ok());
  // A first piece of a new value clears the slot: the old value is gone at once.
  DataNodeMessage next = m;
  next.tag = DataTag{2, 3, 0};
  ASSERT_TRUE(tile.write_piece(next, 0, std::span(value).first(8)).ok());
  EXPECT_FALSE(read(tile, 1, m.tag, whole));
  EXPECT_FALSE(read(tile, 1, next.tag, whole));
  // A piece that does not continue the one before is refused (bytes 8-15
  // skipped), and so is one that comes when no value is being placed: it
  // must not write over a published value an actor may be reading.
  const Status skipped = tile.write_piece(next, 16, std::span(value).subspan(16, 8));
  EXPECT_FALSE(skipped.ok());
  EXPECT_NE(skipped.message().find("the next piece at 8"), std::string::npos) << skipped.message();
  ASSERT_TRUE(tile.write_piece(m, 0, value).ok());
  ASSERT_TRUE(read(tile, 1, m.tag, whole));
  const std::vector<std::byte> zeros(8);
  const Status over = tile.write_piece(m, 8, zeros);
  EXPECT_FALSE(over.ok()) << "a stray piece wrote over a published value";
  EXPECT_NE(over.message().find("no value being placed"), std::string::npos) << over.message();
  ASSERT_TRUE(read(tile, 1, m.tag, whole));
  EXPECT_EQ(whole, value);
}

}  // namespace
}  // namespace redflow::runtime
