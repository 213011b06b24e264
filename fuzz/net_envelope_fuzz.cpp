// libFuzzer target: the remote tiles' wire as the driver reads it (a
// worker's message): the input is split into up to 3 parts at the first two
// "|||" markers, decoded as an envelope, and its body as a HELLO and as a
// tile-protocol frame, and as each SPITS message (src/spits/net_messages.hpp:
// both peers of a SPITS job read these) and each stream message
// (src/stream/stream_messages.hpp: a stream driver and its nodes). Anything may be refused with a named error; nothing
// may crash, hang or read out of bounds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/worker_messages.hpp"
#include "runtime/tile_protocol.hpp"
#include "spits/net_messages.hpp"
#include "stream/stream_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  std::vector<std::span<const std::byte>> parts;
  static constexpr char kMark[] = "|||";
  while (parts.size() < 2) {
    const std::byte* end = in.data() + in.size();
    const std::byte* hit = std::search(in.data(), end, reinterpret_cast<const std::byte*>(kMark), reinterpret_cast<const std::byte*>(kMark) + 3);
    if (hit == end) break;
    parts.emplace_back(in.data(), static_cast<std::size_t>(hit - in.data()));
    in = in.subspan(static_cast<std::size_t>(hit - in.data()) + 3);
  }
  parts.push_back(in);
  redflow::net::Envelope e;
  redflow::wire::Error error;
  if (redflow::net::decode_envelope(parts, e, error).ok()) {
    redflow::net::HelloMessage hello;
    (void)redflow::net::decode(e.body, hello);
    redflow::net::WelcomeMessage welcome;
    (void)redflow::net::decode(e.body, welcome);
    redflow::runtime::DecodedFrame frame;
    (void)redflow::runtime::decode(e.body, frame);
    redflow::runtime::DecodedFrame borrowed;  // views into the body: must stay within it
    (void)redflow::runtime::decode(e.body, borrowed, /*borrow=*/true);
  }
  // Every body as a batch of either kind, whatever its header said: each
  // entry must lie within the body, and a refused batch leaves nothing.
  for (auto kind : {redflow::net::EnvelopeKind::kRequests, redflow::net::EnvelopeKind::kReplies}) {
    const auto body = parts.back();
    std::vector<redflow::net::BatchEntry> entries;
    const std::uint64_t count = e.kind == kind ? e.request : 2 + body.size() % 5;
    if (!redflow::net::decode_batch(redflow::net::Envelope{kind, count, body}, entries, error).ok()) {
      if (!entries.empty()) __builtin_trap();
      continue;
    }
    for (const auto& entry : entries)
      if (entry.frame.data() < body.data() || entry.frame.data() + entry.frame.size() > body.data() + body.size()) __builtin_trap();
  }
  // The body alone too, so the fuzzer reaches the message decoders quickly.
  const auto body = parts.back();
  redflow::net::HelloMessage hello;
  (void)redflow::net::decode(body, hello);
  redflow::spits::JobHello job_hello;
  (void)redflow::spits::decode(body, job_hello);
  redflow::spits::TaskManagerInfo info;
  (void)redflow::spits::decode(body, info);
  redflow::spits::JobWelcome job_welcome;
  (void)redflow::spits::decode(body, job_welcome);
  std::vector<redflow::spits::TaskMessage> tasks;
  (void)redflow::spits::decode_tasks(body, tasks);
  std::vector<redflow::spits::ResultMessage> results;
  std::uint32_t capacity = 0;
  std::uint64_t ns_per_task = 0;
  (void)redflow::spits::decode_results(body, capacity, ns_per_task, results);
  namespace st = redflow::stream;
  (void)st::message_type(body);
  st::SetupMessage setup;
  if (st::decode(body, setup).ok()) (void)st::program_of(setup, st::OperatorRegistry::with_builtins());
  st::RunResult done;
  (void)st::decode_done(body, done);
  std::uint32_t number = 0;
  (void)st::decode_ready(body, number);
  (void)st::decode_checkpoint(body, number);
  std::vector<st::BarrierEntry> barriers;
  (void)st::decode_barriers(body, barriers);
  st::SnapshotMessage snapshot;
  (void)st::decode(body, snapshot);
  std::vector<st::TokenCount> credits;
  (void)st::decode_credits(body, number, credits);
  std::uint64_t sent_bytes = 0;
  (void)st::decode_sent(body, sent_bytes, credits);
  st::OutputMessage output;
  (void)st::decode(body, output);
  std::string what;
  (void)st::decode_error(body, what);
  (void)st::tokens_node(body);
  // A TOKENS body is delivered whole or not at all: a stream cannot go on with a hole in it.
  std::size_t delivered = 0;
  const redflow::Status tokens = st::decode_tokens(
      body, [](std::uint32_t k) -> std::size_t { return k % 3 == 0 ? 0 : k % 17 + 1; },
      [&](std::uint32_t, bool close, std::span<const std::byte> t, std::size_t n) { delivered += t.size() + n + close; });
  if (!tokens.ok() && delivered != 0) __builtin_trap();
  return 0;
}
