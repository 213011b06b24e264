// CURVE key pairs and the files that hold them (docs/security.md).
//
// A key pair is two Z85 strings of 40 characters (32-byte Curve25519 keys).
// `redflow keygen --out PREFIX` writes PREFIX.key (the secret key; mode 0600;
// never overwritten unless forced) and PREFIX.pub (the public key, one line).
// A driver lists the public keys it accepts in an authorized-keys file:
//
//   # workers of the seismic job
//   <40 characters of node17.pub>   node17
//   <40 characters of laptop.pub>   laptop
//
// one key per line, optionally followed by a name (logged and given to the
// socket as the peer's User-Id); blank lines and lines starting with '#' are
// skipped. Z85 uses '#', but never first in a 32-byte key (the first of each
// 5 characters encodes at most 2^32 / 85^4 < 83, and '#' is the 85th), so
// "#<key>" comments a key out and no key is mistaken for a comment. Every reader refuses what is malformed with a Status naming the
// file and line, and a secret key file that others may read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "redflow/status.hpp"

namespace redflow::net {

inline constexpr std::size_t kZ85KeyLength = 40;  // 32 bytes in Z85

// A CURVE key pair, both halves in Z85.
struct KeyPair {
  std::string public_key;
  std::string secret_key;
};

// One accepted worker: its public key (Z85) and the name given after it
// (the key's first 8 characters when the line has none).
struct AuthorizedKey {
  std::string public_key;
  std::string name;
  int line = 0;
};

// A fresh key pair from libsodium's generator (zmq_curve_keypair).
Result<KeyPair> generate_key_pair();

// Writes PREFIX.key (mode 0600) and PREFIX.pub. Each is written to a temporary
// file created with O_EXCL and then linked into place, so a reader never sees
// half a key and an existing key is never replaced unless `force`.
Status write_key_pair(const std::string& prefix, const KeyPair& keys, bool force);

// Reads a secret key file: refuses one that group or others may access
// (chmod 600), one that is not a single 40-character Z85 key, and derives
// the public half.
Result<KeyPair> read_secret_key_file(const std::string& path);
// Reads a public key file (PREFIX.pub or a server's key): one Z85 key.
Result<std::string> read_public_key_file(const std::string& path);

// Parses authorized keys; `source` names the file in errors ("keys.txt:3: ...").
// Duplicated keys are an error: two names for one worker hide a mistake.
Result<std::vector<AuthorizedKey>> parse_authorized_keys(std::string_view text, const std::string& source);
Result<std::vector<AuthorizedKey>> read_authorized_keys(const std::string& path);

// OK when `key` is 40 characters of the Z85 alphabet that decode to 32 bytes;
// otherwise says what is wrong with it, for the caller to prefix with where.
Status check_z85_key(std::string_view key);

// The first characters of a key, enough to tell keys apart in logs without
// printing whole keys.
std::string key_prefix(std::string_view key);

}  // namespace redflow::net
