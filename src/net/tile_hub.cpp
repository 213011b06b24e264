// What the tile hub does on each event (tile_hub.hpp): a HELLO, a REPLY, a
// HEARTBEAT, a BYE, a message it cannot read, the clock's tick that sends
// heartbeats and finds silent workers and missed deadlines, and a worker the
// engine loses or refuses. It only queues what is to be sent.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "net/driver_messages.hpp"
#include "net/tile_hub.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {

namespace {
// A routing id is binary; logs show it in hex.
std::string printable(const std::string& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// A peer that is no worker, as logs name it: by its address (a stranger that
// reconnects gets a new routing id each time, but keeps its address).
std::string unknown_peer(const std::string& routing_id, const std::string& address) {
  return address.empty() ? "unknown peer " + printable(routing_id) : "unknown peer at " + address;
}
}  // namespace

TileHub::TileHub(const TileServerOptions& options, std::vector<std::string> peer_keys)
    : options_(options),
      interval_(std::max<long>(10, std::lround(options.heartbeat_timeout_s * 1000 / 4))),
      peer_keys_(std::move(peer_keys)) {}

TileHub::~TileHub() {
  for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("tile server: refused {} message(s) from {} in all", n, peer);
  for (const auto& [peer, n] : discards_.unlogged()) spdlog::warn("tile server: discarded {} message(s) from {} after it was lost, in all", n, peer);
}

TileHub::Worker* TileHub::find_worker(const std::string& routing_id, unsigned* index) {
  for (unsigned w = 0; w < workers_.size(); ++w)
    if (workers_[w].routing_id == routing_id) {
      if (index != nullptr) *index = w;
      return &workers_[w];
    }
  return nullptr;
}

void TileHub::notice(const std::string& routing_id, EnvelopeKind kind, std::vector<std::byte> body) {
  notices_.push_back({routing_id, kind, std::move(body)});
}

void TileHub::received(const std::string& routing_id, std::size_t bytes) {
  counts_.bytes_received += bytes;
  counts_.largest_message_bytes = std::max<std::uint64_t>(counts_.largest_message_bytes, bytes);
  if (Worker* w = find_worker(routing_id)) w->traffic.bytes_received += bytes;
}

void TileHub::on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address,
                         Time now, zmq::message_t* body_part) {
  Envelope e;
  wire::Error error;
  const Status read = decode_envelope(parts, e, error);
  unsigned index = 0;
  Worker* w = find_worker(routing_id, &index);
  if (w != nullptr && w->lost) {
    // Declared lost: it stays lost, and nothing it sends counts any more
    // (logged first, then counted: a hung worker that wakes may send many).
    ++counts_.discarded_late;
    if (const std::uint64_t n = discards_.refuse("worker '" + w->hello.name + "'"))
      spdlog::warn("tile server: discarded a message from worker '{}', which is lost{}", w->hello.name, RefusalLog::times(n));
    return;
  }
  if (!read.ok()) {
    ++counts_.refused_messages;
    if (w != nullptr) return unreadable(index, read);
    const std::string peer = unknown_peer(routing_id, address);
    if (const std::uint64_t n = refusals_.refuse(peer))
      spdlog::warn("tile server: refused a message from {}: {}{}", peer, read.message(), RefusalLog::times(n));
    return;
  }
  if (w != nullptr) w->heard = now;
  switch (e.kind) {
    case EnvelopeKind::kHello:
      if (w != nullptr) {
        ++counts_.refused_messages;
        return declare_lost(index, "said HELLO twice");
      } else {
        on_hello(routing_id, e.body, address, now);
      }
      return;
    case EnvelopeKind::kHeartbeat:
      // Its id: every request up to it was answered (0 from a worker that does not say).
      if (w != nullptr && e.request != 0) check_answered_through(index, e.request);
      return;
    case EnvelopeKind::kReply:
      if (w != nullptr) {
        on_reply(index, e.request, e.body, now, body_part);
        return;
      }
      break;
    case EnvelopeKind::kReplies: {
      if (w == nullptr) break;
      std::vector<BatchEntry> replies;
      if (Status s = decode_batch(e, replies, error); !s.ok()) {
        ++counts_.refused_messages;
        return unreadable(index, s);
      }
      counts_.batched_replies += replies.size();
      for (const BatchEntry& reply : replies) {
        if (workers_[index].lost) break;  // an entry out of order lost it: the rest is not trusted
        on_reply(index, reply.request, reply.frame, now);
      }
      return;
    }
    case EnvelopeKind::kBye:
      if (w != nullptr) {
        declare_lost(index, "said BYE");
        return;
      }
      break;
    case EnvelopeKind::kRefused:
      if (w != nullptr) {
        RefusedMessage refused;
        const Status s = decode(e.body, refused);
        declare_lost(index, "it could not read a message from this driver: " + (s.ok() ? refused.reason : s.message()));
        return;
      }
      break;
    default: break;
  }
  ++counts_.refused_messages;
  // From a welcomed worker, a message only a driver sends: it no longer
  // follows the protocol, and what it answers next cannot be trusted.
  if (w != nullptr) return declare_lost(index, std::string("sent a ") + envelope_kind_name(e.kind) + ", which a welcomed worker never sends");
  const std::string peer = unknown_peer(routing_id, address);
  if (const std::uint64_t n = refusals_.refuse(peer))
    spdlog::warn("tile server: refused a {} from {}{}", envelope_kind_name(e.kind), peer, RefusalLog::times(n));
}

void TileHub::on_hello(const std::string& routing_id, std::span<const std::byte> body, const std::string& address, Time now) {
  HelloMessage hello;
  std::vector<std::byte> answer;
  Status s = decode(body, hello);
  std::string why;  // what the worker lacks, told to it (REFUSED) and logged here
  if (!s.ok()) {
    ++counts_.refused_messages;
    why = s.message();
  } else if (why = role_refusal(hello, Role::kTile, runtime::kTileProtocolVersion); !why.empty()) {
  } else if (hello.slots < options_.slots || hello.slot_bytes < options_.slot_bytes) {
    why = "worker has " + std::to_string(hello.slots) + " slots of " + std::to_string(hello.slot_bytes) + " bytes; the driver plans with " +
          std::to_string(options_.slots) + " slots of " + std::to_string(options_.slot_bytes) +
          " bytes (give the worker --slots and --slot-bytes at least those)";
  } else if (workers_.size() >= capacity()) {
    why = "the driver has taken the " + std::to_string(capacity()) + " remote tile(s) it may have (raise --max-workers for more workers)";
  } else {
    Worker w;
    w.routing_id = routing_id;
    w.hello = std::move(hello);
    w.heard = w.progress = now;
    // Its peers reach it where the driver sees it (a worker may not know its own routable address).
    if (w.hello.peer_port != 0 && !address.empty())
      w.peer = {"tcp://" + (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" + std::to_string(w.hello.peer_port),
                w.hello.public_key};
    WelcomeMessage welcome;
    welcome.role = Role::kTile;
    welcome.tile = options_.first_tile + static_cast<unsigned>(workers_.size());
    welcome.incarnation = ++incarnations_;
    welcome.heartbeat_interval_ms = static_cast<std::uint32_t>(interval_.count());
    welcome.heartbeat_timeout_ms = static_cast<std::uint32_t>(options_.heartbeat_timeout_s * 1000);
    welcome.peer_keys = peer_keys_;
    encode(welcome, answer);
    spdlog::info("tile server: worker '{}' ({} pid {}, {} slots of {} bytes) is tile {}", w.hello.name, w.hello.host, w.hello.pid,
                 w.hello.slots, w.hello.slot_bytes, welcome.tile);
    workers_.push_back(std::move(w));
    const unsigned index = static_cast<unsigned>(workers_.size() - 1);
    if (index >= options_.workers && options_.on_join) options_.on_join(index);
    notice(routing_id, EnvelopeKind::kWelcome, std::move(answer));
    return;
  }
  ++counts_.refused_workers;
  // A worker restarted in a loop is summed up, not logged each time.
  const std::string peer =
      s.ok() ? "worker '" + hello.name + "' (" + hello.host + " pid " + std::to_string(hello.pid) + ")" : unknown_peer(routing_id, address);
  if (const std::uint64_t n = refusals_.refuse(peer)) spdlog::warn("tile server: refused {}: {}{}", peer, why, RefusalLog::times(n));
  encode(RefusedMessage{std::move(why)}, answer);
  notice(routing_id, EnvelopeKind::kRefused, std::move(answer));
}

void TileHub::on_reply(unsigned w, std::uint64_t request, std::span<const std::byte> body, Time now, zmq::message_t* whole) {
  auto it = in_flight_.find(request);
  if (it == in_flight_.end() || it->second->worker != w) {
    // A worker answers each of its requests once, in order: a reply to a
    // request it was never sent, or sent twice, is out of order, and the
    // answer it stands for may never come. Lost, its work runs elsewhere.
    ++counts_.refused_messages;
    declare_lost(w, "answered request " + std::to_string(request) + ", which it was not sent");
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
  const auto timeout = std::chrono::duration<double>(options_.heartbeat_timeout_s);
  for (unsigned i = 0; i < workers_.size(); ++i) {
    Worker& w = workers_[i];
    if (w.lost) continue;
    if (now - w.heard > timeout) {
      declare_lost(i, "silent for more than " + std::to_string(options_.heartbeat_timeout_s) + " s");
      continue;
    }
    notice(w.routing_id, EnvelopeKind::kHeartbeat);
  }
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
    if (r->fetch_from >= 0 && source < workers_.size() && !workers_[source].lost && owes[source]) workers_[r->worker].progress = now;
  }
  for (unsigned i = 0; i < workers_.size(); ++i) {
    const Request* r = oldest[i];
    if (workers_[i].lost || r == nullptr || r->budget_s == kUnbounded) continue;
    const double deadline = std::max(floor_s(), r->budget_s);
    const double waited = std::chrono::duration<double>(now - std::max(r->sent_at, workers_[i].progress)).count();
    if (waited > deadline)
      declare_lost(i, fmt::format("it owes the answer to request {} and answered nothing for {:.1f} s (its deadline: {:.1f} s), though "
                                  "its heartbeats come",
                                  r->id, waited, deadline));
  }
}

// The worker answered every request up to `through`; one still awaited
// there had its answer dropped, or sent under another id.
void TileHub::check_answered_through(unsigned w, std::uint64_t through) {
  for (auto it = in_flight_.begin(); it != in_flight_.end() && it->first <= through; ++it)
    if (it->second->worker == w)
      return declare_lost(w, "its heartbeat says it answered request " + std::to_string(it->first) +
                                 ", but no answer came (dropped on the way, or sent under another request id)");
}

// A worker's message that cannot be read may have held an answer a runner
// waits for, over a link that stays alive (its heartbeats come on): the
// worker is lost, so what it had is re-run elsewhere instead of awaited.
void TileHub::unreadable(unsigned index, const Status& why) {
  declare_lost(index, "sent a message that cannot be read: " + why.message());
}

bool TileHub::lose(unsigned index, const std::string& why) {
  if (lost(index)) return false;
  ++counts_.refused_messages;
  declare_lost(index, why);
  return true;
}

bool TileHub::refuse(unsigned index, const std::string& why) {
  if (lost(index)) return false;
  const Worker& w = workers_[index];
  ++counts_.refused_workers;
  spdlog::warn("tile server: refused worker '{}' ({} pid {}, tile {}): {}", w.hello.name, w.hello.host, w.hello.pid,
               options_.first_tile + index, why);
  std::vector<std::byte> body;
  encode(RefusedMessage{why}, body);
  notice(w.routing_id, EnvelopeKind::kRefused, std::move(body));
  declare_lost(index, "refused: " + why);
  return true;
}

void TileHub::leave() {
  for (const Worker& w : workers_)
    if (!w.lost) notice(w.routing_id, EnvelopeKind::kBye);
}

void TileHub::declare_lost(unsigned index, const std::string& why) {
  Worker& w = workers_[index];
  if (w.lost) return;
  w.lost = true;
  spdlog::warn("tile server: worker '{}' (tile {}) is lost: {}", w.hello.name, options_.first_tile + index, why);
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
  // In case it is only hung: when it wakes, it leaves.
  notice(w.routing_id, EnvelopeKind::kBye);
}

}  // namespace redflow::net
