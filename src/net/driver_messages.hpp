// What the driver says to a worker process, besides REQUEST frames (its
// role's own): WELCOME with the role it is to serve (one its HELLO offered),
// its id in that role and the heartbeat rhythm both sides keep, or REFUSED
// with a reason the worker prints. `redflow server` says REDIRECT instead:
// the worker is to serve the driver of a job, listening on another port of
// the host the worker reached the server on.
#pragma once

#include <cstdint>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "net/worker_messages.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

struct WelcomeMessage {
  Role role = Role::kTile;
  std::uint32_t tile = 0;  // its id in that role: the tile id, the node index, the Task Manager's number
  // Counts every worker the driver ever welcomed: a worker that comes back is
  // a new incarnation, and nothing from an old one is taken for a new one's.
  std::uint64_t incarnation = 0;
  std::uint32_t heartbeat_interval_ms = 250;
  std::uint32_t heartbeat_timeout_ms = 2000;  // silence after which the peer is gone
  // With keys: the public keys (Z85) of every worker the driver admits. The
  // worker's peer socket lets in exactly these (peer_links.hpp), so a peer
  // fetching a value is held to the driver's --authorized-keys.
  std::vector<std::string> peer_keys;
  // What the role needs to start, in that role's own encoding (a SPITS job:
  // its plugin, name and arguments); empty for a tile and a node.
  std::vector<std::byte> service;
  friend bool operator==(const WelcomeMessage&, const WelcomeMessage&) = default;
};

struct RefusedMessage {
  std::string reason;
  friend bool operator==(const RefusedMessage&, const RefusedMessage&) = default;
};

struct RedirectMessage {
  std::uint16_t port = 0;                // the job's driver listens here, on the server's host
  std::uint32_t welcome_timeout_ms = 0;  // no WELCOME from it within this: back to the server
  friend bool operator==(const RedirectMessage&, const RedirectMessage&) = default;
};

inline constexpr std::size_t kMaxWelcomeKeys = std::size_t{1} << 16;

void encode(const WelcomeMessage& m, std::vector<std::byte>& out);
void encode(const RefusedMessage& m, std::vector<std::byte>& out);
void encode(const RedirectMessage& m, std::vector<std::byte>& out);
// Refuse anything malformed with a named error ("driver WELCOME: <name>: ...").
Status decode(std::span<const std::byte> body, WelcomeMessage& out);
Status decode(std::span<const std::byte> body, RefusedMessage& out);
Status decode(std::span<const std::byte> body, RedirectMessage& out);

}  // namespace redflow::net
