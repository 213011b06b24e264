// A local tile behind the tile protocol's encoding and a queue (wire_tile.hpp).
#include "runtime/wire_tile.hpp"

#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <utility>

#include "runtime/frame_client.hpp"

namespace redflow::runtime {

WireTile::WireTile(std::unique_ptr<LocalTile> tile)
    : tile_(std::move(tile)), service_(*tile_), index_(tile_->index()) {
  thread_ = std::thread([this] { executor(); });
}

WireTile::~WireTile() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void WireTile::post(std::vector<std::byte> frame) {
  auto request = std::make_shared<Request>();
  request->frame = std::move(frame);
  request->wants_reply = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (exited_) return;  // a lost tile has nothing to clear
    queue_.push_back(std::move(request));
  }
  work_.notify_one();
}

Status WireTile::call(std::vector<std::byte> frame, DecodedFrame& out, const Registry* registry) {
  auto request = std::make_shared<Request>();
  request->frame = std::move(frame);
  request->registry = registry;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (exited_) {
      encode_lost(request->reply);
    } else {
      queue_.push_back(request);
      work_.notify_one();
      answered_.wait(lock, [&] { return request->done; });
    }
  }
  Status s = decode(request->reply, out);
  if (s.ok() && out.kind == WireKind::kLost) lost_.store(true, std::memory_order_release);
  return s;
}

void WireTile::answer(Request& request, std::vector<std::byte> reply) {
  frames_.fetch_add(1, std::memory_order_relaxed);
  if (!request.wants_reply) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request.reply = std::move(reply);
    request.done = true;
  }
  answered_.notify_all();
}

void WireTile::executor() {
  for (;;) {
    std::shared_ptr<Request> request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    handle(*request);
    if (tile_->lost()) {
      // The tile died: its executor answers `lost` to what is queued and stops.
      std::deque<std::shared_ptr<Request>> rest;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        exited_ = true;
        rest.swap(queue_);
      }
      lost_.store(true, std::memory_order_release);
      for (auto& r : rest) {
        std::vector<std::byte> reply;
        encode_lost(reply);
        answer(*r, std::move(reply));
      }
      return;
    }
  }
}

// Runs on the executor thread only: the service decodes, calls the tile and encodes the answer.
void WireTile::handle(Request& request) {
  std::vector<std::byte> reply;
  service_.serve(request.frame, request.registry, reply);
  answer(request, std::move(reply));
}

Status WireTile::status_reply(const DecodedFrame& reply) const {
  if (reply.kind == WireKind::kLost) return Status::Internal("tile " + std::to_string(index_) + " is lost");
  if (reply.kind != WireKind::kStatus) return Status::Internal("tile protocol: tile " + std::to_string(index_) + " answered with the wrong kind of frame");
  return reply.status;
}

Status WireTile::load_actors(const ActorTableMessage& table, const Registry& registry) {
  std::vector<std::byte> frame;
  encode(table, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply, &registry));
  return status_reply(reply);
}

Status WireTile::configure_faults(const FaultConfigMessage& faults) {
  std::vector<std::byte> frame;
  encode(faults, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

Status WireTile::data_node(const DataNodeMessage& message) {
  std::vector<std::byte> frame;
  REDFLOW_RETURN_IF_ERROR(data_node_frame(message, peers_, frame));  // relayed through the source's executor
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

void WireTile::clear_slot(SlotId slot) {
  std::vector<std::byte> frame;
  encode(ClearSlotMessage{slot}, frame);
  post(std::move(frame));
}

void WireTile::clear_all() {
  std::vector<std::byte> frame;
  encode_clear_all(frame);
  post(std::move(frame));
}

Completion WireTile::actor(const ActorMessage& message) {
  std::vector<std::byte> frame;
  encode(message, frame);
  DecodedFrame reply;
  const Status sent = call(std::move(frame), reply);
  return completion_of(sent, reply, message.actor, "tile " + std::to_string(index_));
}

bool WireTile::read_slot(const ReadSlotMessage& message, std::span<std::byte> out) {
  if (out.size() != message.bytes) return false;
  std::vector<std::byte> frame;
  encode(message, frame);
  DecodedFrame reply;
  const Status sent = call(std::move(frame), reply);
  if (!slot_data_of(sent, reply, out)) return false;
  if (message.checked && message.offset == 0 && message.range() == message.bytes &&
      XXH3_64bits(out.data(), out.size()) != message.checksum) {
    // Nothing crossed a wire: a checksum the engine handed along is wrong.
    spdlog::error("tile {}: data node {} read back does not hash to the checksum its completion reported", index_, message.tag.data);
    return false;
  }
  return true;
}

}  // namespace redflow::runtime
