// What the tile hub does on each event (tile_hub.hpp): the tile's side of a
// session event of the peer hub (a HELLO's slots, a WELCOME's tile id and
// keys, a worker lost), a REPLY, a HEARTBEAT's answered-through line, the
// clock's tick that finds missed deadlines, and a worker the engine loses or
// refuses. It only queues what is to be sent.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "net/driver_messages.hpp"
#include "net/peer_socket.hpp"
#include "net/tile_hub.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {

namespace {
PeerHubOptions tile_session_options(const TileServerOptions& options) {
  PeerHubOptions o;
  o.log_name = "tile server";
  o.role = Role::kTile;
  o.version = runtime::kTileProtocolVersion;
  o.heartbeat_timeout_s = options.heartbeat_timeout_s;
  o.capacity = std::max(options.capacity, options.workers);
  o.full_reason =
      "the driver has taken the " + std::to_string(o.capacity) + " remote tile(s) it may have (raise --max-workers for more workers)";
  return o;
}
}  // namespace

TileHub::TileHub(const TileServerOptions& options, std::vector<std::string> peer_keys)
    : options_(options), peer_keys_(std::move(peer_keys)), hub_(tile_session_options(options), *this) {}

TileHub::~TileHub() = default;

TileServerCounts TileHub::counts() const {
  TileServerCounts c = counts_;
  c.refused_messages = hub_.counts().refused_messages;
  c.discarded_late = hub_.counts().discarded_late;
  c.refused_workers = hub_.counts().refused_workers;
  return c;
}

void TileHub::received(const std::string& routing_id, std::size_t bytes) {
  counts_.bytes_received += bytes;
  counts_.largest_message_bytes = std::max<std::uint64_t>(counts_.largest_message_bytes, bytes);
  if (const int w = hub_.find(routing_id); w >= 0) workers_[w].traffic.bytes_received += bytes;
}

void TileHub::on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address,
                         Time now, zmq::message_t* body_part) {
  hub_.on_message(routing_id, parts, address, now, body_part);
}

bool TileHub::message(unsigned w, const Envelope& e, Time now, zmq::message_t* body_part) {
  switch (e.kind) {
    case EnvelopeKind::kReply: on_reply(w, e.request, e.body, now, body_part); return true;
    case EnvelopeKind::kReplies: {
      std::vector<BatchEntry> replies;
      wire::Error error;
      if (Status s = decode_batch(e, replies, error); !s.ok()) {
        hub_.lose(w, "sent a message that cannot be read: " + s.message());
        return true;
      }
      counts_.batched_replies += replies.size();
      for (const BatchEntry& reply : replies) {
        if (hub_.lost(w)) break;  // an entry out of order lost it: the rest is not trusted
        on_reply(w, reply.request, reply.frame, now);
      }
      return true;
    }
    default: return false;
  }
}

// Its id: every request up to it was answered (0 from a worker that does not say).
void TileHub::heartbeat(unsigned w, std::uint64_t request) {
  if (request != 0) check_answered_through(w, request);
}

std::string TileHub::admit(const HelloMessage& hello) {
  if (hello.slots >= options_.slots && hello.slot_bytes >= options_.slot_bytes) return {};
  return "worker has " + std::to_string(hello.slots) + " slots of " + std::to_string(hello.slot_bytes) + " bytes; the driver plans with " +
         std::to_string(options_.slots) + " slots of " + std::to_string(options_.slot_bytes) +
         " bytes (give the worker --slots and --slot-bytes at least those)";
}

void TileHub::welcome(unsigned w, WelcomeMessage& welcome) {
  welcome.tile = options_.first_tile + w;
  welcome.peer_keys = peer_keys_;
}

void TileHub::welcomed(unsigned index, Time now) {
  const PeerHub::Peer& p = hub_.peer(index);
  Worker w;
  w.progress = now;
  // Its peers reach it where the driver sees it (a worker may not know its own routable address).
  if (std::string endpoint = peer_endpoint(p.address, p.hello.peer_port); !endpoint.empty()) w.peer = {std::move(endpoint), p.hello.public_key};
  spdlog::info("tile server: worker '{}' ({} pid {}, {} slots of {} bytes) is tile {}", p.hello.name, p.hello.host, p.hello.pid,
               p.hello.slots, p.hello.slot_bytes, options_.first_tile + index);
  workers_.push_back(std::move(w));
  if (index >= options_.workers && options_.on_join) options_.on_join(index);
}

std::string TileHub::describe(unsigned w, const HelloMessage& hello) const {
  return "worker '" + hello.name + "' (tile " + std::to_string(options_.first_tile + w) + ")";
}

void TileHub::on_reply(unsigned w, std::uint64_t request, std::span<const std::byte> body, Time now, zmq::message_t* whole) {
  auto it = in_flight_.find(request);
  if (it == in_flight_.end() || it->second->worker != w) {
    // A worker answers each of its requests once, in order: a reply to a
    // request it was never sent, or sent twice, is out of order, and the
    // answer it stands for may never come. Lost, its work runs elsewhere.
    hub_.lose(w, "answered request " + std::to_string(request) + ", which it was not sent");
    return;
  }
  std::shared_ptr<Request> r = std::move(it->second);
  in_flight_.erase(it);
  workers_[w].progress = now;
  if (!r->wants_reply) return;
  if (whole != nullptr) {
    // A lone REPLY (a value, or a frame that came alone): kept in the
    // message it came in; its decoder reads the value from there.
    r->reply = ReceivedBytes(std::move(*whole));
  } else {
    if (!BatchWriter::fits(body)) counts_.copied_value_bytes += body.size();
    r->reply = ReceivedBytes(std::vector<std::byte>(body.begin(), body.end()));
  }
  r->done = true;
  answered_.push_back(std::move(r));
}

void TileHub::on_tick(Time now) {
  hub_.on_tick(now);
  check_progress(now);
}

// The oldest request each worker owes (in_flight_ is in the order sent, and
// a worker answers in that order, but for fetches from peers) must be
// answered within its deadline of the worker's last answer. A fetch is not
// judged: it waits for its source, and a worker whose fetch waits for a
// source that owes answers itself is not judged either (the source is).
void TileHub::check_progress(Time now) {
  std::vector<const Request*> oldest(workers_.size(), nullptr);
  std::vector<bool> owes(workers_.size(), false);
  for (const auto& [id, r] : in_flight_) {
    owes[r->worker] = true;
    if (r->fetch_from < 0 && oldest[r->worker] == nullptr) oldest[r->worker] = r.get();
  }
  for (const auto& [id, r] : in_flight_) {
    const auto source = static_cast<unsigned>(r->fetch_from);
    if (r->fetch_from >= 0 && source < workers_.size() && !hub_.lost(source) && owes[source]) workers_[r->worker].progress = now;
  }
  for (unsigned i = 0; i < workers_.size(); ++i) {
    const Request* r = oldest[i];
    if (hub_.lost(i) || r == nullptr || r->budget_s == kUnbounded) continue;
    const double deadline = std::max(floor_s(), r->budget_s);
    const double waited = std::chrono::duration<double>(now - std::max(r->sent_at, workers_[i].progress)).count();
    if (waited > deadline)
      hub_.drop(i, fmt::format("it owes the answer to request {} and answered nothing for {:.1f} s (its deadline: {:.1f} s), though "
                                  "its heartbeats come",
                                  r->id, waited, deadline));
  }
}

// The worker answered every request up to `through`; one still awaited
// there had its answer dropped, or sent under another id.
void TileHub::check_answered_through(unsigned w, std::uint64_t through) {
  for (auto it = in_flight_.begin(); it != in_flight_.end() && it->first <= through; ++it)
    if (it->second->worker == w) {
      hub_.drop(w, "its heartbeat says it answered request " + std::to_string(it->first) +
                       ", but no answer came (dropped on the way, or sent under another request id)");
      return;
    }
}

bool TileHub::lose(unsigned w, const std::string& why) { return hub_.lose(w, why); }

bool TileHub::refuse(unsigned w, const std::string& why) { return hub_.refuse(w, why); }

void TileHub::leave() { hub_.leave(); }

// Every request in flight to it is answered lost.
void TileHub::lost(unsigned index, const std::string&, bool) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second->worker == index) {
      it->second->done = it->second->lost = true;
      answered_.push_back(std::move(it->second));
      it = in_flight_.erase(it);
    } else {
      ++it;
    }
  }
  // Fetches from its peer socket may never be answered now.
  cancel_fetches_from(index);
}

}  // namespace redflow::net
