// PeerLinks: a worker's links to the other workers, for the paper's
// TLM-to-TLM transfer (section 4.5): a value that sits in one worker's slot
// goes straight to the worker that needs it, not through the driver.
//
//   serving   a ROUTER, the worker's *peer socket*, announced in HELLO (its
//             port and, with keys, its CURVE public key). Peers may only
//             read slots: a request that is not one ReadSlot frame is
//             refused and logged. The caller hands each request to the
//             tile's executor, in order with the driver's own frames, and
//             sends the answer back with reply().
//   fetching  the driver sends a kPeerDataNode frame instead of the bytes;
//             fetch() asks the source's peer socket (one DEALER per peer)
//             for the value, and take_fetched() hands back what came: a
//             placement for the executor (the bytes stay in the ZeroMQ
//             message they arrived in until they are copied into the slot),
//             or the answer to the driver when the source no longer holds
//             the value. The tile's executor never waits on a peer, so two
//             workers fetching from each other cannot deadlock.
//   cancel    a source the driver declares lost may never answer; the
//             driver then sends CANCEL and the fetch is answered NotFound
//             (the engine takes the value from main memory or recomputes it).
//
// Everything runs on the worker's main thread (ZeroMQ sockets are not
// thread-safe). The peer socket follows the security rule of every link
// between workers (peer_socket.hpp).
#pragma once

#include <zmq.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/peer_socket.hpp"
#include "net/refusal_log.hpp"
#include "net/security.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {

class PeerLinks {
 public:
  // A peer's read request for the executor.
  struct Request {
    std::string route;  // the peer's routing id on the peer socket
    std::uint64_t id = 0;
    std::vector<std::byte> frame;  // one kReadSlot frame
  };
  // What a fetch gave: a piece of the value to place (`ok`: the bytes at
  // `offset`, in `payload` from `at`; `last` when it ends the value), or
  // `answer`, the frame to send the driver as is (a NotFound status);
  // `message` names the data node and its slot either way.
  struct Fetched {
    std::uint64_t driver_request = 0;
    bool ok = false;
    bool last = false;
    runtime::DataNodeMessage message;  // the data node (no payload)
    std::uint64_t offset = 0;
    zmq::message_t payload;
    std::size_t at = 0;
    std::size_t size = 0;
    std::vector<std::byte> answer;
    std::span<const std::byte> piece() const { return {static_cast<const std::byte*>(payload.data()) + at, size}; }
  };
  // A large value comes in chunks of this size, at most kWindow of them
  // asked for at once (the ZeroMQ guide's credit-based file transfer): the
  // source copies one chunk while the previous crosses the wire and the one
  // before is copied into the slot, and neither side holds more than
  // kWindow chunks besides the slots. Other frames interleave between
  // chunks on the source's executor.
  static constexpr std::uint64_t kChunkBytes = std::uint64_t{1} << 20;
  static constexpr unsigned kWindow = 4;
  // The read of the chunk of `whole`'s value that starts at `offset`: the
  // one place that cuts a value into chunks, for fetches between workers and
  // for the driver's read-backs (RemoteTile::read_slot).
  static runtime::ReadSlotMessage chunk_at(runtime::ReadSlotMessage whole, std::uint64_t offset) {
    whole.offset = offset;
    whole.length = std::min(kChunkBytes, whole.bytes - offset);
    return whole;
  }

  // Links over the worker's peer socket for this driver (the session's,
  // which outlives this).
  explicit PeerLinks(PeerSocket& socket) : socket_(socket) {}
  ~PeerLinks();

  // The sockets to poll for input (the peer socket and every DEALER).
  void poll_items(std::vector<zmq::pollitem_t>& items);

  // The next peer request waiting, if any; refuses (and logs) garbage.
  bool take_request(Request& out);
  void reply(const std::string& route, std::uint64_t id, std::vector<std::byte> frame);

  // Starts fetching the value a kPeerDataNode frame names, for driver request `driver_request`.
  void fetch(std::uint64_t driver_request, const runtime::DecodedFrame& peer_data_node);
  // The next piece that came, or a fetch that ended without its value.
  bool take_fetched(Fetched& out);
  // CANCEL from the driver: true, with the answer in `out`, if that fetch was still waiting.
  bool cancel(std::uint64_t driver_request, Fetched& out);

  // Peers the peer socket turned away for their key (with keys), and
  // requests from peers let in that were refused (anything but a slot read).
  std::uint64_t refused_keys() const { return socket_.refused_keys(); }
  std::uint64_t refused_messages() const { return refusals_.count(kPeersName); }

 private:
  struct Pending {
    std::uint64_t driver_request = 0;
    runtime::DataNodeMessage message;  // no payload
    std::string endpoint;
    zmq::socket_t* dealer = nullptr;
    std::uint64_t asked = 0;     // bytes asked for so far
    std::uint64_t received = 0;  // bytes come so far (chunks answer in order)
  };
  // Asks for the next chunk of fetch `id`; false if it could not be sent.
  bool ask_next(std::uint64_t id, Pending& p);
  Result<zmq::socket_t*> dealer_for(const std::string& endpoint, const std::string& public_key);
  static std::vector<std::byte> not_found(const Pending& p, const std::string& why);
  static constexpr const char* kPeersName = "its peers";  // the refusal log's one peer: all of them

  PeerSocket& socket_;
  RefusalLog refusals_;  // what peers sent that was refused: logged first, then counted
  std::map<std::string, zmq::socket_t> dealers_;  // by peer endpoint
  std::map<std::uint64_t, Pending> pending_;      // by fetch id
  std::uint64_t next_fetch_ = 1;
  std::vector<std::unique_ptr<Fetched>> ready_;   // fetches that ended before take_fetched() (a failed send)
};

}  // namespace redflow::net
