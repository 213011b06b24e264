// What a worker process says to the driver, besides REPLY frames (which are
// the tile protocol's own): HELLO, who it is and what it can run. The driver
// checks a graph's actor functions against `functions` at load, so a graph
// naming one this worker lacks is a named error before anything runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

// A HELLO's body. `version` of a function: a hash of its name and where it
// came from (built-in or the plugin file's name), so two workers built from
// different plugins can be told apart in a log.
struct ActorFunctionInfo {
  std::string name;
  std::uint64_t version = 0;
  friend bool operator==(const ActorFunctionInfo&, const ActorFunctionInfo&) = default;
};

struct HelloMessage {
  std::uint16_t tile_protocol = 0;  // the tile protocol version it speaks (kTileProtocolVersion)
  std::string name;                 // --name, or host:pid
  std::string host;
  std::uint32_t pid = 0;
  std::uint32_t cores = 1;
  std::uint32_t slots = 0;
  std::uint64_t slot_bytes = 0;
  std::vector<ActorFunctionInfo> functions;
  // Its peer socket, where other workers fetch values from its slots (the
  // paper's TLM-to-TLM transfer; peer_links.hpp): the port (0: none, every
  // transfer relays through the driver) and, with keys, the socket's CURVE
  // public key (Z85). The driver adds the address it sees the worker at.
  std::uint32_t peer_port = 0;
  std::string public_key;
  friend bool operator==(const HelloMessage&, const HelloMessage&) = default;
};

inline constexpr std::size_t kMaxHelloFunctions = std::size_t{1} << 16;
inline constexpr std::size_t kMaxHelloString = std::size_t{1} << 12;

void encode(const HelloMessage& m, std::vector<std::byte>& out);
// Refuses anything malformed with a named error ("worker HELLO: <name>: ...").
Status decode(std::span<const std::byte> body, HelloMessage& out);

// The functions of `registry`, each with a version: hash of name and `origin`.
std::vector<ActorFunctionInfo> describe_functions(const Registry& registry, std::string_view origin);

}  // namespace redflow::net
