// libFuzzer target: the --redundancy LIST parser (parse_redundancy_list) and
// the single-name parser the DOT reader uses for redundancy=. What is
// accepted must print back as exactly the input; an error must quote the
// element at fault.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "redflow/redundancy.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "redundancy_spec_fuzz: %s: '%.*s'\n", what, static_cast<int>(text.size()), text.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto one = redflow::parse_redundancy(text); one && text != redflow::to_string(*one))
    fail("parse_redundancy accepted a name that is not the configuration's", text);
  redflow::Result<std::vector<redflow::Redundancy>> list = redflow::parse_redundancy_list(text);
  if (!list.ok()) {
    if (list.status().message().find("unknown redundancy configuration '") == std::string::npos)
      fail("an error that does not quote the bad element", text);
    return 0;
  }
  std::string back;
  for (redflow::Redundancy r : *list) back += (back.empty() ? "" : ",") + std::string(redflow::to_string(r));
  if (list->empty() || back != text) fail("an accepted list does not print back as itself", text);
  return 0;
}
