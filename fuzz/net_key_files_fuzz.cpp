// libFuzzer target: the parsers of files other machines write, the
// authorized-keys list and the address file (src/net/keys.hpp,
// address_file.hpp). The first byte picks the parser. Accepted input must
// hold only what it may (40-character Z85 keys, a record that writes back to
// itself); a rejected one must name the file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "net/address_file.hpp"
#include "net/keys.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "net_key_files_fuzz: %s: '%.*s'\n", what, static_cast<int>(text.size()), text.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto keys = redflow::net::parse_authorized_keys(text, "F");
    if (!keys.ok()) {
      if (keys.status().message().find("authorized keys F") == std::string::npos) fail("an error that does not name the file", text);
      return 0;
    }
    for (const auto& k : *keys) {
      if (!redflow::net::check_z85_key(k.public_key).ok()) fail("an accepted key that is not a key", text);
      if (k.name.empty() || k.line < 1) fail("an accepted key without a name or line", text);
    }
    return 0;
  }
  auto record = redflow::net::parse_address_record(text, "F");
  if (!record.ok()) {
    if (record.status().message().find("address file F") == std::string::npos) fail("an error that does not name the file", text);
    return 0;
  }
  if (record->pid <= 0 || record->host.empty()) fail("a record without its driver", text);
  const std::string again = redflow::net::format_address_record(*record);
  auto back = redflow::net::parse_address_record(again, "F");
  if (!back.ok() || back->endpoint != record->endpoint || back->pid != record->pid || back->host != record->host ||
      back->server_public_key != record->server_public_key || back->start_ticks != record->start_ticks)
    fail("a record that does not write back to itself", text);
  return 0;
}
