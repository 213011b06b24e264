// The envelope: how a tile-protocol frame (or a HELLO, WELCOME...) travels
// between the driver and a worker process as one ZeroMQ multipart message.
//
//   part 1, the header, 16 bytes: "RFNE" | u16 version | u8 kind | u8 0 |
//           u64 request id (little-endian)
//   part 2, the body (absent for HEARTBEAT, BYE and ACK): the kind's bytes; for
//           REQUEST and REPLY exactly one tile-protocol frame (tile_protocol.hpp)
//
// (A ROUTER socket adds the peer's routing id in front; sockets.hpp.) The
// request id pairs a REPLY with its REQUEST, so requests can be pipelined and
// a late reply to a request the driver gave up on (a worker declared lost)
// is recognised and discarded. Decoding refuses anything malformed with a
// named wire::Error and never reads past the bytes it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "redflow/status.hpp"
#include "wire/codec.hpp"

namespace redflow::net {

// 3: roles in HELLO and WELCOME. A peer of another version is refused at its HELLO.
inline constexpr std::uint16_t kEnvelopeVersion = 3;
inline constexpr std::size_t kEnvelopeHeaderBytes = 16;
// The largest body: a slot's value plus a tile-protocol header and fields.
// sockets.cpp sets ZMQ_MAXMSGSIZE from it, so a larger message never reaches
// the decoder (ZeroMQ drops the connection that sent it).
inline constexpr std::size_t kMaxBodyBytes = (std::size_t{1} << 31) - 1;
// HELLO, WELCOME, REFUSED: small by nature; a larger one is refused.
inline constexpr std::size_t kMaxControlBytes = std::size_t{16} << 20;

enum class EnvelopeKind : std::uint8_t {
  kHello = 1,      // worker -> driver: who I am (worker_messages.hpp)
  kWelcome = 2,    // driver -> worker: your tile id (driver_messages.hpp)
  kRefused = 3,    // either way: why not (driver_messages.hpp); ends the link
  kHeartbeat = 4,  // both ways, no body
  kRequest = 5,    // driver -> worker: one tile-protocol frame
  kReply = 6,      // worker -> driver: its answer, same request id
  kBye = 7,        // either way: I am leaving (no body)
  kAck = 8,        // either way: the REQUEST or REPLY with this id arrived and is kept (no body;
                   // SPITS, src/spits/net_messages.hpp, so neither side drops what the other may not have)
  kCancel = 9,     // driver -> worker: stop the peer fetch of REQUEST id, its source is lost (no body; peer_links.hpp)
  kRequests = 10,  // driver -> worker: a batch of REQUESTs (below); the header's id is how many
  kReplies = 11,   // worker -> driver: a batch of REPLYs, the same way
  kRedirect = 12,  // `redflow server` -> worker, instead of a WELCOME: serve the job's driver on another port (driver_messages.hpp)
};
const char* envelope_kind_name(EnvelopeKind k);
// Whether a kind has a body part (all but HEARTBEAT, BYE and ACK).
bool envelope_has_body(EnvelopeKind k);

struct Envelope {
  EnvelopeKind kind = EnvelopeKind::kHeartbeat;
  std::uint64_t request = 0;
  std::span<const std::byte> body;  // into the caller's bytes
};

// The 16 header bytes of `kind` and `request`.
void encode_header(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte>& out);

// A batch: the small REQUESTs queued for one worker (or the REPLYs ready for
// the driver) in one message. Pipelined actors are many small frames, and
// each message costs a ZeroMQ send, a receive and a wake-up of every thread
// on its way; a batch costs them once. Body: for each entry, u64 request id,
// u32 length, the frame. Larger frames (values) go alone, uncopied.
inline constexpr std::size_t kMaxBatchEntries = 4096;
inline constexpr std::size_t kMaxBatchedFrameBytes = std::size_t{64} << 10;

struct BatchEntry {
  std::uint64_t request = 0;
  std::span<const std::byte> frame;  // into the batch's body
};

// Builds a batch's body; the header's id is entries().
class BatchWriter {
 public:
  // Whether `frame` may join a batch at all (not a value's bytes).
  static bool fits(std::span<const std::byte> frame) { return frame.size() <= kMaxBatchedFrameBytes; }
  void add(std::uint64_t request, std::span<const std::byte> frame);
  std::size_t entries() const { return entries_; }
  // The body so far, and a fresh start.
  std::vector<std::byte> take();

 private:
  std::vector<std::byte> body_;
  std::size_t entries_ = 0;
};

// Sends a run of small frames for one peer: alone as one REQUEST (REPLY)
// when the run is one frame, else as one REQUESTS (REPLIES) batch.
// `send(kind, id, body)` sends one message, taking `body` over; each entry
// has an `id` and a `frame` (a lone frame is moved out of its entry). The
// driver's tile server and a worker's loop both flush through it. Returns
// how many frames went in a batch.
template <class Entry, class Send>
std::size_t send_batched(std::span<Entry* const> run, EnvelopeKind one, Send&& send) {
  if (run.empty()) return 0;
  if (run.size() == 1) {
    send(one, run[0]->id, std::move(run[0]->frame));
    return 0;
  }
  BatchWriter writer;
  for (const Entry* e : run) writer.add(e->id, e->frame);
  const std::size_t entries = writer.entries();  // before take() empties it
  send(one == EnvelopeKind::kRequest ? EnvelopeKind::kRequests : EnvelopeKind::kReplies, entries, writer.take());
  return entries;
}

// The entries of a REQUESTS or REPLIES envelope, in order; a body that does
// not hold exactly the header's count of well-formed entries is refused
// with a named error (and `out` is left empty: nothing of it is acted on).
Status decode_batch(const Envelope& batch, std::vector<BatchEntry>& out, wire::Error& error);

// Decodes one envelope from its parts (without any routing id): the header
// and, if the kind has one, the body. On failure `error` names the rule
// broken and the Status ("net envelope: <name>: ...") says where.
Status decode_envelope(std::span<const std::span<const std::byte>> parts, Envelope& out, wire::Error& error);

}  // namespace redflow::net
