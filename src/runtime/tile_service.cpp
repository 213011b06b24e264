// One frame in, one frame out, on a LocalTile (tile_service.hpp).
#include "runtime/tile_service.hpp"

#include <cstdio>

namespace redflow::runtime {

namespace {

Status arrived_corrupted(const DataNodeMessage& m, std::uint64_t got) {
  char sums[64];
  std::snprintf(sums, sizeof sums, "%016llx, expected %016llx", static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(m.checksum));
  return Status::DataLoss("data node " + std::to_string(m.tag.data) + " (execution " + std::to_string(m.tag.execution) + ", " +
                          std::to_string(m.bytes) + " bytes) for slot " + std::to_string(m.slot) + " arrived with checksum " + sums);
}

}  // namespace

Status TileService::write_checked(const DataNodeMessage& message, std::uint64_t offset, std::span<const std::byte> piece) {
  if (!message.checked) return tile_.write_piece(message, offset, piece);
  auto& state = hashing_[message.slot];
  if (!state) state.reset(XXH3_createState());
  if (offset == 0) XXH3_64bits_reset(state.get());
  XXH3_64bits_update(state.get(), piece.data(), piece.size());
  if (offset + piece.size() == message.bytes) {
    // The piece that would publish the value: its bytes must be the producer's.
    const std::uint64_t got = XXH3_64bits_digest(state.get());
    if (got != message.checksum) {
      tile_.clear_slot(message.slot);  // ends the half-placed value: the slot holds nothing
      return arrived_corrupted(message, got);
    }
  }
  return tile_.write_piece(message, offset, piece);
}

void TileService::serve(std::span<const std::byte> frame_bytes, const Registry* registry, std::vector<std::byte>& reply) {
  reply.clear();
  auto frame = std::make_unique<DecodedFrame>();
  if (Status s = decode(frame_bytes, *frame, /*borrow=*/true); !s.ok()) {
    // Damaged on its way (the envelope around it was read): the sender
    // sends a value again, and a worker that cannot read an actor is lost.
    encode(Status::DataLoss("a frame from the driver arrived unreadable: " + s.message()), reply);
    return;
  }
  switch (frame->kind) {
    case WireKind::kDataNode: {
      const DataNodeMessage& m = frame->data_node;
      if (m.checked && m.source_tile == kFromDriver && m.payload.size() == m.bytes) {
        const std::uint64_t got = XXH3_64bits(m.payload.data(), m.payload.size());
        if (got != m.checksum) {
          tile_.clear_slot(m.slot);  // as a value in pieces: the slot holds nothing, not what it held before
          encode(arrived_corrupted(m, got), reply);
          break;
        }
      }
      encode(tile_.data_node(m), reply);
      break;
    }
    case WireKind::kDataNodePiece: {
      const DataNodePieceMessage& m = frame->piece;
      encode(write_checked(m.data_node(), m.offset, m.piece), reply);  // every piece answered: the sender keeps a window
      break;
    }
    case WireKind::kClearSlot: tile_.clear_slot(frame->clear_slot.slot); encode(Status::Ok(), reply); break;
    case WireKind::kClearAll: tile_.clear_all(); encode(Status::Ok(), reply); break;
    case WireKind::kReadSlot: {
      // Straight from the slot into the reply: one copy.
      const ReadSlotMessage& m = frame->read_slot;
      const bool fits = m.bytes <= tile_.slot_bytes();  // the decoder checked the range lies within bytes
      if (!fits || !tile_.with_slot(m, [&](std::span<const std::byte> value) { encode_slot_data(true, value, reply); })) {
        reply.clear();
        encode_slot_data(false, {}, reply);
      }
      break;
    }
    case WireKind::kPeerDataNode:
      encode(Status::InvalidArgument("tile protocol: a peer data node reached the tile; the worker's transport fetches those"), reply);
      break;
    case WireKind::kActorTable:
      if (registry == nullptr) {
        encode(Status::InvalidArgument("tile protocol: an actor table with no registry to resolve it in"), reply);
      } else {
        const Status s = tile_.load_actors(frame->table, *registry);
        if (s.ok()) table_ = std::move(frame);  // the tile's table points into this frame's strings
        encode(s, reply);
      }
      break;
    case WireKind::kFaultConfig: encode(tile_.configure_faults(frame->faults), reply); break;
    case WireKind::kActor: {
      const Completion done = tile_.actor(frame->actor);
      if (done.lost) {
        encode_lost(reply);
      } else {
        encode(done, reply);
      }
      break;
    }
    default: encode(Status::InvalidArgument("tile protocol: a tile was sent a reply frame"), reply); break;
  }
  if (tile_.lost()) {
    reply.clear();
    encode_lost(reply);
  }
}

void TileService::place(const DataNodeMessage& message, std::uint64_t offset, std::span<const std::byte> piece, std::vector<std::byte>& reply) {
  reply.clear();
  if (tile_.lost()) {
    encode_lost(reply);
    return;
  }
  const Status s = write_checked(message, offset, piece);
  // Only the piece that ends the value answers the driver's data node (and any piece that failed).
  if (!s.ok() || offset + piece.size() == message.bytes) encode(s, reply);
}

}  // namespace redflow::runtime
