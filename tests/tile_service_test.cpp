// The tile service's end-to-end check (tile_service.hpp), fed frames as a
// worker's socket would deliver them: a value whose bytes do not hash to the
// checksum it carries, whole or in pieces, and a frame that arrives unreadable.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "runtime/tile_service.hpp"
#include "test_graphs.hpp"
#include "tile_messages.hpp"

namespace redflow::runtime {
namespace {

using namespace tile_messages;

// The end-to-end check where a value arrives from another process: a data
// node that carries its checksum is placed only if its bytes hash to it,
// whole or in pieces; otherwise the answer is DataLoss and the slot holds
// nothing (an actor behind it finds no value rather than the bad bytes).
Status served_status(TileService& service, const std::vector<std::byte>& frame) {
  std::vector<std::byte> reply;
  service.serve(frame, nullptr, reply);
  DecodedFrame d;
  EXPECT_TRUE(decode(reply, d).ok());
  EXPECT_EQ(d.kind, WireKind::kStatus);
  return d.status;
}

TEST(TileServiceTest, AValueWhoseBytesDoNotMatchItsChecksumIsNeverPlaced) {
  LocalTile tile(2, 64, 1, 0);
  TileService service(tile);
  const auto value = u32_bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});  // 40 bytes
  std::vector<std::byte> back(value.size());
  DataNodeMessage m = from_driver(DataTag{1, 3, 0}, 1, value);
  m.checksum = XXH3_64bits(value.data(), value.size());
  m.checked = true;
  // Whole: right bytes are placed, one flipped bit is refused by name.
  std::vector<std::byte> frame;
  encode(m, frame);
  ASSERT_TRUE(served_status(service, frame).ok());
  ASSERT_TRUE(read(tile, 1, m.tag, back));
  EXPECT_EQ(back, value);
  auto flipped = value;
  flipped[17] ^= std::byte{0x10};
  DataNodeMessage bad = m;
  bad.tag = DataTag{2, 3, 0};
  bad.payload = flipped;
  frame.clear();
  encode(bad, frame);
  const Status refused = served_status(service, frame);
  EXPECT_EQ(refused.code(), Status::Code::kDataLoss) << refused.ToString();
  EXPECT_NE(refused.message().find("data node 3"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("slot 1"), std::string::npos) << refused.message();
  EXPECT_FALSE(read(tile, 1, bad.tag, back)) << "a corrupted value was placed";
  EXPECT_FALSE(read(tile, 1, m.tag, back)) << "the slot still holds the value before the refused one";
  // In pieces: the piece that would publish the value checks it first.
  DataNodePieceMessage piece{DataTag{3, 3, 0}, 0, value.size(), 0, std::span<const std::byte>(flipped).first(24), m.checksum, true};
  frame.clear();
  encode(piece, frame);
  ASSERT_TRUE(served_status(service, frame).ok()) << "a piece before the last is not checked alone";
  piece.offset = 24;
  piece.piece = std::span<const std::byte>(flipped).subspan(24);
  frame.clear();
  encode(piece, frame);
  EXPECT_EQ(served_status(service, frame).code(), Status::Code::kDataLoss);
  EXPECT_FALSE(read(tile, 0, piece.tag, back)) << "a corrupted value was published from its pieces";
  // The same value sent again, right this time, is placed.
  piece.offset = 0;
  piece.piece = std::span<const std::byte>(value).first(24);
  frame.clear();
  encode(piece, frame);
  ASSERT_TRUE(served_status(service, frame).ok());
  piece.offset = 24;
  piece.piece = std::span<const std::byte>(value).subspan(24);
  frame.clear();
  encode(piece, frame);
  ASSERT_TRUE(served_status(service, frame).ok());
  ASSERT_TRUE(read(tile, 0, piece.tag, back));
  EXPECT_EQ(back, value);
  // Fetched from a peer in chunks (TileService::place): checked the same way.
  DataNodeMessage fetched = m;
  fetched.tag = DataTag{4, 3, 0};
  fetched.payload = {};
  std::vector<std::byte> reply;
  service.place(fetched, 0, std::span<const std::byte>(flipped).first(8), reply);
  EXPECT_TRUE(reply.empty()) << "a chunk that does not end the value is not answered";
  service.place(fetched, 8, std::span<const std::byte>(flipped).subspan(8), reply);
  DecodedFrame answer;
  ASSERT_TRUE(decode(reply, answer).ok());
  EXPECT_EQ(answer.status.code(), Status::Code::kDataLoss);
  EXPECT_FALSE(read(tile, 1, fetched.tag, back));
}

// A frame from the driver that arrives unreadable (its first byte flipped on
// the way) never says which slot it was for: the slot keeps what it held,
// a value of an earlier execution, and the actor sent behind the frame, of
// this execution, runs nothing on it and says its input holds no value.
TEST(TileServiceTest, AnActorBehindAnUnreadableValueRunsNothing) {
  LocalTile tile(3, 64, 1, 0);
  TileService service(tile);
  std::atomic<int> runs{0};
  Table table({ActorFunction([&](ActorContext&) { ++runs; })});
  ASSERT_TRUE(table.load(tile).ok());
  const auto value = u32_bytes({1, 2, 3, 4});
  std::vector<std::byte> frame;
  encode(from_driver(DataTag{1, 5, 0}, 0, value), frame);
  ASSERT_TRUE(served_status(service, frame).ok());
  // Execution 2 sends the same data node to the same slot, garbled.
  DataNodeMessage next = from_driver(DataTag{2, 5, 0}, 0, value);
  next.checksum = XXH3_64bits(value.data(), value.size());
  next.checked = true;
  frame.clear();
  encode(next, frame);
  frame[0] ^= std::byte{0xff};
  const Status unreadable = served_status(service, frame);
  EXPECT_EQ(unreadable.code(), Status::Code::kDataLoss) << unreadable.ToString();
  SlotId ins[] = {0};
  ActorMessage m = actor_message(ins, 1, DataTag{2, 6, 0}, 16);
  m.execution = 2;
  frame.clear();
  encode(m, frame);
  std::vector<std::byte> reply;
  service.serve(frame, nullptr, reply);
  DecodedFrame answer;
  ASSERT_TRUE(decode(reply, answer).ok());
  ASSERT_EQ(answer.kind, WireKind::kCompletion);
  EXPECT_FALSE(answer.completion.ok);
  EXPECT_NE(answer.completion.error.find("input slot 0 holds no value of execution 2"), std::string::npos) << answer.completion.error;
  EXPECT_EQ(runs.load(), 0) << "the actor ran on the value of execution 1";
  // Sent again, readable, the value is placed and the actor runs.
  frame.clear();
  encode(next, frame);
  ASSERT_TRUE(served_status(service, frame).ok());
  frame.clear();
  encode(m, frame);
  service.serve(frame, nullptr, reply);
  ASSERT_TRUE(decode(reply, answer).ok());
  EXPECT_TRUE(answer.completion.ok) << answer.completion.error;
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace redflow::runtime
