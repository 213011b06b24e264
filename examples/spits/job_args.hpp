// JobArgs: the key=value words a SPITS example job is given after its .so
// ("tasks=1000 out=pi.txt"), with named errors for unknown keys and bad numbers.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

namespace spits_example {

class JobArgs {
 public:
  // Returns false with `error` set on a word that is not key=value.
  bool parse(int argc, const char* const* argv, std::string& error) {
    for (int i = 0; i < argc; ++i) {
      std::string w = argv[i];
      auto eq = w.find('=');
      if (eq == std::string::npos || eq == 0) {
        error = "expected key=value, got '" + w + "'";
        return false;
      }
      values_[w.substr(0, eq)] = w.substr(eq + 1);
    }
    return true;
  }
  std::string text(const std::string& key, const std::string& fallback = "") {
    used_[key] = true;
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  // Sets `error` when the value is not a whole number.
  std::uint64_t number(const std::string& key, std::uint64_t fallback, std::string& error) {
    std::string v = text(key);
    if (v.empty()) return fallback;
    char* end = nullptr;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (*end != '\0' || v[0] == '-') error = key + "=" + v + " is not a whole number";
    return n;
  }
  // The first key no text()/number() asked for, or "".
  std::string unknown() const {
    for (const auto& [k, v] : values_)
      if (!used_.count(k)) return k;
    return "";
  }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> used_;
};

}  // namespace spits_example
