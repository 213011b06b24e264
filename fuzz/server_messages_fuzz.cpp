// libFuzzer target: the client <-> server frames of `redflow server`
// (src/server/server_messages.*) on any bytes. A request or reply either
// decodes, and then encodes back to a frame that decodes to the same, or is
// refused with an error naming the frame; never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "server/server_messages.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "server_messages_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace redflow::server;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto q = decode_request(bytes);
  if (!q.ok()) {
    if (q.status().message().rfind("server request: ", 0) != 0) fail("a request error that does not name the frame", q.status().ToString());
  } else {
    auto again = decode_request(encode(*q));
    if (!again.ok()) fail("a decoded request does not decode once encoded again", again.status().ToString());
    if (again->kind != q->kind || again->id != q->id || again->args != q->args || again->cwd != q->cwd) fail("a request changed in a round trip", "");
  }
  auto r = decode_reply(bytes);
  if (r.ok()) {
    auto again = decode_reply(encode(*r));
    if (!again.ok()) fail("a decoded reply does not decode once encoded again", again.status().ToString());
    if (again->jobs.size() != r->jobs.size() || again->workers.last != r->workers.last) fail("a reply changed in a round trip", "");
  } else if (r.status().message().rfind("server", 0) != 0) {
    fail("a reply error that does not name the server", r.status().ToString());
  }
  return 0;
}
