// A worker's links to its peers (peer_links.hpp).
#include "net/peer_links.hpp"

#include <spdlog/spdlog.h>

#include "net/envelope.hpp"
#include "net/keys.hpp"
#include "net/sockets.hpp"
#include "net/zap_authenticator.hpp"

namespace redflow::net {

using runtime::DecodedFrame;
using runtime::WireKind;

PeerLinks::~PeerLinks() {
  for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("tile worker: refused {} message(s) from {} in all", n, peer);
}

void PeerLinks::poll_items(std::vector<zmq::pollitem_t>& items) {
  if (socket_.listening()) items.push_back({socket_.router().handle(), 0, ZMQ_POLLIN, 0});
  for (auto& [endpoint, socket] : dealers_) items.push_back({socket.handle(), 0, ZMQ_POLLIN, 0});
}

bool PeerLinks::take_request(Request& out) {
  if (!socket_.listening()) return false;
  std::vector<zmq::message_t> parts;
  while (receive_message(socket_.router(), parts)) {
    const std::string route(static_cast<const char*>(parts[0].data()), parts[0].size());
    const auto spans = part_spans(parts, 1);
    Envelope e;
    wire::Error error;
    Status s = decode_envelope(spans, e, error);
    if (s.ok() && e.kind != EnvelopeKind::kRequest) s = Status::InvalidArgument(std::string("a ") + envelope_kind_name(e.kind));
    // Peers only read: anything but one ReadSlot frame is refused before the executor sees it.
    if (s.ok() && !runtime::frame_is(e.body, WireKind::kReadSlot))
      s = Status::InvalidArgument("a request that is not a slot read");
    if (!s.ok()) {
      if (const std::uint64_t n = refusals_.refuse(kPeersName)) spdlog::warn("tile worker: refused a message from a peer: {}{}", s.message(), RefusalLog::times(n));
      continue;
    }
    out.route = route;
    out.id = e.request;
    out.frame.assign(e.body.begin(), e.body.end());
    return true;
  }
  return false;
}

void PeerLinks::reply(const std::string& route, std::uint64_t id, std::vector<std::byte> frame) {
  send_envelope_owned(socket_.router(), EnvelopeKind::kReply, id, std::move(frame), route);
}

Result<zmq::socket_t*> PeerLinks::dealer_for(const std::string& endpoint, const std::string& public_key) {
  if (auto it = dealers_.find(endpoint); it != dealers_.end()) return &it->second;
  auto dealer = socket_.dial(endpoint, public_key);
  if (!dealer.ok()) return dealer.status();
  return &dealers_.emplace(endpoint, std::move(*dealer)).first->second;
}

std::vector<std::byte> PeerLinks::not_found(const Pending& p, const std::string& why) {
  std::vector<std::byte> frame;
  runtime::encode(Status::NotFound("peer fetch of data node " + std::to_string(p.message.tag.data) + " from slot " +
                          std::to_string(p.message.source_slot) + " of tile " + std::to_string(p.message.source_tile) + " at " +
                          p.endpoint + ": " + why),
         frame);
  return frame;
}

bool PeerLinks::ask_next(std::uint64_t id, Pending& p) {
  const runtime::ReadSlotMessage read = chunk_at({p.message.source_slot, p.message.tag, p.message.bytes}, p.asked);
  std::vector<std::byte> frame;
  runtime::encode(read, frame);
  // Every chunk of a fetch carries its id; the source answers them in order.
  if (!send_envelope(*p.dealer, EnvelopeKind::kRequest, id, frame)) return false;
  p.asked += read.length;
  return true;
}

void PeerLinks::fetch(std::uint64_t driver_request, const DecodedFrame& frame) {
  Pending p;
  p.driver_request = driver_request;
  p.message = frame.data_node;
  p.message.payload = {};
  p.endpoint = std::string(frame.peer.endpoint);
  const std::uint64_t id = next_fetch_++;
  auto dealer = dealer_for(p.endpoint, std::string(frame.peer.public_key));
  bool sent = dealer.ok();
  if (sent) {
    p.dealer = *dealer;
    // A 0-byte value is still asked for once: the answer says whether the source holds it.
    for (unsigned i = 0; sent && i < kWindow && (i == 0 || p.asked < p.message.bytes); ++i) sent = ask_next(id, p);
  }
  if (!sent) {
    auto failed = std::make_unique<Fetched>();
    failed->driver_request = driver_request;
    failed->message = p.message;
    failed->answer = not_found(p, dealer.ok() ? "the request could not be sent" : dealer.status().message());
    ready_.push_back(std::move(failed));
    return;
  }
  pending_.emplace(id, std::move(p));
}

bool PeerLinks::take_fetched(Fetched& out) {
  if (!ready_.empty()) {
    out = std::move(*ready_.back());
    ready_.pop_back();
    return true;
  }
  std::vector<zmq::message_t> parts;
  for (auto& [endpoint, socket] : dealers_) {
    while (receive_message(socket, parts)) {
      const auto spans = part_spans(parts);
      Envelope e;
      wire::Error error;
      if (!decode_envelope(spans, e, error).ok() || e.kind != EnvelopeKind::kReply) {
        spdlog::warn("tile worker: dropped a garbled answer from peer {}", endpoint);
        continue;
      }
      auto it = pending_.find(e.request);
      if (it == pending_.end()) continue;  // a chunk of a fetch that failed or was cancelled
      Pending& p = it->second;
      const std::uint64_t want = std::min(kChunkBytes, p.message.bytes - p.received);
      DecodedFrame slot;
      const Status s = decode(e.body, slot, /*borrow=*/true);
      out = Fetched{};
      out.driver_request = p.driver_request;
      out.message = p.message;
      if (!s.ok() || slot.kind != WireKind::kSlotData || !slot.found || slot.slot_bytes.size() != want) {
        out.answer = not_found(p, !s.ok() ? s.message() : slot.kind == WireKind::kLost ? "the source tile is lost" : "the source no longer holds it");
        pending_.erase(it);
        return true;
      }
      out.ok = true;
      out.message = p.message;
      out.offset = p.received;
      // The offset before the move: a tiny message's bytes live inside the message object and move with it.
      out.at = static_cast<std::size_t>(slot.slot_bytes.data() - static_cast<const std::byte*>(parts[1].data()));
      out.size = slot.slot_bytes.size();
      out.payload = std::move(parts[1]);
      p.received += want;
      out.last = p.received == p.message.bytes;
      if (out.last) {
        pending_.erase(it);
      } else if (p.asked < p.message.bytes && !ask_next(it->first, p)) {
        // The next chunk could not be asked for: what came is written but never published.
        out = Fetched{};
        out.driver_request = p.driver_request;
        out.message = p.message;
        out.answer = not_found(p, "the request for the next chunk could not be sent");
        pending_.erase(it);
      }
      return true;
    }
  }
  return false;
}

bool PeerLinks::cancel(std::uint64_t driver_request, Fetched& out) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.driver_request != driver_request) continue;
    out = Fetched{};
    out.driver_request = driver_request;
    out.message = it->second.message;
    out.answer = not_found(it->second, "the driver declared the source lost");
    pending_.erase(it);
    return true;
  }
  return false;
}

}  // namespace redflow::net
