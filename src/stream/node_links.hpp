// NodeLinks: a stream node's direct links to the other nodes of its program,
// so tokens go from the node that writes a stream to the node that reads it
// without passing the driver (SCORE's tokens between machines); the driver
// only places the operators and watches the nodes.
//
//   listening  the worker's peer socket (net/peer_socket.hpp: loopback only
//              without keys, CURVE with keys letting in exactly the keys the
//              driver's WELCOME lists), announced in HELLO as `peer_port`.
//              Other nodes may send only TOKENS, BARRIER and CREDIT bodies:
//              anything else is refused and logged.
//   sending    SETUP names where every node listens; a node without a link
//              socket (empty endpoint) is reached through the driver. One
//              DEALER per node reached directly, so a stream's tokens and its
//              barriers keep their order, dialled at START: by then every
//              node has taken its WELCOME, so its socket lets the others'
//              keys in (a handshake refused for a key not yet admitted would
//              lose what was queued on it). A body the link cannot take now
//              (its handshake not done) waits here, with every later one for
//              that node, and goes on a later turn: nothing is dropped and
//              nothing blocks the node's I/O thread. ZeroMQ does not retry a
//              handshake the peer refused, so a link whose handshake failed
//              while bodies wait is dialled again (at most every kRedialAfter).
//   incarnation  every body carries the SETUP incarnation it was sent in
//              (the envelope's request id); one of another incarnation
//              belongs to a run abandoned after a lost node and is dropped.
//
// Thread-safety: none; the worker's session thread.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "net/peer_socket.hpp"
#include "net/refusal_log.hpp"
#include "net/sockets.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {

class NodeLinks {
 public:
  // Links over the worker's peer socket for this driver (the session's,
  // which outlives this; not listening: every token relays through the driver).
  explicit NodeLinks(net::PeerSocket& socket) : socket_(socket) {}
  ~NodeLinks();
  NodeLinks(const NodeLinks&) = delete;
  NodeLinks& operator=(const NodeLinks&) = delete;

  // A SETUP's nodes: where each listens (`links`, by node), this node's id
  // and the incarnation. Drops the links and waiting bodies of an earlier one.
  void expect(const std::vector<NodeLink>& links, std::uint32_t self, std::uint32_t incarnation);
  // START: dials every node reached directly.
  Status connect();
  // Whether bodies for `node` go straight to it (else through the driver).
  bool direct(std::uint32_t node) const { return node < links_.size() && node != self_ && !links_[node].endpoint.empty(); }
  // Sends a TOKENS, BARRIER or CREDIT body to `node` (direct(node)).
  void send(std::uint32_t node, std::vector<std::byte> body);
  // Sends what waited for a link that could not take it; true when nothing waits.
  bool retry();
  bool idle() const { return waiting_ == 0; }

  // The link socket, and each link with bodies waiting to go (to wake when it can take them).
  void poll_items(std::vector<zmq::pollitem_t>& items);
  // The next body from another node of this incarnation; refuses (and
  // logs) what is not one of the bodies nodes send each other.
  bool receive(net::ReceivedBytes& out);

  // Bytes of bodies sent straight to nodes so far.
  std::uint64_t sent_bytes() const { return sent_bytes_; }
  // Bodies refused from nodes let in (nodes turned away for their key: the
  // peer socket's refused_keys()).
  std::uint64_t refused_messages() const { return refusals_.count(kNodesName); }

 private:
  bool post(std::uint32_t node, std::vector<std::byte>& body);
  Status dial(std::uint32_t node);
  static constexpr const char* kNodesName = "other nodes";  // the refusal log's one peer: all of them
  static constexpr std::chrono::milliseconds kRedialAfter{200};

  net::PeerSocket& socket_;
  std::vector<NodeLink> links_;                                  // by node: where it listens (SETUP)
  std::uint32_t self_ = 0;
  std::vector<std::unique_ptr<zmq::socket_t>> dealers_;         // by node; null: not dialled (yet), or not direct
  std::vector<std::chrono::steady_clock::time_point> dialled_;   // by node: when its DEALER was made
  std::vector<std::unique_ptr<net::LinkWatch>> watches_;         // by node: its DEALER's handshakes
  std::vector<std::deque<std::vector<std::byte>>> waiting_for_;  // by node: bodies its link could not take yet
  std::size_t waiting_ = 0;
  std::uint32_t incarnation_ = 0;
  net::RefusalLog refusals_;
  std::uint64_t sent_bytes_ = 0;
};

}  // namespace redflow::stream
