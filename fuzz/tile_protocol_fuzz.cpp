// libFuzzer target: the tile protocol's decoder (runtime/tile_protocol.hpp),
// the bytes a worker process receives over the wire. Any input
// either decodes, and then re-encodes to the very same bytes, or is refused
// with a named wire::Error in a "tile protocol: <name>" message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "runtime/tile_protocol.hpp"

namespace {

using namespace redflow::runtime;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "tile_protocol_fuzz: %s\n", what);
  std::abort();
}

// Encodes a decoded frame again, as the peer would have sent it.
std::vector<std::byte> reencode(const DecodedFrame& d) {
  std::vector<std::byte> out;
  switch (d.kind) {
    case WireKind::kDataNode: encode(d.data_node, out); break;
    case WireKind::kPeerDataNode: encode(d.data_node, d.peer, out); break;
    case WireKind::kDataNodePiece: encode(d.piece, out); break;
    case WireKind::kClearSlot: encode(d.clear_slot, out); break;
    case WireKind::kClearAll: encode_clear_all(out); break;
    case WireKind::kReadSlot: encode(d.read_slot, out); break;
    case WireKind::kActorTable: encode(d.table, out); break;
    case WireKind::kFaultConfig: encode(d.faults, out); break;
    case WireKind::kActor: encode(d.actor, out); break;
    case WireKind::kCompletion: encode(d.completion, out); break;
    case WireKind::kStatus: encode(d.status, out); break;
    case WireKind::kSlotData: encode_slot_data(d.found, d.slot_bytes, out); break;
    case WireKind::kLost: encode_lost(out); break;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  DecodedFrame frame;
  const redflow::Status s = decode(bytes, frame);
  if (!s.ok()) {
    if (frame.error == redflow::wire::Error::kNone) fail("a refusal without a named error");
    if (s.message().rfind(std::string("tile protocol: ") + redflow::wire::error_name(frame.error), 0) != 0) fail("a refusal whose message does not name it");
    return 0;
  }
  if (frame.error != redflow::wire::Error::kNone) fail("an accepted frame with an error set");
  // NaN doubles re-encode bit for bit too (the encoder copies the bits), so the round trip is exact.
  const std::vector<std::byte> again = reencode(frame);
  if (again.size() != size || (size != 0 && std::memcmp(again.data(), data, size) != 0)) fail("an accepted frame does not re-encode to its bytes");
  return 0;
}
