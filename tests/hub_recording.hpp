// Driving a driver's hub (src/net/peer_hub.hpp and its services) without a
// socket: a HubSender that records what the hub sends, and the parts of an
// envelope as a socket would hand them over. Shared by the tests of the peer
// hub, the tile hub, the stream node service and the SPITS dial-in service.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/peer_hub.hpp"
#include "net/worker_messages.hpp"

namespace redflow::testing {

// One envelope the hub sent.
struct HubSent {
  std::string to;
  net::EnvelopeKind kind = net::EnvelopeKind::kHeartbeat;
  std::uint64_t request = 0;
  std::vector<std::byte> body;
};

// Records what the hub sends; a routing id in `unreachable` cannot be sent
// to (its connection dropped, as ZeroMQ's ROUTER_MANDATORY says).
class RecordingSender final : public net::HubSender {
 public:
  bool send(const std::string& to, net::EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) override {
    return record(to, kind, request, std::vector<std::byte>(body.begin(), body.end()));
  }
  bool send_owned(const std::string& to, net::EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) override {
    return record(to, kind, request, std::move(body));
  }
  std::vector<HubSent> take() { return std::exchange(sent_, {}); }
  std::set<std::string> unreachable;

 private:
  bool record(const std::string& to, net::EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) {
    if (unreachable.count(to) != 0) return false;
    sent_.push_back({to, kind, request, std::move(body)});
    return true;
  }
  std::vector<HubSent> sent_;
};

// What `sent` holds of `kind` for `to`.
inline std::vector<HubSent> of_kind(const std::vector<HubSent>& sent, const std::string& to, net::EnvelopeKind kind) {
  std::vector<HubSent> out;
  for (const HubSent& s : sent)
    if (s.to == to && s.kind == kind) out.push_back(s);
  return out;
}

// An envelope's parts as a ROUTER hands them over (after the routing id).
struct EnvelopeParts {
  std::vector<std::byte> header, body;
  std::vector<std::span<const std::byte>> parts;
  EnvelopeParts(net::EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> b) : body(std::move(b)) {
    net::encode_header(kind, request, header);
    parts.emplace_back(header);
    if (net::envelope_has_body(kind)) parts.emplace_back(body);
  }
};

// The reason of the one REFUSED in `sent` to `to`; empty if there is not exactly one.
inline std::string refusal_to(const std::vector<HubSent>& sent, const std::string& to) {
  const std::vector<HubSent> refused = of_kind(sent, to, net::EnvelopeKind::kRefused);
  net::RefusedMessage m;
  if (refused.size() != 1 || !net::decode(refused[0].body, m).ok()) return {};
  return m.reason;
}

// A HELLO of worker `name` on "host" offering `role` at `version`.
inline net::HelloMessage hello_offering(net::Role role, std::uint16_t version, const std::string& name) {
  net::HelloMessage h;
  h.roles = {{role, version}};
  h.name = name;
  h.host = "host";
  h.pid = 9;
  h.cores = 1;
  return h;
}

// The one WELCOME in `sent` to `to`, decoded (a failure added if there is not exactly one).
inline net::WelcomeMessage welcome_to(const std::vector<HubSent>& sent, const std::string& to) {
  const std::vector<HubSent> welcomes = of_kind(sent, to, net::EnvelopeKind::kWelcome);
  net::WelcomeMessage w;
  if (welcomes.size() != 1) ADD_FAILURE() << welcomes.size() << " WELCOME to " << to << " in " << sent.size() << " message(s)";
  else EXPECT_TRUE(net::decode(welcomes[0].body, w).ok());
  return w;
}

// Hands a service's hub what its peers say and records what it sends.
// `flush` sends what the hub queued (the service's own flush, if it has one).
class HubDriver {
 public:
  using Flush = std::function<void(net::HubSender&)>;
  HubDriver(net::PeerHub& hub, Flush flush = {}) : hub_(hub), flush_(std::move(flush)) {}

  // `from` says `kind` (with `request` and `body`) at `at`; what that made the driver send.
  std::vector<HubSent> say(const std::string& from, net::EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                           net::PeerHub::Time at) {
    const EnvelopeParts m(kind, request, std::move(body));
    hub_.on_message(from, m.parts, "10.0.0.9", at);
    return flush();
  }
  std::vector<HubSent> say_hello(const std::string& from, const net::HelloMessage& hello, net::PeerHub::Time at) {
    std::vector<std::byte> body;
    net::encode(hello, body);
    return say(from, net::EnvelopeKind::kHello, 0, std::move(body), at);
  }
  std::vector<HubSent> tick(net::PeerHub::Time at) {
    hub_.on_tick(at);
    return flush();
  }
  std::vector<HubSent> flush() {
    if (flush_) flush_(out);
    else hub_.flush(out);
    return out.take();
  }

  RecordingSender out;

 private:
  net::PeerHub& hub_;
  Flush flush_;
};

}  // namespace redflow::testing
