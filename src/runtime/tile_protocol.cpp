// Encoding and decoding of the tile protocol's frames (tile_protocol.hpp):
// the frame header here, the fields through the shared codec
// (src/wire/codec.hpp), whose reader checks every length against the
// protocol's limits and against the bytes left before anything is allocated
// or copied.
#include "runtime/tile_protocol.hpp"

#include <cstring>
#include <string>

#include "wire/codec.hpp"

namespace redflow::runtime {

namespace {

constexpr char kMagic[4] = {'R', 'F', 'T', 'P'};

// One frame appended to a byte vector: the header on construction, the
// body's length patched in on destruction; fields through wire::Writer.
class FrameWriter : public wire::Writer {
 public:
  FrameWriter(std::vector<std::byte>& out, WireKind kind) : wire::Writer(out), start_(out.size()) {
    raw(kMagic, 4);
    u16(kTileProtocolVersion);
    u8(static_cast<std::uint8_t>(kind));
    u8(0);
    u32(0);  // body length, patched by the destructor
  }
  ~FrameWriter() {
    const auto body = static_cast<std::uint32_t>(out().size() - start_ - kFrameHeaderBytes);
    std::memcpy(out().data() + start_ + 8, &body, 4);
  }
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;
  void slots(std::span<const SlotId> s) {
    u32(static_cast<std::uint32_t>(s.size()));
    for (SlotId v : s) u32(v);
  }
  void tag(const DataTag& t) {
    u32(t.execution);
    u32(t.data);
    u32(t.round);
  }

 private:
  std::size_t start_;
};

// wire::Reader over one frame, with the tile protocol's compound fields.
class FrameReader : public wire::Reader {
 public:
  explicit FrameReader(std::span<const std::byte> in) : wire::Reader(in, "frame") {}
  std::string str(const char* field) { return wire::Reader::str(field, kMaxWireString); }
  void slots(const char* field, std::vector<SlotId>& into) {
    const std::size_t n = count(field, kMaxWireSlots, 4);
    for (std::size_t i = 0; i < n && !failed(); ++i) into.push_back(u32(field));
  }
  DataTag tag(const char* field) {
    DataTag t;
    t.execution = u32(field);
    t.data = u32(field);
    t.round = u32(field);
    return t;
  }
};

constexpr std::size_t kMaxPayload = kMaxFrameBytes - 64;

// The fields a data node and a peer data node share.
void data_node_fields(FrameWriter& w, const DataNodeMessage& m) {
  w.tag(m.tag);
  w.u32(m.slot);
  w.u64(m.bytes);
  w.u32(static_cast<std::uint32_t>(m.source_tile));
  w.u32(m.source_slot);
  w.u64(m.checksum);
  w.boolean(m.checked);
}

}  // namespace

void encode(const DataNodeMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kDataNode);
  data_node_fields(w, m);
  w.bytes(m.payload);
}

void encode(const DataNodeMessage& m, const PeerSource& from, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kPeerDataNode);
  data_node_fields(w, m);
  w.str(from.endpoint);
  w.str(from.public_key);
}

void encode(const DataNodePieceMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kDataNodePiece);
  w.tag(m.tag);
  w.u32(m.slot);
  w.u64(m.bytes);
  w.u64(m.offset);
  w.u64(m.checksum);
  w.boolean(m.checked);
  w.bytes(m.piece);
}

void encode(const ClearSlotMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kClearSlot);
  w.u32(m.slot);
}

void encode_clear_all(std::vector<std::byte>& out) { FrameWriter w(out, WireKind::kClearAll); }

void encode(const ReadSlotMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kReadSlot);
  w.u32(m.slot);
  w.tag(m.tag);
  w.u64(m.bytes);
  w.u64(m.offset);
  w.u64(m.length);
}

void encode(const ActorTableMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kActorTable);
  w.u32(m.table);
  w.u32(static_cast<std::uint32_t>(m.functions.size()));
  for (std::string_view f : m.functions) w.str(f);
  w.u32(static_cast<std::uint32_t>(m.actors.size()));
  for (const ActorTableEntry& e : m.actors) {
    w.str(e.name);
    w.str(e.args);
    w.u32(e.function);
    w.u8(e.runs);
  }
}

void encode(const FaultConfigMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kFaultConfig);
  w.f64(m.bitflip_probability);
  w.u64(m.seed);
  w.boolean(m.faulty);
  w.f64(m.slow_factor);
  w.u64(m.crash_after);
}

void encode(const ActorMessage& m, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kActor);
  w.u32(m.actor);
  w.u32(m.execution);
  w.slots(m.input_slots);
  w.u32(m.output_slot);
  w.tag(m.output_tag);
  w.u64(m.output_bytes);
  w.boolean(m.want_checksum);
  w.slots(m.extra_output_slots);
  w.u32(m.max_rounds);
  w.u64(m.fault_execution);
  w.u32(m.replica);
  w.u32(m.attempt);
}

void encode(const Completion& c, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kCompletion);
  w.u32(c.actor);
  w.boolean(c.ok);
  w.boolean(c.lost);
  w.str(c.error);
  w.boolean(c.actor_failed);
  w.u64(c.checksum);
  w.f64(c.seconds);
  w.f64(c.checksum_seconds);
  w.u32(c.output_slot);
  w.boolean(c.agreed);
  w.u32(c.executions);
  w.u32(c.rejected);
  w.u32(c.injected);
  w.u32(c.alike_flips);
  w.u32(static_cast<std::uint32_t>(c.unconfirmed.size()));
  for (std::uint64_t sum : c.unconfirmed) w.u64(sum);
}

void encode(const Status& s, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kStatus);
  w.u8(static_cast<std::uint8_t>(s.code()));
  w.str(s.message());
}

void encode_slot_data(bool found, std::span<const std::byte> bytes, std::vector<std::byte>& out) {
  FrameWriter w(out, WireKind::kSlotData);
  w.boolean(found);
  w.bytes(bytes);
}

void encode_lost(std::vector<std::byte>& out) { FrameWriter w(out, WireKind::kLost); }

namespace {

Status make_status(std::uint8_t code, std::string message, FrameReader& in) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kOk:
      if (!message.empty()) in.fail(wire::Error::kMalformed, "an OK status with a message");
      return Status::Ok();
    case C::kInvalidArgument: return Status::InvalidArgument(std::move(message));
    case C::kNotFound: return Status::NotFound(std::move(message));
    case C::kIOError: return Status::IOError(std::move(message));
    case C::kInvalidGraph: return Status::InvalidGraph(std::move(message));
    case C::kResourceExhausted: return Status::ResourceExhausted(std::move(message));
    case C::kInternal: return Status::Internal(std::move(message));
    case C::kActorFailed: return Status::ActorFailed(std::move(message));
    case C::kDataLoss: return Status::DataLoss(std::move(message));
    case C::kGaveUp: return Status::GaveUp(std::move(message));
  }
  in.fail(wire::Error::kMalformed, "status code " + std::to_string(code) + " is not a Status::Code");
  return Status::Ok();
}

void decode_body(WireKind kind, FrameReader& in, DecodedFrame& out, bool borrow) {
  // The bytes of a value: views into the frame when borrowing, else copies.
  auto keep = [&](std::span<const std::byte> b) -> std::span<const std::byte> {
    if (borrow) return b;
    out.bytes.assign(b.begin(), b.end());
    return out.bytes;
  };
  switch (kind) {
    case WireKind::kDataNode:
    case WireKind::kPeerDataNode: {
      DataNodeMessage& m = out.data_node;
      m.tag = in.tag("data node tag");
      m.slot = in.u32("data node slot");
      m.bytes = in.u64("data node bytes");
      m.source_tile = static_cast<std::int32_t>(in.u32("data node source tile"));
      m.source_slot = in.u32("data node source slot");
      m.checksum = in.u64("data node checksum");
      m.checked = in.boolean("data node checked");
      if (kind == WireKind::kDataNode) {
        m.payload = keep(in.bytes("data node payload", kMaxPayload));
        if (!in.failed() && m.source_tile < kFromDriver)
          in.fail(wire::Error::kMalformed, "data node source tile " + std::to_string(m.source_tile));
        return;
      }
      out.strings.push_back(in.str("peer endpoint"));
      out.strings.push_back(in.str("peer public key"));
      out.peer = PeerSource{out.strings[out.strings.size() - 2], out.strings.back()};
      if (!in.failed() && m.source_tile < 0) in.fail(wire::Error::kMalformed, "peer data node source tile " + std::to_string(m.source_tile));
      if (!in.failed() && m.bytes > kMaxPayload) in.fail(wire::Error::kOversized, "peer data node of " + std::to_string(m.bytes) + " bytes");
      return;
    }
    case WireKind::kDataNodePiece: {
      DataNodePieceMessage& m = out.piece;
      m.tag = in.tag("data node piece tag");
      m.slot = in.u32("data node piece slot");
      m.bytes = in.u64("data node piece bytes");
      m.offset = in.u64("data node piece offset");
      m.checksum = in.u64("data node piece checksum");
      m.checked = in.boolean("data node piece checked");
      m.piece = keep(in.bytes("data node piece payload", kMaxPayload));
      if (!in.failed() && m.bytes > kMaxPayload) in.fail(wire::Error::kOversized, "data node piece of a " + std::to_string(m.bytes) + "-byte value");
      if (!in.failed() && (m.offset > m.bytes || m.piece.size() > m.bytes - m.offset))
        in.fail(wire::Error::kMalformed, "a piece of " + std::to_string(m.piece.size()) + " bytes at " + std::to_string(m.offset) + " of a " +
                                               std::to_string(m.bytes) + "-byte data node");
      return;
    }
    case WireKind::kClearSlot: out.clear_slot.slot = in.u32("clear slot"); return;
    case WireKind::kClearAll: return;
    case WireKind::kReadSlot:
      out.read_slot.slot = in.u32("read slot");
      out.read_slot.tag = in.tag("read slot tag");
      out.read_slot.bytes = in.u64("read slot bytes");
      out.read_slot.offset = in.u64("read slot offset");
      out.read_slot.length = in.u64("read slot length");
      if (!in.failed() && out.read_slot.bytes > kMaxPayload)
        in.fail(wire::Error::kOversized, "read slot of " + std::to_string(out.read_slot.bytes) + " bytes");
      if (!in.failed() && (out.read_slot.offset > out.read_slot.bytes ||
                           (out.read_slot.length != kWholeValue && out.read_slot.length > out.read_slot.bytes - out.read_slot.offset)))
        in.fail(wire::Error::kMalformed, "read of " + std::to_string(out.read_slot.length) + " bytes at " +
                                               std::to_string(out.read_slot.offset) + " of a " + std::to_string(out.read_slot.bytes) + "-byte value");
      return;
    case WireKind::kActorTable: {
      out.table.table = in.u32("actor table id");
      // A function name is at least its 4-byte length; an entry at least 13
      // bytes (two empty strings, the function index and `runs`).
      const std::size_t f = in.count("actor table functions", kMaxWireTableEntries, 4);
      out.strings.reserve(f);
      for (std::size_t i = 0; i < f && !in.failed(); ++i) out.strings.push_back(in.str("actor function"));
      const std::size_t actors = in.failed() ? 0 : in.count("actor table entries", kMaxWireTableEntries, 13);
      out.strings.reserve(f + 2 * actors);  // no reallocation below: the entries view these strings
      out.functions.assign(out.strings.begin(), out.strings.end());
      out.entries.reserve(actors);
      for (std::size_t i = 0; i < actors && !in.failed(); ++i) {
        out.strings.push_back(in.str("actor name"));
        out.strings.push_back(in.str("actor args"));
        const std::uint32_t function = in.u32("actor function index");
        const std::uint8_t runs = in.u8("actor runs");
        if (!in.failed() && function >= f)
          in.fail(wire::Error::kMalformed, "actor function " + std::to_string(function) + " of a table of " + std::to_string(f) + " functions");
        if (!in.failed() && (runs < 1 || runs > 3)) in.fail(wire::Error::kMalformed, "actor runs " + std::to_string(runs) + " (1 to 3)");
        const std::size_t s = out.strings.size();
        out.entries.push_back(ActorTableEntry{out.strings[s - 2], out.strings[s - 1], function, runs});
      }
      out.table.functions = out.functions;
      out.table.actors = out.entries;
      return;
    }
    case WireKind::kFaultConfig: {
      FaultConfigMessage& f = out.faults;
      f.bitflip_probability = in.f64("bit-flip probability");
      f.seed = in.u64("fault seed");
      f.faulty = in.boolean("faulty tile");
      f.slow_factor = in.f64("slow factor");
      f.crash_after = in.u64("crash after");
      if (!in.failed() && !(f.bitflip_probability >= 0 && f.bitflip_probability <= 1))
        in.fail(wire::Error::kMalformed, "bit-flip probability outside [0, 1]");
      if (!in.failed() && !(f.slow_factor >= 1 && f.slow_factor <= 1e6)) in.fail(wire::Error::kMalformed, "slow factor outside [1, 1e6]");
      return;
    }
    case WireKind::kActor: {
      ActorMessage& m = out.actor;
      m.actor = in.u32("actor id");
      m.execution = in.u32("actor execution");
      in.slots("actor input slots", out.slots);
      const std::size_t inputs = out.slots.size();
      m.output_slot = in.u32("actor output slot");
      m.output_tag = in.tag("actor output tag");
      m.output_bytes = in.u64("actor output bytes");
      m.want_checksum = in.boolean("actor want checksum");
      in.slots("actor extra output slots", out.slots);
      m.input_slots = std::span<const SlotId>(out.slots).first(inputs);
      m.extra_output_slots = std::span<const SlotId>(out.slots).subspan(inputs);
      m.max_rounds = in.u32("actor max rounds");
      m.fault_execution = in.u64("actor fault execution");
      m.replica = in.u32("actor replica");
      m.attempt = in.u32("actor attempt");
      if (!in.failed() && m.output_bytes > kMaxPayload) in.fail(wire::Error::kOversized, "actor output of " + std::to_string(m.output_bytes) + " bytes");
      return;
    }
    case WireKind::kCompletion: {
      Completion& c = out.completion;
      c.actor = in.u32("completion actor");
      c.ok = in.boolean("completion ok");
      c.lost = in.boolean("completion lost");
      c.error = in.str("completion error");
      c.actor_failed = in.boolean("completion actor failed");
      c.checksum = in.u64("completion checksum");
      c.seconds = in.f64("completion seconds");
      c.checksum_seconds = in.f64("completion checksum seconds");
      c.output_slot = in.u32("completion output slot");
      c.agreed = in.boolean("completion agreed");
      c.executions = in.u32("completion executions");
      c.rejected = in.u32("completion rejected");
      c.injected = in.u32("completion injected");
      c.alike_flips = in.u32("completion alike flips");
      const std::size_t n = in.count("completion unconfirmed checksums", kMaxWireChecksums, 8);
      for (std::size_t i = 0; i < n && !in.failed(); ++i) c.unconfirmed.push_back(in.u64("unconfirmed checksum"));
      return;
    }
    case WireKind::kStatus: {
      const std::uint8_t code = in.u8("status code");
      std::string message = in.str("status message");
      if (!in.failed()) out.status = make_status(code, std::move(message), in);
      return;
    }
    case WireKind::kSlotData: {
      out.found = in.boolean("slot data found");
      out.slot_bytes = keep(in.bytes("slot data", kMaxPayload));
      return;
    }
    case WireKind::kLost: return;
  }
  in.fail(wire::Error::kUnknownKind, "kind " + std::to_string(static_cast<unsigned>(kind)));
}

bool known_kind(std::uint8_t k) { return (k >= 1 && k <= 9) || (k >= 64 && k <= 67); }

}  // namespace

bool frame_is(std::span<const std::byte> frame, WireKind kind) {
  return frame.size() >= kFrameHeaderBytes && static_cast<WireKind>(frame[6]) == kind;  // magic 4, version 2, kind
}

Status decode(std::span<const std::byte> frame, DecodedFrame& out, bool borrow) {
  FrameReader in(frame);
  char magic[4] = {0, 0, 0, 0};
  in.take(magic, 4, "magic");
  if (!in.failed() && std::memcmp(magic, kMagic, 4) != 0) in.fail(wire::Error::kBadMagic, "the frame does not start with RFTP");
  const std::uint16_t version = in.u16("version");
  if (!in.failed() && version != kTileProtocolVersion)
    in.fail(wire::Error::kWrongVersion, "version " + std::to_string(version) + ", this build speaks " + std::to_string(kTileProtocolVersion));
  const std::uint8_t kind = in.u8("kind");
  if (!in.failed() && !known_kind(kind)) in.fail(wire::Error::kUnknownKind, "kind " + std::to_string(kind));
  if (in.u8("reserved") != 0 && !in.failed()) in.fail(wire::Error::kMalformed, "reserved header byte is not 0");
  const std::uint32_t body = in.u32("body length");
  if (!in.failed() && body > kMaxFrameBytes - kFrameHeaderBytes) in.fail(wire::Error::kOversized, "body of " + std::to_string(body) + " bytes");
  if (!in.failed() && body < in.left()) in.fail(wire::Error::kTrailingBytes, std::to_string(in.left() - body) + " bytes after the frame");
  if (!in.failed() && body > in.left()) in.fail(wire::Error::kTruncated, "body of " + std::to_string(body) + " bytes, " + std::to_string(in.left()) + " present");
  if (!in.failed()) {
    out.kind = static_cast<WireKind>(kind);
    decode_body(out.kind, in, out, borrow);
  }
  in.finish("the frame");
  out.error = in.error();
  if (!in.failed()) return Status::Ok();
  return wire::status("tile protocol", in.error(), in.what());
}

}  // namespace redflow::runtime
