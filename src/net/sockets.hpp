// Every ZeroMQ socket of the driver/worker link is made here, in one place,
// so that its options (linger, high-water marks, the largest message
// accepted) are the same everywhere, and so that security (CURVE keys and the
// ZAP authenticator, src/net/security*) plugs in at one spot.
#pragma once

#include <zmq.hpp>

#include <cerrno>
#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "net/envelope.hpp"
#include "net/link_watch.hpp"

#include "net/keys.hpp"
#include "net/security.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

// The driver's tile server socket: a ROUTER bound at `endpoint`
// ("tcp://127.0.0.1:*" picks a free port). `bound` is the endpoint it got
// (ZMQ_LAST_ENDPOINT), the one workers connect to. A non-loopback endpoint
// needs keys (check_listen_address); with keys the socket is a CURVE server
// whose peers `zap` (on the same context, outliving the socket) lets in.
Result<zmq::socket_t> make_driver_router(zmq::context_t& context, const std::string& endpoint, std::string& bound,
                                         const SecurityOptions& security, ZapAuthenticator& zap);

// A worker's socket: a DEALER connected to the driver's `endpoint`, a CURVE
// client when `security` names keys; `watch` (if given) watches its
// handshakes from before it connects. With `immediate`, messages queue only
// on a connection whose handshake is done (ZMQ_IMMEDIATE): none is lost with
// a handshake the peer refused, and until then the socket is not writable.
Result<zmq::socket_t> make_worker_dealer(zmq::context_t& context, const std::string& endpoint, const SecurityOptions& security,
                                         LinkWatch* watch = nullptr, bool immediate = false);

// A worker's peer socket (peer_links.hpp): a ROUTER bound at `endpoint`,
// with the bound endpoint. With `zap` (keys), a CURVE server with `keys`
// whose peers `zap` lets in; without, plain (loopback only).
Result<std::pair<zmq::socket_t, std::string>> make_peer_router(zmq::context_t& context, const std::string& endpoint, const KeyPair& keys,
                                                               ZapAuthenticator* zap);

// A socket that sends one multipart message: `parts` in order. With
// `dontwait`, false instead of blocking when the socket has no peer to take
// it (a DEALER whose connection is down or failed its handshake).
bool send_parts(zmq::socket_t& socket, std::initializer_list<zmq::const_buffer> parts, bool dontwait = false);

// Sends one envelope (header, and `body` when the kind has one) on a DEALER,
// or on a ROUTER after `routing_id` (non-empty). False when the peer is gone.
bool send_envelope(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body,
                   const std::string& routing_id = {}, bool dontwait = false);

// A worker's HELLO on its DEALER, retried without blocking until `deadline`
// (false then). A DEALER with no connection to send on (the driver gone, or
// its CURVE handshake refused and not yet retried) blocks a plain send for
// good, past any --connect-timeout: under TSan a worker with an unlisted key
// hung a test for its whole 300 s.
bool send_hello(zmq::socket_t& socket, std::span<const std::byte> body, std::chrono::steady_clock::time_point deadline);
// When a worker (a tile or a stream node) started now gives up waiting for its WELCOME.
std::chrono::steady_clock::time_point welcome_deadline(double connect_timeout_s);
// Its error then, with what `watch` saw of the handshakes (keys, most often:
// a driver refuses a worker without a key, or with an unlisted one, without
// a word to it); without a watch, and with keys, the likeliest reason.
Status no_welcome(const std::string& connect, double connect_timeout_s, bool keyed, LinkWatch* watch = nullptr);

// A worker's link to its driver is one ordered, reliable stream: a message
// from the driver that cannot be read may have held a request, whose answer
// the driver would wait for forever. So the worker says REFUSED with `why`
// (the driver declares it lost) and leaves with the error this returns.
Status refuse_and_leave(zmq::socket_t& driver, const std::string& connect, const Status& why);

// send_envelope() whose body ZeroMQ takes over without copying it (a large
// value read out of a slot is then copied once on this side, not twice).
bool send_envelope_owned(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                         const std::string& routing_id = {});
// The same on a DEALER, without waiting: takes `body` over (and true) only
// when the socket takes the message now; else false with `body` as it was
// (a stream node's link keeps it for later).
bool try_send_envelope_owned(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte>& body);

// Runs `call`, one ZeroMQ send, receive or poll, until no signal interrupts
// it. ZeroMQ fails a call with EINTR when a signal lands while it looks at
// its command mailbox, even without waiting, and before it has taken the
// part: the part is then simply sent or received again. (A process that
// leaves on SIGTERM otherwise lost the message it was sending, or died of
// the exception while reading.) Any other failure is thrown to the caller.
template <typename Call>
auto retry_on_signal(Call&& call) {
  for (;;) {
    try {
      return call();
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

// Receives one multipart message without waiting; false when none was
// waiting. Keeps at most `max_parts` parts (the rest are read and dropped,
// so a garbled many-part message is refused by the decoder, not buffered).
bool receive_message(zmq::socket_t& socket, std::vector<zmq::message_t>& parts, std::size_t max_parts = 4);

// The IP a message part came from (ZeroMQ's Peer-Address): where the
// driver sees a worker, which its peers then reach it at. Empty when not
// over TCP.
std::string peer_address(zmq::message_t& part);

// Views of `parts` for decode_envelope, skipping the first `skip` (a ROUTER's routing id).
std::vector<std::span<const std::byte>> part_spans(const std::vector<zmq::message_t>& parts, std::size_t skip = 0);

// Bytes that arrived: a whole message part kept as it came (a value's frame,
// which is then not copied out of it), or bytes of its own (a frame out of a
// batch, or one made here). Moving it keeps a kept part's bytes where they
// are: ZeroMQ allocates a large part's data apart from the message.
class ReceivedBytes {
 public:
  ReceivedBytes() = default;
  explicit ReceivedBytes(zmq::message_t&& part) : part_(std::move(part)), kept_(true) {}
  explicit ReceivedBytes(std::vector<std::byte> own) : own_(std::move(own)) {}
  std::span<const std::byte> bytes() const {
    if (kept_) return {static_cast<const std::byte*>(part_.data()), part_.size()};
    return own_;
  }
  // Whether bytes() is the ZeroMQ message the bytes arrived in (no copy),
  // not a buffer they were copied into.
  bool in_place() const { return kept_; }

 private:
  zmq::message_t part_;
  std::vector<std::byte> own_;
  bool kept_ = false;
};

}  // namespace redflow::net
