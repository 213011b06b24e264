// The caller's side of a tile reached through frames (frame_client.hpp).
#include "runtime/frame_client.hpp"

#include <cstring>

namespace redflow::runtime {

Status data_node_frame(const DataNodeMessage& message, std::span<Tile* const> peers, std::vector<std::byte>& frame) {
  if (message.source_tile == kFromDriver) {
    encode(message, frame);
    return Status::Ok();
  }
  std::vector<std::byte> bytes;
  DataNodeMessage relayed;
  REDFLOW_RETURN_IF_ERROR(read_relayed(message, peers, bytes, relayed));
  encode(relayed, frame);
  return Status::Ok();
}

Status read_relayed(const DataNodeMessage& message, std::span<Tile* const> peers, std::vector<std::byte>& bytes, DataNodeMessage& relayed) {
  if (message.source_tile < 0 || static_cast<std::size_t>(message.source_tile) >= peers.size())
    return Status::InvalidArgument("data node message names source tile " + std::to_string(message.source_tile));
  bytes.resize(message.bytes);
  if (!peers[message.source_tile]->read_slot(source_read(message), bytes))
    return Status::NotFound("source slot " + std::to_string(message.source_slot) + " of tile " + std::to_string(message.source_tile) +
                            " no longer holds data node " + std::to_string(message.tag.data));
  relayed = message;
  relayed.source_tile = kFromDriver;
  relayed.payload = bytes;
  return Status::Ok();
}

Completion completion_of(const Status& sent, const DecodedFrame& reply, ActorId actor, const std::string& who) {
  Completion done;
  done.actor = actor;
  if (!sent.ok()) {
    done.ok = false;
    done.error = sent.message();
    return done;
  }
  if (reply.kind == WireKind::kLost) {
    done.ok = false;
    done.lost = true;
    done.error = who + " is lost";
    return done;
  }
  if (reply.kind != WireKind::kCompletion) {
    done.ok = false;
    done.error = reply.kind == WireKind::kStatus ? reply.status.message() : "tile protocol: an actor message answered with the wrong kind of frame";
    return done;
  }
  return reply.completion;
}

bool slot_data_of(const Status& sent, const DecodedFrame& reply, std::span<std::byte> out) {
  if (!sent.ok() || reply.kind != WireKind::kSlotData || !reply.found || reply.slot_bytes.size() != out.size()) return false;
  if (!out.empty()) std::memcpy(out.data(), reply.slot_bytes.data(), out.size());
  return true;
}

}  // namespace redflow::runtime
