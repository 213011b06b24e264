// What a worker process says to the driver, besides REPLY frames (which are
// its role's own): HELLO, who it is, which roles it can serve (a tile, a
// SPITS Task Manager, a stream node) with the protocol version of each, and
// what it can run. The driver WELCOMEs it into one of the roles it offers
// (driver_messages.hpp) or REFUSES it with a reason. The driver checks a
// graph's actor functions against `functions` at load, so a graph naming one
// this worker lacks is a named error before anything runs; a stream driver
// checks a program's operators against `operators` the same way.
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

// What a worker serves once a driver WELCOMEs it. One `redflow worker`
// offers every role; the driver names the one it wants.
enum class Role : std::uint8_t {
  kTile = 1,         // a remote tile of a graph run (`redflow run --listen`; the tile protocol)
  kTaskManager = 2,  // a SPITS Task Manager (`redflow spits --listen`; spits/net_messages.hpp)
  kNode = 3,         // a node of a stream program (`redflow stream --listen`; stream/stream_messages.hpp)
};
inline constexpr std::uint8_t kMaxRole = 3;
// "tile", "task manager", "stream node".
const char* role_name(Role role);

// A role a worker offers, with the version of that role's protocol it speaks.
struct RoleOffer {
  Role role = Role::kTile;
  std::uint16_t version = 0;
  friend bool operator==(const RoleOffer&, const RoleOffer&) = default;
};

struct HelloMessage {
  std::vector<RoleOffer> roles;     // at least one, each role once
  std::string name;                 // --name, or host:pid
  std::string host;
  std::uint32_t pid = 0;
  std::uint32_t cores = 1;
  // A tile's memory (0 when it does not offer the tile role).
  std::uint32_t slots = 0;
  std::uint64_t slot_bytes = 0;
  std::vector<ActorFunctionInfo> functions;  // actor functions (a tile's)
  std::vector<std::string> operators;        // stream operators (a node's)
  // Its peer socket (peer_socket.hpp), where other workers reach it: a
  // tile's peers fetch values from its slots (the paper's TLM-to-TLM
  // transfer; peer_links.hpp), a node's peers send it tokens
  // (stream/node_links.hpp). The port (0: none, everything relays through
  // the driver) and, with keys, the socket's CURVE public key (Z85). The
  // driver adds the address it sees the worker at.
  std::uint32_t peer_port = 0;
  std::string public_key;
  friend bool operator==(const HelloMessage&, const HelloMessage&) = default;
};

inline constexpr std::size_t kMaxHelloFunctions = std::size_t{1} << 16;
inline constexpr std::size_t kMaxHelloString = std::size_t{1} << 12;

// The version of `role`'s protocol `hello` speaks; 0 when it does not offer it.
std::uint16_t offered_version(const HelloMessage& hello, Role role);
// What a driver that wants `role` at `version` says: empty when `hello`
// offers it, else the reason for its REFUSED ("it serves tile (protocol 5)
// and stream node (protocol 1), not task manager", or "it speaks tile
// protocol version 4; the driver speaks 5"). Every driver checks a HELLO's
// role here, so every refusal reads the same.
std::string role_refusal(const HelloMessage& hello, Role role, std::uint16_t version);
// "tile (protocol 5), stream node (protocol 1)".
std::string describe_roles(const std::vector<RoleOffer>& roles);

void encode(const HelloMessage& m, std::vector<std::byte>& out);
// Refuses anything malformed with a named error ("worker HELLO: <name>: ...").
Status decode(std::span<const std::byte> body, HelloMessage& out);

// The functions of `registry`, each with a version: hash of name and `origin`.
std::vector<ActorFunctionInfo> describe_functions(const Registry& registry, std::string_view origin);

}  // namespace redflow::net
