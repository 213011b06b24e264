// The tile protocol by value (section 4.5 of Kühbacher et al.): every message
// the driver sends a compute tile and every answer it gets back is plain data
// (ids, sizes, bytes, names), with a byte encoding that a tile in another
// process can speak (the same frames over ZeroMQ, src/net/). Nothing here is
// a pointer into the driver: a transfer names its source by tile id, an actor
// by its index in an actor table sent once per load, fault injection by a
// spec and a seed.
//
// Frame: "RFTP" | u16 version | u8 kind | u8 0 | u32 body length | body,
// little-endian. Decoding refuses anything malformed with a named error
// (wire::Error, src/wire/codec.hpp) and never reads past the bytes it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/status.hpp"
#include "wire/codec.hpp"

namespace redflow::runtime {

using SlotId = std::uint32_t;
// No slot: a 0-byte value on the local fast path needs none (nothing to hold or move).
inline constexpr SlotId kNoSlot = ~SlotId{0};

// 2: kPeerDataNode; 3: actor table names functions by index; 4: kDataNodePiece;
// 5: data nodes carry the checksum the receiver verifies; 6: completions count alike flips
inline constexpr std::uint16_t kTileProtocolVersion = 6;
inline constexpr std::size_t kFrameHeaderBytes = 12;
// Limits a decoder enforces before it allocates: one frame carries at most a
// slot's bytes plus a little, a name or args string at most 1 MiB, an actor
// at most kMaxWireSlots input or output slots.
inline constexpr std::size_t kMaxFrameBytes = (std::size_t{1} << 31) - 1;
inline constexpr std::size_t kMaxWireString = std::size_t{1} << 20;
inline constexpr std::size_t kMaxWireSlots = std::size_t{1} << 16;
inline constexpr std::size_t kMaxWireTableEntries = std::size_t{1} << 24;
inline constexpr std::size_t kMaxWireChecksums = std::size_t{1} << 16;
inline constexpr std::int32_t kFromDriver = -1;  // DataNodeMessage::source_tile: the bytes travel along

// Identifies one value of a data node: data is immutable, so (execution,
// data, round) names it everywhere, in any slot of any tile. The round is the
// voting round of a *-diff replica's result (0 otherwise): a re-execution
// after a failed vote makes a new value, and a copy of the rejected one must
// never pass for it.
struct DataTag {
  std::uint32_t execution = 0;
  DataId data = 0;
  std::uint32_t round = 0;
  friend bool operator==(const DataTag&, const DataTag&) = default;
};

// Place a data node in `slot`: either its bytes travel along (source_tile ==
// kFromDriver), or they come from `source_slot` of tile `source_tile`, which
// must still hold `tag`. Who moves them then is the transport's business.
struct DataNodeMessage {
  DataTag tag;
  SlotId slot = 0;
  std::uint64_t bytes = 0;
  std::int32_t source_tile = kFromDriver;
  SlotId source_slot = 0;
  std::span<const std::byte> payload;
  // The end-to-end check (docs/remote.md): when `checked`, the XXH3-64 the
  // value must hash to, as its producer's completion reported it (or as the
  // sender computed it over the bytes it sends). A tile that gets the value
  // from another process verifies it before it publishes it, and answers
  // DataLoss, holding nothing, when the bytes do not match. A tile in the
  // driver's process never needs to: the bytes did not cross a wire.
  std::uint64_t checksum = 0;
  bool checked = false;
};

// Where a worker fetches a data node's bytes itself, from another worker's
// peer socket (the paper's TLM-to-TLM transfer, src/net/peer_links.hpp),
// instead of the driver relaying them: that socket's endpoint and, with keys,
// its CURVE public key (Z85). Sent with a DataNodeMessage naming the source
// tile and slot, as WireKind::kPeerDataNode; only a worker process's
// transport reads it, never a tile.
struct PeerSource {
  std::string_view endpoint;
  std::string_view public_key;
};

// A large data node the driver sends a worker goes in pieces
// (WireKind::kDataNodePiece), as values between workers and read-backs do:
// `payload` is the `piece` bytes at `offset` of the `bytes`-byte value. The
// tile copies each into the slot as it comes (LocalTile::write_piece), so
// the value is copied once on each side and no message holds all of it; the
// piece that ends the value publishes it. Every piece is answered by a
// status, so the sender can keep a window of them in flight.
struct DataNodePieceMessage {
  DataTag tag;
  SlotId slot = 0;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;
  std::span<const std::byte> piece;
  std::uint64_t checksum = 0;  // of the whole value, as in DataNodeMessage
  bool checked = false;
  // The same value as a DataNodeMessage from main memory (for the tile's checks).
  DataNodeMessage data_node() const { return DataNodeMessage{tag, slot, bytes, kFromDriver, 0, piece, checksum, checked}; }
};

struct ClearSlotMessage {
  SlotId slot = 0;
};

// Copy the value in `slot` back (to the driver, or to a transport relaying
// it to another tile) if the slot still holds `tag`; answered by SlotData.
// `bytes` is the value's size; a read may ask for part of it (a peer
// fetching a large value in chunks): `length` bytes from `offset`.
inline constexpr std::uint64_t kWholeValue = ~std::uint64_t{0};
struct ReadSlotMessage {
  SlotId slot = 0;
  DataTag tag{};
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = kWholeValue;  // kWholeValue: bytes - offset
  // When `checked`, what the whole value must hash to (XXH3-64): a reader
  // that brings the bytes across a process boundary (RemoteTile) verifies
  // them before it returns them. Not sent: the side that receives checks.
  std::uint64_t checksum = 0;
  bool checked = false;
  std::uint64_t range() const { return length == kWholeValue ? bytes - offset : length; }
};

// The read of a transfer's source slot: the whole value, checked as the transfer is.
inline ReadSlotMessage source_read(const DataNodeMessage& m) {
  return ReadSlotMessage{m.source_slot, m.tag, m.bytes, 0, kWholeValue, m.checksum, m.checked};
}

// One actor of the loaded graph as a tile knows it. Its function is an index
// into the table's `functions`: a graph uses few functions, so a tile
// resolves each name in its own Registry once, not once per actor, and keeps
// a pointer per function rather than per actor.
struct ActorTableEntry {
  std::string_view name;
  std::string_view args;
  std::uint32_t function = 0;  // index into ActorTableMessage::functions
  std::uint8_t runs = 1;       // *-same: runs back to back, voted on the tile
  friend bool operator==(const ActorTableEntry&, const ActorTableEntry&) = default;
};
static_assert(sizeof(ActorTableEntry) <= 40);  // the engine keeps one per actor (docs/performance.md, memory per actor)

// Sent once per loaded graph (before its first actor message reaches the
// tile): actor messages name actors by index into `actors`.
struct ActorTableMessage {
  std::uint32_t table = 0;
  std::span<const std::string_view> functions;  // distinct function names
  std::span<const ActorTableEntry> actors;
};

// Fault injection as this tile sees it (--inject): the bit-flip stream's
// probability and seed, whether every output here is flipped, a slow-down
// factor, and after how many actors the tile dies (crash-tile).
inline constexpr std::uint64_t kNeverCrash = ~std::uint64_t{0};
struct FaultConfigMessage {
  double bitflip_probability = 0;
  std::uint64_t seed = 1;
  bool faulty = false;
  double slow_factor = 1;
  std::uint64_t crash_after = kNeverCrash;
  friend bool operator==(const FaultConfigMessage&, const FaultConfigMessage&) = default;
};

struct ActorMessage {
  ActorId actor = 0;                     // index into the actor table
  std::uint32_t execution = 0;
  std::span<const SlotId> input_slots;   // by port
  SlotId output_slot = 0;
  DataTag output_tag;
  std::uint64_t output_bytes = 0;
  bool want_checksum = false;            // redundancy and remote transfers need one; plain local runs do not
  // *-same redundancy (section 5.2): the table's `runs` runs back to back,
  // into output_slot and extra_output_slots, keep a result two runs agree
  // on, and re-run up to max_rounds times on the tile's own when none agree.
  std::span<const SlotId> extra_output_slots;
  std::uint32_t max_rounds = 1;
  // The fault key of this execution (FaultInjector::key).
  std::uint64_t fault_execution = 0;
  std::uint32_t replica = 0;             // *-diff replica number
  std::uint32_t attempt = 0;             // re-execution number
};

// The answer to an actor message. `lost`: the tile is gone (crashed, or its
// transport broke); nothing it held can be read any more.
struct Completion {
  ActorId actor = 0;
  bool ok = true;
  bool lost = false;
  std::string error;        // when !ok: what the actor reported
  bool actor_failed = false;  // when !ok: the actor's own ctx.fail() (else a protocol error)
  std::uint64_t checksum = 0;  // XXH3-64 of the output, when asked for
  double seconds = 0;
  double checksum_seconds = 0;  // of `seconds`, spent computing checksums
  SlotId output_slot = 0;   // the slot holding the kept result (*-same: the one voted for)
  bool agreed = true;       // *-same: some two runs agreed (false: every round disagreed)
  std::uint32_t executions = 0;  // runs performed, all rounds
  std::uint32_t rejected = 0;    // *-same: runs whose result differed from the kept one
  std::uint32_t injected = 0;    // runs whose output fault injection corrupted
  // *-same: rounds in which fault injection flipped the same bit of two runs'
  // outputs, which then agree on a wrong value no vote can catch (a double
  // fault, outside what redundancy promises).
  std::uint32_t alike_flips = 0;
  std::vector<std::uint64_t> unconfirmed;  // !agreed: every run's checksum, for counting later once a result is confirmed
  // !ok: input slots a transfer sent ahead of the actor could not fill (a
  // peer no longer held the value); the tile emptied them and ran nothing.
  // Filled in by the transport (RemoteTile), never sent on the wire.
  std::vector<SlotId> missing_inputs;
};

// --- the wire format -------------------------------------------------------

enum class WireKind : std::uint8_t {
  // driver -> tile
  kDataNode = 1,
  kClearSlot = 2,
  kClearAll = 3,
  kReadSlot = 4,
  kActorTable = 5,
  kFaultConfig = 6,
  kActor = 7,
  kPeerDataNode = 8,  // a data node the worker fetches from a peer worker (PeerSource)
  kDataNodePiece = 9, // a piece of a large data node from main memory (DataNodePieceMessage)
  // tile -> driver
  kCompletion = 64,  // of an actor message
  kStatus = 65,      // of a data node, actor table or fault config message
  kSlotData = 66,    // of a read slot message
  kLost = 67,        // the tile is gone: any request may be answered so
};

// Appends one encoded frame to `out`.
void encode(const DataNodeMessage& m, std::vector<std::byte>& out);
void encode(const DataNodeMessage& m, const PeerSource& from, std::vector<std::byte>& out);  // kPeerDataNode, no payload
void encode(const DataNodePieceMessage& m, std::vector<std::byte>& out);
void encode(const ClearSlotMessage& m, std::vector<std::byte>& out);
void encode_clear_all(std::vector<std::byte>& out);
void encode(const ReadSlotMessage& m, std::vector<std::byte>& out);
void encode(const ActorTableMessage& m, std::vector<std::byte>& out);
void encode(const FaultConfigMessage& m, std::vector<std::byte>& out);
void encode(const ActorMessage& m, std::vector<std::byte>& out);
void encode(const Completion& c, std::vector<std::byte>& out);
void encode(const Status& s, std::vector<std::byte>& out);
void encode_slot_data(bool found, std::span<const std::byte> bytes, std::vector<std::byte>& out);
void encode_lost(std::vector<std::byte>& out);

// A decoded frame of any kind; the messages' spans and views point into
// this object's own storage, so it must outlive them (and not be copied).
struct DecodedFrame {
  WireKind kind = WireKind::kLost;
  DataNodeMessage data_node;
  ClearSlotMessage clear_slot;
  ReadSlotMessage read_slot;
  PeerSource peer;  // kPeerDataNode (with data_node)
  DataNodePieceMessage piece;
  ActorTableMessage table;
  FaultConfigMessage faults;
  ActorMessage actor;
  Completion completion;
  Status status;
  bool found = false;  // kSlotData
  std::span<const std::byte> slot_bytes;  // kSlotData
  wire::Error error = wire::Error::kNone;

  DecodedFrame() = default;
  DecodedFrame(const DecodedFrame&) = delete;
  DecodedFrame& operator=(const DecodedFrame&) = delete;

  // storage
  std::vector<std::byte> bytes;
  // What borrowed spans point into, when the caller hands it over rather
  // than keep it (a remote tile's reply: the message a value came in).
  std::shared_ptr<const void> borrowed_from;
  std::vector<SlotId> slots;
  std::vector<std::string> strings;
  std::vector<std::string_view> functions;
  std::vector<ActorTableEntry> entries;
};

// Whether `frame` is a frame of kind `kind`, from its header alone (a
// transport routing it before anyone decodes it; decode() still checks it all).
bool frame_is(std::span<const std::byte> frame, WireKind kind);

// Decodes exactly one frame. On failure `out.error` names what was wrong and
// the Status (InvalidArgument, "tile protocol: <name>: ...") says where.
// `borrow`: a data node's payload and slot data's bytes point into `frame`
// (which must then outlive `out`) instead of being copied: a large value
// is copied once on each side (into the frame, out of it into a slot).
Status decode(std::span<const std::byte> frame, DecodedFrame& out, bool borrow = false);

}  // namespace redflow::runtime
