// A stream node's direct links (src/stream/node_links.hpp) with real ZeroMQ
// on loopback, each node on its own context as in its own process: tokens go
// straight from node to node; with keys they cross the wire encrypted and a
// node whose key the driver never listed is refused; whoever gets in may send
// only what nodes send each other; a body of an abandoned incarnation is
// dropped; and a body for a node whose link is not up yet waits, in order.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/keys.hpp"
#include "net/peer_socket.hpp"
#include "net/sockets.hpp"
#include "stream/node_links.hpp"
#include "stream/stream_messages.hpp"
#include "key_dir.hpp"
#include "tcp_relay.hpp"

namespace redflow::stream {
namespace {

using LinkClock = std::chrono::steady_clock;

// One node: its own context (its own process), its peer socket, its links.
struct LinkSide {
  zmq::context_t context{1};
  std::unique_ptr<net::PeerSocket> socket;
  std::unique_ptr<NodeLinks> links;
  explicit LinkSide(const net::SecurityOptions& security) {
    auto opened = net::PeerSocket::open(context, "tcp://127.0.0.1:1", security);
    if (!opened.ok()) return;
    socket = std::move(*opened);
    links = std::make_unique<NodeLinks>(*socket);
  }
  ~LinkSide() {
    links.reset();
    socket.reset();
  }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(socket->port()); }
};

// A TOKENS body for node 1: `count` 8-byte tokens on stream 0, each `mark`.
std::vector<std::byte> tokens_for_node_1(std::uint64_t mark, std::size_t count) {
  std::vector<std::byte> tokens(count * 8);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(tokens.data() + i * 8, &mark, 8);
  std::vector<std::byte> body;
  TokenBatchWriter w(body);
  w.begin(1);
  w.add(0, false, tokens, count);
  return body;
}

// The first token of each body `reader` takes within `seconds` while the
// senders retry, until `want` came.
std::vector<std::uint64_t> take(LinkSide& reader, std::vector<LinkSide*> senders, std::size_t want, double seconds) {
  std::vector<std::uint64_t> marks;
  const auto deadline = LinkClock::now() + std::chrono::duration_cast<LinkClock::duration>(std::chrono::duration<double>(seconds));
  while (marks.size() < want && LinkClock::now() < deadline) {
    std::vector<zmq::pollitem_t> items;
    reader.links->poll_items(items);
    for (LinkSide* s : senders) s->links->poll_items(items);
    zmq::poll(items, std::chrono::milliseconds(20));
    for (LinkSide* s : senders) s->links->retry();
    net::ReceivedBytes b;
    while (reader.links->receive(b)) {
      std::uint64_t mark = 0;
      EXPECT_TRUE(decode_tokens(
                      b.bytes(), [](std::uint32_t k) { return k == 0 ? std::size_t{8} : 0; },
                      [&](std::uint32_t, bool, std::span<const std::byte> t, std::size_t n) {
                        if (n > 0) std::memcpy(&mark, t.data(), 8);
                      })
                      .ok());
      marks.push_back(mark);
    }
  }
  return marks;
}

// Links of node 0 (the sender) to node 1 (`reader`, at `endpoint` with `key`), incarnation `inc`.
Status link_to(LinkSide& sender, const std::string& endpoint, const std::string& key, std::uint32_t inc) {
  sender.links->expect({NodeLink{}, NodeLink{endpoint, key}}, 0, inc);
  return sender.links->connect();
}

TEST(StreamNodeLinks, TokensGoStraightToTheNodeAndAnOlderIncarnationsAreDropped) {
  LinkSide reader(net::SecurityOptions{}), sender(net::SecurityOptions{});
  ASSERT_TRUE(reader.links && sender.links);
  ASSERT_NE(reader.socket->port(), 0u) << "a node of a driver on loopback has a link socket";
  reader.links->expect({NodeLink{}, NodeLink{}}, 1, 2);
  // Sent in incarnation 1 (abandoned), then in 2: only the second is taken.
  ASSERT_TRUE(link_to(sender, reader.endpoint(), "", 1).ok());
  EXPECT_TRUE(sender.links->direct(1));
  EXPECT_FALSE(sender.links->direct(0)) << "a node does not link to itself";
  sender.links->send(1, tokens_for_node_1(11, 4));
  ASSERT_TRUE(link_to(sender, reader.endpoint(), "", 2).ok());
  for (std::uint64_t m = 21; m <= 23; ++m) sender.links->send(1, tokens_for_node_1(m, 1000));
  const auto marks = take(reader, {&sender}, 3, 10);
  EXPECT_EQ(marks, (std::vector<std::uint64_t>{21, 22, 23})) << "in order, none of the abandoned incarnation";
  EXPECT_GE(sender.links->sent_bytes(), 3 * 8000u);
  EXPECT_EQ(reader.links->refused_messages(), 0u);
}

TEST(StreamNodeLinks, AHandshakeRefusedBeforeTheKeyIsListedLosesNothing) {
  // A node may dial another before that one has taken its WELCOME (and the
  // driver's keys): the first handshakes are refused, and what was given to
  // send meanwhile must still arrive, in order, once the key is let in.
  testing::KeyDir keys;
  const std::string reader_key = keys.make("reader"), sender_key = keys.make("sender");
  LinkSide reader(keys.of("reader")), sender(keys.of("sender"));
  ASSERT_TRUE(reader.links && sender.links);
  reader.links->expect({NodeLink{}, NodeLink{}}, 1, 0);
  ASSERT_TRUE(link_to(sender, reader.endpoint(), reader_key, 0).ok());
  for (std::uint64_t m = 1; m <= 3; ++m) sender.links->send(1, tokens_for_node_1(m, 100));
  std::vector<std::uint64_t> got;
  const auto deadline = LinkClock::now() + std::chrono::seconds(10);
  while (reader.socket->refused_keys() == 0 && LinkClock::now() < deadline) {
    const auto more = take(reader, {&sender}, 1, 0.05);
    got.insert(got.end(), more.begin(), more.end());
  }
  ASSERT_GT(reader.socket->refused_keys(), 0u) << "the sender's key was let in before WELCOME listed it";
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(sender.links->idle()) << "the bodies wait while the handshake is refused";
  ASSERT_TRUE(reader.socket->admit({sender_key}).ok());
  const auto after = take(reader, {&sender}, 3, 15);
  got.insert(got.end(), after.begin(), after.end());
  EXPECT_EQ(got, (std::vector<std::uint64_t>{1, 2, 3})) << "what waited arrived whole and in order once the key was listed";
}

TEST(StreamNodeLinks, BodiesForANodeNotYetListeningWaitAndGoInOrder) {
  // The reader's port is taken, then freed: the sender's DEALER connects only
  // once the reader listens there, and what it was given meanwhile still arrives.
  LinkSide sender(net::SecurityOptions{});
  ASSERT_TRUE(sender.links);
  auto reader = std::make_unique<LinkSide>(net::SecurityOptions{});
  ASSERT_TRUE(reader->links);
  const std::string endpoint = reader->endpoint();
  const std::uint32_t port = reader->socket->port();
  reader.reset();  // nobody listens at `endpoint` now
  ASSERT_TRUE(link_to(sender, endpoint, "", 0).ok());
  for (std::uint64_t m = 1; m <= 5; ++m) sender.links->send(1, tokens_for_node_1(m, 10));
  // A reader on the same port (a plain ROUTER bound there, read through NodeLinks' rules by hand).
  zmq::context_t context(1);
  zmq::socket_t router(context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:" + std::to_string(port));
  std::vector<std::uint64_t> marks;
  const auto deadline = LinkClock::now() + std::chrono::seconds(15);
  while (marks.size() < 5 && LinkClock::now() < deadline) {
    std::vector<zmq::pollitem_t> items{{router.handle(), 0, ZMQ_POLLIN, 0}};
    sender.links->poll_items(items);
    zmq::poll(items, std::chrono::milliseconds(20));
    sender.links->retry();
    std::vector<zmq::message_t> parts;
    while (net::receive_message(router, parts)) {
      ASSERT_EQ(parts.size(), 3u);
      std::uint64_t mark = 0;
      ASSERT_TRUE(decode_tokens(
                      std::span<const std::byte>(static_cast<const std::byte*>(parts[2].data()), parts[2].size()),
                      [](std::uint32_t) { return std::size_t{8}; },
                      [&](std::uint32_t, bool, std::span<const std::byte> t, std::size_t) { std::memcpy(&mark, t.data(), 8); })
                      .ok());
      marks.push_back(mark);
    }
  }
  EXPECT_EQ(marks, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(sender.links->retry()) << "nothing left waiting";
  router.set(zmq::sockopt::linger, 0);
}

TEST(StreamNodeLinks, ANodeMaySendOnlyWhatNodesSendEachOther) {
  LinkSide reader(net::SecurityOptions{});
  ASSERT_TRUE(reader.links);
  reader.links->expect({NodeLink{}, NodeLink{}}, 1, 0);
  zmq::context_t context(1);
  auto dealer = net::make_worker_dealer(context, reader.endpoint(), net::SecurityOptions{});
  ASSERT_TRUE(dealer.ok()) << dealer.status().ToString();
  std::vector<std::byte> start, garbage{std::byte{0x77}, std::byte{1}};
  encode_type(StreamMessage::kStart, start);
  ASSERT_TRUE(net::send_envelope(*dealer, net::EnvelopeKind::kRequest, 0, start));
  ASSERT_TRUE(net::send_envelope(*dealer, net::EnvelopeKind::kRequest, 0, garbage));
  ASSERT_TRUE(net::send_envelope(*dealer, net::EnvelopeKind::kRequest, 0, tokens_for_node_1(5, 3)));
  const auto marks = take(reader, {}, 1, 10);
  EXPECT_EQ(marks, (std::vector<std::uint64_t>{5})) << "the TOKENS after the refused bodies still came";
  EXPECT_EQ(reader.links->refused_messages(), 2u) << "a START (only the driver sends it) and an unknown type";
}

// Node 0 sends marked tokens to node 1 through a relay that keeps every byte; returns what it saw.
std::string send_through_relay(bool keyed) {
  testing::KeyDir keys;
  const std::string reader_key = keyed ? keys.make("reader") : "", sender_key = keyed ? keys.make("sender") : "";
  LinkSide reader(keyed ? keys.of("reader") : net::SecurityOptions{}), sender(keyed ? keys.of("sender") : net::SecurityOptions{});
  EXPECT_TRUE(reader.links && sender.links);
  if (!reader.links || !sender.links) return "";
  if (keyed) {
    EXPECT_TRUE(reader.socket->admit({sender_key}).ok());
  }
  reader.links->expect({NodeLink{}, NodeLink{}}, 1, 0);
  redflow::testing::TcpRelay relay(static_cast<int>(reader.socket->port()));
  EXPECT_TRUE(link_to(sender, "tcp://127.0.0.1:" + std::to_string(relay.port()), reader_key, 0).ok());
  const std::uint64_t mark = 0x4b4e41544f4b4e41;  // "ANKOTANK" in the wire's bytes
  sender.links->send(1, tokens_for_node_1(mark, 64));
  EXPECT_EQ(take(reader, {&sender}, 1, 10), (std::vector<std::uint64_t>{mark}));
  return relay.seen();
}

TEST(StreamNodeLinks, WithKeysTokensCrossTheWireEncrypted) {
  const std::string needle = "ANKOTANKANKOTANK";
  const std::string plain = send_through_relay(false);
  EXPECT_NE(plain.find(needle), std::string::npos) << "control: without keys the relay sees the tokens (" << plain.size() << " bytes)";
  const std::string keyed = send_through_relay(true);
  EXPECT_GT(keyed.size(), 512u) << "nothing crossed the relay";
  EXPECT_EQ(keyed.find(needle), std::string::npos) << "tokens crossed the wire in plain text";
}

TEST(StreamNodeLinks, ANodeWhoseKeyTheDriverNeverListedIsRefused) {
  testing::KeyDir keys;
  const std::string reader_key = keys.make("reader"), listed = keys.make("listed");
  ASSERT_FALSE(keys.make("stranger").empty());
  LinkSide reader(keys.of("reader")), stranger(keys.of("stranger")), member(keys.of("listed")), plain(net::SecurityOptions{});
  ASSERT_TRUE(reader.links && stranger.links && member.links && plain.links);
  ASSERT_TRUE(reader.socket->admit({listed}).ok());
  reader.links->expect({NodeLink{}, NodeLink{}}, 1, 0);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(reader.socket->port());
  ASSERT_TRUE(link_to(stranger, endpoint, reader_key, 0).ok());
  stranger.links->send(1, tokens_for_node_1(666, 8));
  ASSERT_TRUE(link_to(plain, endpoint, "", 0).ok());
  plain.links->send(1, tokens_for_node_1(667, 8));
  const auto deadline = LinkClock::now() + std::chrono::seconds(10);
  std::vector<std::uint64_t> got;
  while (reader.socket->refused_keys() == 0 && LinkClock::now() < deadline) {
    const auto more = take(reader, {&stranger, &plain}, 1, 0.1);
    got.insert(got.end(), more.begin(), more.end());
  }
  EXPECT_GT(reader.socket->refused_keys(), 0u) << "the stranger's key was never refused";
  ASSERT_TRUE(link_to(member, endpoint, reader_key, 0).ok());
  member.links->send(1, tokens_for_node_1(7, 8));
  const auto more = take(reader, {&member, &stranger, &plain}, 1, 10);
  got.insert(got.end(), more.begin(), more.end());
  EXPECT_EQ(got, (std::vector<std::uint64_t>{7})) << "only the listed node's tokens came";
}

}  // namespace
}  // namespace redflow::stream
