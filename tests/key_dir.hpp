// KeyDir: CURVE key pairs for a test, written as DIR/NAME.key and
// DIR/NAME.pub in a directory of its own under /tmp, removed with it; and
// an authorized-keys file listing some of them, as a driver's
// --authorized-keys does.
//
//   KeyDir keys;
//   const std::string source = keys.make("source");  // its public key
//   net::SecurityOptions s = keys.of("source");       // key_file set
//   c.authorized_keys_file = keys.authorize({"w1", "w2"});
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "net/keys.hpp"
#include "net/security.hpp"

namespace redflow::testing {

class KeyDir {
 public:
  KeyDir() {
    char pattern[] = "/tmp/redflow-keys-XXXXXX";
    if (mkdtemp(pattern) != nullptr) dir_ = pattern;
  }
  ~KeyDir() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  KeyDir(const KeyDir&) = delete;
  KeyDir& operator=(const KeyDir&) = delete;

  bool ok() const { return !dir_.empty(); }
  // Writes NAME's pair; returns its public key ("" on failure).
  std::string make(const std::string& name) {
    auto pair = net::generate_key_pair();
    if (!pair.ok() || !net::write_key_pair(path(name), *pair, false).ok()) return "";
    public_[name] = pair->public_key;
    return pair->public_key;
  }
  // DIR/FILE.
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  // A peer with NAME's key pair (key_file set).
  net::SecurityOptions of(const std::string& name) const {
    net::SecurityOptions s;
    s.key_file = path(name + ".key");
    return s;
  }
  // DIR/workers.keys listing the public keys of `names` (made before); its path.
  std::string authorize(const std::vector<std::string>& names) const {
    std::ofstream out(path("workers.keys"));
    for (const std::string& n : names)
      if (auto it = public_.find(n); it != public_.end()) out << it->second << " " << n << "\n";
    return path("workers.keys");
  }

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> public_;
};

}  // namespace redflow::testing
