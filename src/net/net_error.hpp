// NetError: what was wrong with bytes that came off the network (an envelope
// or a HELLO/WELCOME body), named like the tile protocol's ProtocolError so a
// log line or a Status says which rule a peer broke.
#pragma once

#include <string>

#include "redflow/status.hpp"

namespace redflow::net {

enum class NetError {
  kNone,
  kTruncated,      // fewer bytes than a field needs
  kBadMagic,       // not a redflow envelope
  kWrongVersion,   // an envelope version this build does not speak
  kOversized,      // a length or a message beyond the limits
  kUnknownKind,    // a kind byte no message has
  kMalformed,      // a field out of range, or the wrong number of parts
  kTrailingBytes,  // bytes after the last field
};

inline const char* net_error_name(NetError e) {
  switch (e) {
    case NetError::kNone: return "none";
    case NetError::kTruncated: return "truncated";
    case NetError::kBadMagic: return "bad magic";
    case NetError::kWrongVersion: return "wrong version";
    case NetError::kOversized: return "oversized";
    case NetError::kUnknownKind: return "unknown kind";
    case NetError::kMalformed: return "malformed";
    case NetError::kTrailingBytes: return "trailing bytes";
  }
  return "unknown error";
}

// "net envelope: <name>: <what>", InvalidArgument.
inline Status net_status(const char* what_kind, NetError e, const std::string& what) {
  return Status::InvalidArgument(std::string(what_kind) + ": " + net_error_name(e) + ": " + what);
}

}  // namespace redflow::net
