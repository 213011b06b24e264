// A tile in a worker process, reached through the tile server (remote_tile.hpp).
#include "net/remote_tile.hpp"

#include <cstring>

namespace redflow::net {

using namespace redflow::runtime;

RemoteTile::RemoteTile(TileServer& server, unsigned worker, unsigned index)
    : server_(server), worker_(worker), index_(index) {
  const HelloMessage hello = server.hello(worker);
  slot_bytes_ = hello.slot_bytes;
  name_ = hello.name;
}

bool RemoteTile::lost() const { return lost_.load(std::memory_order_acquire) || server_.lost(worker_); }

Status RemoteTile::call(std::vector<std::byte> frame, DecodedFrame& out) {
  std::vector<std::byte> reply;
  if (!server_.call(worker_, std::move(frame), reply)) {
    lost_.store(true, std::memory_order_release);
    reply.clear();
    encode_lost(reply);
    return decode(reply, out);
  }
  Status s = decode(reply, out);
  if (!s.ok()) return Status::Internal("worker '" + name_ + "' (tile " + std::to_string(index_) + ") answered a garbled frame: " + s.message());
  if (out.kind == WireKind::kLost) lost_.store(true, std::memory_order_release);
  return s;
}

Status RemoteTile::status_reply(const DecodedFrame& reply) const {
  if (reply.kind == WireKind::kLost) return Status::Internal("tile " + std::to_string(index_) + " (worker '" + name_ + "') is lost");
  if (reply.kind != WireKind::kStatus)
    return Status::Internal("tile protocol: worker '" + name_ + "' answered with the wrong kind of frame");
  if (reply.status.ok()) return reply.status;
  const std::string what = "worker '" + name_ + "' (tile " + std::to_string(index_) + "): " + reply.status.message();
  switch (reply.status.code()) {
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(what);
    case Status::Code::kNotFound: return Status::NotFound(what);
    case Status::Code::kInvalidGraph: return Status::InvalidGraph(what);
    case Status::Code::kResourceExhausted: return Status::ResourceExhausted(what);
    default: return Status::Internal(what);
  }
}

Status RemoteTile::load_actors(const ActorTableMessage& table, const Registry&) {
  std::vector<std::byte> frame;
  encode(table, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

Status RemoteTile::configure_faults(const FaultConfigMessage& faults) {
  std::vector<std::byte> frame;
  encode(faults, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

Status RemoteTile::data_node(const DataNodeMessage& message) {
  std::vector<std::byte> frame;
  if (message.source_tile == kFromDriver) {
    encode(message, frame);
  } else {
    // Relayed through the driver: the source answers a read, the bytes travel along.
    if (message.source_tile < 0 || static_cast<std::size_t>(message.source_tile) >= peers_.size())
      return Status::InvalidArgument("data node message names source tile " + std::to_string(message.source_tile));
    std::vector<std::byte> bytes(message.bytes);
    if (!peers_[message.source_tile]->read_slot(ReadSlotMessage{message.source_slot, message.tag, message.bytes}, bytes))
      return Status::NotFound("source slot " + std::to_string(message.source_slot) + " of tile " + std::to_string(message.source_tile) +
                              " no longer holds data node " + std::to_string(message.tag.data));
    DataNodeMessage relayed = message;
    relayed.source_tile = kFromDriver;
    relayed.payload = bytes;
    encode(relayed, frame);
  }
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

// Clears need no answer: the worker handles frames in order, so a later
// message never finds the slot still full.
void RemoteTile::clear_slot(SlotId slot) {
  std::vector<std::byte> frame;
  encode(ClearSlotMessage{slot}, frame);
  server_.post(worker_, std::move(frame));
}

void RemoteTile::clear_all() {
  std::vector<std::byte> frame;
  encode_clear_all(frame);
  server_.post(worker_, std::move(frame));
}

Completion RemoteTile::actor(const ActorMessage& message) {
  std::vector<std::byte> frame;
  encode(message, frame);
  DecodedFrame reply;
  Completion done;
  done.actor = message.actor;
  if (Status s = call(std::move(frame), reply); !s.ok()) {
    done.ok = false;
    done.error = s.message();
    return done;
  }
  if (reply.kind == WireKind::kLost) {
    done.ok = false;
    done.lost = true;
    done.error = "tile " + std::to_string(index_) + " (worker '" + name_ + "') is lost";
    return done;
  }
  if (reply.kind != WireKind::kCompletion) {
    done.ok = false;
    done.error = reply.kind == WireKind::kStatus ? reply.status.message() : "tile protocol: an actor message answered with the wrong kind of frame";
    return done;
  }
  return std::move(reply.completion);
}

bool RemoteTile::read_slot(const ReadSlotMessage& message, std::span<std::byte> out) {
  if (out.size() != message.bytes) return false;
  std::vector<std::byte> frame;
  encode(message, frame);
  DecodedFrame reply;
  if (!call(std::move(frame), reply).ok() || reply.kind != WireKind::kSlotData || !reply.found) return false;
  if (reply.slot_bytes.size() != out.size()) return false;
  if (!out.empty()) std::memcpy(out.data(), reply.slot_bytes.data(), out.size());
  return true;
}

}  // namespace redflow::net
