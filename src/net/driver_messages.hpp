// What the driver says to a worker process, besides REQUEST frames (the tile
// protocol's own): WELCOME with the tile id it now is and the heartbeat
// rhythm both sides keep, or REFUSED with a reason the worker prints.
#pragma once

#include <cstdint>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "redflow/status.hpp"

namespace redflow::net {

struct WelcomeMessage {
  std::uint32_t tile = 0;
  // Counts every worker the driver ever welcomed: a worker that comes back is
  // a new incarnation, and nothing from an old one is taken for a new one's.
  std::uint64_t incarnation = 0;
  std::uint32_t heartbeat_interval_ms = 250;
  std::uint32_t heartbeat_timeout_ms = 2000;  // silence after which the peer is gone
  // With keys: the public keys (Z85) of every worker the driver admits. The
  // worker's peer socket lets in exactly these (peer_links.hpp), so a peer
  // fetching a value is held to the driver's --authorized-keys.
  std::vector<std::string> peer_keys;
  friend bool operator==(const WelcomeMessage&, const WelcomeMessage&) = default;
};

struct RefusedMessage {
  std::string reason;
  friend bool operator==(const RefusedMessage&, const RefusedMessage&) = default;
};

inline constexpr std::size_t kMaxWelcomeKeys = std::size_t{1} << 16;

void encode(const WelcomeMessage& m, std::vector<std::byte>& out);
void encode(const RefusedMessage& m, std::vector<std::byte>& out);
// Refuse anything malformed with a named error ("driver WELCOME: <name>: ...").
Status decode(std::span<const std::byte> body, WelcomeMessage& out);
Status decode(std::span<const std::byte> body, RefusedMessage& out);

}  // namespace redflow::net
