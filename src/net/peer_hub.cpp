// What the peer hub does on each event (peer_hub.hpp): a HELLO admitted or
// refused, a HEARTBEAT, a BYE or REFUSED, a message it cannot read, one for
// the service, the clock's tick, and a send that failed. It only queues what
// is to be sent.
#include "net/peer_hub.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

namespace redflow::net {

std::chrono::milliseconds heartbeat_interval(double heartbeat_timeout_s) {
  return std::chrono::milliseconds(std::max<long>(10, std::lround(heartbeat_timeout_s * 1000 / 4)));
}

bool silent(HubClock::time_point heard, HubClock::time_point now, double heartbeat_timeout_s) {
  return now - heard > std::chrono::duration<double>(heartbeat_timeout_s);
}

std::string silence_reason(double heartbeat_timeout_s) { return fmt::format("silent for more than {:g} s", heartbeat_timeout_s); }

namespace {
// A routing id is binary; logs show it in hex.
std::string hex_routing_id(const std::string& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}
}  // namespace

PeerHub::PeerHub(PeerHubOptions options, PeerService& service)
    : options_(std::move(options)), service_(service), interval_(heartbeat_interval(options_.heartbeat_timeout_s)) {}

PeerHub::~PeerHub() {
  for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("{}: refused {} message(s) from {} in all", options_.log_name, n, peer);
  for (const auto& [peer, n] : discards_.unlogged())
    spdlog::warn("{}: discarded {} message(s) from {} after it was lost, in all", options_.log_name, n, peer);
}

int PeerHub::find(const std::string& routing_id) const {
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].routing_id == routing_id) return static_cast<int>(p);
  return -1;
}

// A peer that is no worker, as logs name it: by its address (a stranger that
// reconnects gets a new routing id each time, but keeps its address).
std::string PeerHub::stranger(const std::string& routing_id, const std::string& address) const {
  return address.empty() ? "unknown peer " + hex_routing_id(routing_id) : "unknown peer at " + address;
}

void PeerHub::notice(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) {
  notices_.push_back({routing_id, kind, request, std::move(body)});
}

void PeerHub::send(unsigned peer, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) {
  if (!lost(peer)) notice(peers_[peer].routing_id, kind, request, std::move(body));
}

void PeerHub::on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address,
                         Time now, zmq::message_t* body_part) {
  Envelope e;
  wire::Error error;
  const Status read = decode_envelope(parts, e, error);
  const int found = find(routing_id);
  if (found >= 0 && peers_[found].lost) {
    // Declared lost: it stays lost, and nothing it sends counts any more
    // (logged first, then counted: a hung worker that wakes may send many).
    ++counts_.discarded_late;
    const std::string who = "worker '" + peers_[found].hello.name + "'";
    if (const std::uint64_t n = discards_.refuse(who))
      spdlog::warn("{}: discarded a message from {}, which is lost{}", options_.log_name, who, RefusalLog::times(n));
    return;
  }
  if (!read.ok()) {
    ++counts_.refused_messages;
    // From a peer, it may have held what its service waits for (an answer,
    // tokens, results) over a link that stays alive: the peer is lost, so
    // what it had is redone or reported instead of awaited.
    if (found >= 0) return declare_lost(static_cast<unsigned>(found), "sent a message that cannot be read: " + read.message());
    const std::string who = stranger(routing_id, address);
    if (const std::uint64_t n = refusals_.refuse(who))
      spdlog::warn("{}: refused a message from {}: {}{}", options_.log_name, who, read.message(), RefusalLog::times(n));
    return;
  }
  if (found < 0) {
    if (e.kind == EnvelopeKind::kHello) return on_hello(routing_id, e.body, address, now);
    ++counts_.refused_messages;
    const std::string who = stranger(routing_id, address);
    if (const std::uint64_t n = refusals_.refuse(who))
      spdlog::warn("{}: refused a {} from {}{}", options_.log_name, envelope_kind_name(e.kind), who, RefusalLog::times(n));
    return;
  }
  const auto p = static_cast<unsigned>(found);
  peers_[p].heard = now;
  switch (e.kind) {
    case EnvelopeKind::kHeartbeat: return service_.heartbeat(p, e.request);
    case EnvelopeKind::kBye: return declare_lost(p, "said BYE", true);
    case EnvelopeKind::kRefused: {
      RefusedMessage refused;
      const Status s = decode(e.body, refused);
      return declare_lost(p, "it could not read a message from this driver: " + (s.ok() ? refused.reason : s.message()));
    }
    case EnvelopeKind::kHello:
      ++counts_.refused_messages;
      return declare_lost(p, "said HELLO twice");
    default: break;
  }
  if (service_.message(p, e, now, body_part) || peers_[p].lost) return;
  // A message only a driver sends: the peer no longer follows the protocol,
  // and what it says next cannot be trusted.
  ++counts_.refused_messages;
  declare_lost(p, fmt::format("sent a {}, which a welcomed {} never sends", envelope_kind_name(e.kind), role_name(options_.role)));
}

void PeerHub::on_hello(const std::string& routing_id, std::span<const std::byte> body, const std::string& address, Time now) {
  HelloMessage hello;
  if (Status s = decode(body, hello); !s.ok()) {
    ++counts_.refused_messages;
    return refuse_stranger(stranger(routing_id, address), s.message(), routing_id);
  }
  std::string why = role_refusal(hello, options_.role, options_.version);
  if (why.empty()) why = service_.admit(hello);
  if (why.empty() && options_.capacity != 0 && peers_.size() >= options_.capacity) why = options_.full_reason;
  if (!why.empty())
    return refuse_stranger("worker '" + hello.name + "' (" + hello.host + " pid " + std::to_string(hello.pid) + ")", std::move(why), routing_id);
  Peer peer;
  peer.routing_id = routing_id;
  peer.hello = std::move(hello);
  peer.address = address;
  peer.heard = now;
  peers_.push_back(std::move(peer));
  const auto p = static_cast<unsigned>(peers_.size() - 1);
  WelcomeMessage welcome;
  welcome.role = options_.role;
  welcome.tile = p;
  welcome.incarnation = ++incarnations_;
  welcome.heartbeat_interval_ms = static_cast<std::uint32_t>(interval_.count());
  welcome.heartbeat_timeout_ms = static_cast<std::uint32_t>(std::lround(options_.heartbeat_timeout_s * 1000));
  service_.welcome(p, welcome);
  std::vector<std::byte> answer;
  encode(welcome, answer);
  notice(routing_id, EnvelopeKind::kWelcome, 0, std::move(answer));
  service_.welcomed(p, now);
}

// A worker restarted in a loop is summed up, not logged each time.
void PeerHub::refuse_stranger(const std::string& who, std::string why, const std::string& routing_id) {
  ++counts_.refused_workers;
  if (const std::uint64_t n = refusals_.refuse(who)) spdlog::warn("{}: refused {}: {}{}", options_.log_name, who, why, RefusalLog::times(n));
  std::string told = who + ": " + why;
  if (refusal_reasons_.empty() || refusal_reasons_.back() != told) refusal_reasons_.push_back(std::move(told));
  std::vector<std::byte> answer;
  encode(RefusedMessage{std::move(why)}, answer);
  notice(routing_id, EnvelopeKind::kRefused, 0, std::move(answer));
}

void PeerHub::on_tick(Time now) {
  const auto late = std::chrono::duration<double>(options_.heartbeat_timeout_s / 2) + interval_;
  const bool stalled = last_tick_ != Time{} && now - last_tick_ > late;
  last_tick_ = now;
  // At most one tick in a row judges nothing, so steady stalls only slow the judging down.
  const bool judge = !stalled || silence_deferred_;
  silence_deferred_ = !judge;
  if (!judge)
    spdlog::debug("{}: no tick for more than {:g} s (this process did not run); silence is judged at the next", options_.log_name,
                  late.count());
  for (unsigned p = 0; p < peers_.size(); ++p) {
    if (peers_[p].lost) continue;
    if (judge && silent(peers_[p].heard, now, options_.heartbeat_timeout_s)) {
      declare_lost(p, silence_reason(options_.heartbeat_timeout_s));
      continue;
    }
    notice(peers_[p].routing_id, EnvelopeKind::kHeartbeat, service_.beat_request(p));
  }
}

bool PeerHub::lose(unsigned peer, const std::string& why) {
  if (lost(peer)) return false;
  ++counts_.refused_messages;
  declare_lost(peer, why);
  return true;
}

bool PeerHub::drop(unsigned peer, const std::string& why) {
  if (lost(peer)) return false;
  declare_lost(peer, why);
  return true;
}

bool PeerHub::refuse(unsigned peer, const std::string& why) {
  if (lost(peer)) return false;
  ++counts_.refused_workers;
  spdlog::warn("{}: refused {}: {}", options_.log_name, service_.describe(peer, peers_[peer].hello), why);
  std::vector<std::byte> body;
  encode(RefusedMessage{why}, body);
  notice(peers_[peer].routing_id, EnvelopeKind::kRefused, 0, std::move(body));
  declare_lost(peer, "refused: " + why);
  return true;
}

void PeerHub::leave() {
  for (const Peer& p : peers_)
    if (!p.lost) notice(p.routing_id, EnvelopeKind::kBye);
}

void PeerHub::end(const std::string& why) {
  std::vector<std::byte> body;
  encode(RefusedMessage{why}, body);
  for (const Peer& p : peers_)
    if (!p.lost) notice(p.routing_id, EnvelopeKind::kRefused, 0, body);
}

void PeerHub::declare_lost(unsigned peer, const std::string& why, bool left) {
  Peer& p = peers_[peer];
  if (p.lost) return;
  p.lost = true;
  spdlog::warn("{}: {} is lost: {}", options_.log_name, service_.describe(peer, p.hello), why);
  // In case it is only hung: when it wakes, it leaves.
  notice(p.routing_id, EnvelopeKind::kBye);
  service_.lost(peer, why, left);
}

// ROUTER_MANDATORY: the peer's connection is gone (the process died, the
// link broke). Its routing id will not come back (a reconnecting DEALER is a
// new peer), so the peer is lost now, not a heartbeat timeout later.
void PeerHub::unreachable(const std::string& routing_id) {
  if (const int p = find(routing_id); p >= 0) declare_lost(static_cast<unsigned>(p), "its connection dropped");
}

void PeerHub::flush(HubSender& out) {
  // A loss while sending queues a BYE (and what the service says then): sent in the next round.
  for (int round = 0; round < 2 && !notices_.empty(); ++round)
    for (Notice& n : take_notices())
      if (!out.send_owned(n.routing_id, n.kind, n.request, std::move(n.body))) unreachable(n.routing_id);
}

}  // namespace redflow::net
