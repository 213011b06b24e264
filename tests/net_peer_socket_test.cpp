// A worker's peer socket (src/net/peer_socket.hpp, peer_links.hpp; docs/security.md) with real
// ZeroMQ on loopback: two PeerLinks, each on its own context as in two worker
// processes, one serving a slot read and the other fetching it. With keys the
// value crosses the wire encrypted (a TCP relay between them sees no plain
// text, where the same fetch without keys shows it), a key the driver never
// authorized is refused, and whoever gets in may only read a slot.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/keys.hpp"
#include "net/peer_links.hpp"
#include "net/sockets.hpp"
#include "net/envelope.hpp"
#include "runtime/tile_protocol.hpp"
#include "key_dir.hpp"
#include "tcp_relay.hpp"

namespace redflow::net {
namespace {

using runtime::DataTag;
using Clock = std::chrono::steady_clock;

// The value the source serves: text a reader of the wire would recognise.
std::vector<std::byte> marked_value() {
  const std::string text = "PEER-SLOT-VALUE-IN-PLAIN-TEXT;PEER-SLOT-VALUE-IN-PLAIN-TEXT;";
  std::vector<std::byte> v(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) v[i] = static_cast<std::byte>(text[i]);
  return v;
}

bool wire_shows(const std::string& haystack, const std::vector<std::byte>& needle) {
  return haystack.find(std::string(reinterpret_cast<const char*>(needle.data()), needle.size())) != std::string::npos;
}

// One worker's side: its own context (as in its own process) and its links.
struct PeerSide {
  zmq::context_t context{1};
  std::unique_ptr<PeerSocket> socket;
  std::unique_ptr<PeerLinks> links;
  explicit PeerSide(const SecurityOptions& security) {
    auto opened = PeerSocket::open(context, "tcp://127.0.0.1:1", security);
    if (!opened.ok()) return;
    socket = std::move(*opened);
    links = std::make_unique<PeerLinks>(*socket);
  }
  ~PeerSide() {  // its sockets close before the context does
    links.reset();
    socket.reset();
  }
};

// Polls every side's sockets, serving each slot read the source gets with
// `value` and handing each piece a fetcher gets to `fetched`, until `done`
// or 20 s. The source answers a read of anything but slot 3 "not found".
struct Pump {
  PeerSide& source;
  std::vector<PeerSide*> fetchers;
  std::vector<std::byte> value;
  std::vector<std::string> served_routes;  // one per read the source served
  std::vector<std::byte> fetched;
  bool failed = false;
  std::string failure;

  bool run(const std::function<bool()>& done) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (Clock::now() > deadline) return false;
      std::vector<zmq::pollitem_t> items;
      source.links->poll_items(items);
      for (PeerSide* f : fetchers) f->links->poll_items(items);
      zmq::poll(items, std::chrono::milliseconds(20));
      PeerLinks::Request r;
      while (source.links->take_request(r)) {
        runtime::DecodedFrame read;
        std::vector<std::byte> answer;
        const bool decoded = runtime::decode(r.frame, read).ok() && read.kind == runtime::WireKind::kReadSlot;
        const bool holds = decoded && read.read_slot.slot == 3 && read.read_slot.range() == value.size();
        runtime::encode_slot_data(holds, holds ? std::span<const std::byte>(value) : std::span<const std::byte>(), answer);
        served_routes.push_back(r.route);
        source.links->reply(r.route, r.id, std::move(answer));
      }
      for (PeerSide* f : fetchers) {
        PeerLinks::Fetched got;
        while (f->links->take_fetched(got)) {
          if (!got.ok) {
            failed = true;
            runtime::DecodedFrame why;
            if (runtime::decode(got.answer, why).ok()) failure = why.status.ToString();
            continue;
          }
          const auto piece = got.piece();
          fetched.insert(fetched.end(), piece.begin(), piece.end());
        }
      }
    }
    return true;
  }
};

// The frame a driver sends a fetcher: fetch `bytes` bytes of slot 3 from the peer at `endpoint`.
void peer_data_node(const std::string& endpoint, const std::string& public_key, std::uint64_t bytes, runtime::DecodedFrame& out,
                    std::vector<std::byte>& storage) {
  runtime::DataNodeMessage m;
  m.tag = DataTag{1, 4, 0};
  m.slot = 0;
  m.bytes = bytes;
  m.source_tile = 0;
  m.source_slot = 3;
  storage.clear();
  runtime::encode(m, runtime::PeerSource{endpoint, public_key}, storage);
  ASSERT_TRUE(runtime::decode(storage, out).ok());
  ASSERT_EQ(out.kind, runtime::WireKind::kPeerDataNode);
}

// The fetch of a marked value through a relay; returns what the relay saw.
// With keys, the source lets in the fetcher's key (as WELCOME's list does).
std::string fetch_through_relay(bool keyed) {
  redflow::testing::KeyDir keys;
  EXPECT_TRUE(keys.ok());
  const std::string source_key = keyed ? keys.make("source") : "", fetcher_key = keyed ? keys.make("fetcher") : "";
  PeerSide source(keyed ? keys.of("source") : SecurityOptions{}), fetcher(keyed ? keys.of("fetcher") : SecurityOptions{});
  EXPECT_TRUE(source.links && fetcher.links);
  if (!source.links || !fetcher.links) return "";
  EXPECT_NE(source.socket->port(), 0u);
  if (keyed) {
    EXPECT_TRUE(source.socket->admit({fetcher_key}).ok());
  }
  redflow::testing::TcpRelay relay(static_cast<int>(source.socket->port()));
  EXPECT_NE(relay.port(), 0);
  Pump pump{source, {&fetcher}, marked_value(), {}, {}, false, ""};
  runtime::DecodedFrame frame;
  std::vector<std::byte> storage;
  peer_data_node("tcp://127.0.0.1:" + std::to_string(relay.port()), source_key, pump.value.size(), frame, storage);
  fetcher.links->fetch(7, frame);
  EXPECT_TRUE(pump.run([&] { return pump.failed || pump.fetched.size() >= pump.value.size(); })) << "the fetch never ended";
  EXPECT_FALSE(pump.failed) << pump.failure;
  EXPECT_EQ(pump.fetched, pump.value) << "the value did not arrive whole";
  return relay.seen();
}

TEST(NetPeerSocket, AKeyedFetchCrossesTheWireEncrypted) {
  // Control first: without keys the relay sees the value, so the check below can fail.
  const std::string plain = fetch_through_relay(false);
  EXPECT_TRUE(wire_shows(plain, marked_value())) << "the relay did not see the plain fetch (" << plain.size() << " bytes)";
  const std::string keyed = fetch_through_relay(true);
  EXPECT_GT(keyed.size(), marked_value().size()) << "nothing crossed the relay";
  EXPECT_FALSE(wire_shows(keyed, marked_value())) << "the peer value crossed the wire in plain text";
}

TEST(NetPeerSocket, AKeyTheDriverNeverListedIsRefusedAndTheListedOneStillFetches) {
  redflow::testing::KeyDir keys;
  ASSERT_TRUE(keys.ok());
  const std::string source_key = keys.make("source"), listed = keys.make("listed");
  ASSERT_FALSE(keys.make("stranger").empty());
  PeerSide source(keys.of("source")), stranger(keys.of("stranger")), member(keys.of("listed"));
  ASSERT_TRUE(source.links && stranger.links && member.links);
  ASSERT_TRUE(source.socket->admit({listed}).ok());
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(source.socket->port());
  runtime::DecodedFrame frame;
  std::vector<std::byte> storage;
  peer_data_node(endpoint, source_key, marked_value().size(), frame, storage);

  Pump refused{source, {&stranger}, marked_value(), {}, {}, false, ""};
  stranger.links->fetch(1, frame);
  ASSERT_TRUE(refused.run([&] { return source.links->refused_keys() > 0; })) << "the stranger's key was never refused";
  EXPECT_TRUE(refused.served_routes.empty()) << "the source served a peer whose key it never listed";
  EXPECT_TRUE(refused.fetched.empty()) << "the stranger got the value";

  Pump served{source, {&member}, marked_value(), {}, {}, false, ""};
  member.links->fetch(2, frame);
  ASSERT_TRUE(served.run([&] { return served.failed || served.fetched.size() >= served.value.size(); }));
  EXPECT_FALSE(served.failed) << served.failure;
  EXPECT_EQ(served.fetched, served.value);
  EXPECT_EQ(served.served_routes.size(), 1u);
  EXPECT_TRUE(refused.fetched.empty());
}

TEST(NetPeerSocket, APeerMayOnlyReadASlot) {
  // A peer that gets in (here: plain, on loopback) and asks to write a slot is
  // refused before the executor sees it; its next read is served.
  PeerSide source(SecurityOptions{});
  ASSERT_TRUE(source.links);
  ASSERT_NE(source.socket->port(), 0u);
  zmq::context_t context(1);
  auto dealer = make_worker_dealer(context, "tcp://127.0.0.1:" + std::to_string(source.socket->port()), SecurityOptions{});
  ASSERT_TRUE(dealer.ok()) << dealer.status().ToString();
  const std::vector<std::byte> value = marked_value();
  runtime::DataNodeMessage write;
  write.tag = DataTag{1, 4, 0};
  write.slot = 3;
  write.bytes = value.size();
  write.payload = value;
  std::vector<std::byte> frame;
  runtime::encode(write, frame);
  ASSERT_TRUE(send_envelope(*dealer, EnvelopeKind::kRequest, 1, frame));
  frame.clear();
  runtime::encode(runtime::ReadSlotMessage{3, DataTag{1, 4, 0}, value.size()}, frame);
  ASSERT_TRUE(send_envelope(*dealer, EnvelopeKind::kRequest, 2, frame));
  std::vector<PeerLinks::Request> taken;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (taken.empty() && Clock::now() < deadline) {
    std::vector<zmq::pollitem_t> items;
    source.links->poll_items(items);
    zmq::poll(items, std::chrono::milliseconds(20));
    PeerLinks::Request r;
    while (source.links->take_request(r)) taken.push_back(std::move(r));
  }
  ASSERT_EQ(taken.size(), 1u) << "the read after the refused write never came, or the write came through";
  EXPECT_EQ(taken[0].id, 2u) << "the write reached the executor";
  EXPECT_TRUE(runtime::frame_is(taken[0].frame, runtime::WireKind::kReadSlot));
  EXPECT_EQ(source.links->refused_messages(), 1u) << "the write was not counted as refused";
  dealer->close();
}

// Occurrences of `part` in `text`.
std::size_t lines_with(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

TEST(NetPeerSocket, AFloodOfRefusedRequestsIsLoggedAtTheFirstTenthHundredthAndThousandth) {
  // docs/security.md: a peer that keeps sending what is refused gets its 1st
  // refusal logged in full, then one line at the 10th, 100th and every
  // 1000th, and the count stays exact. 1000 writes at the peer socket.
  constexpr int kWrites = 1000;
  ::testing::internal::CaptureStdout();  // the library logs to its default logger, the console's stdout
  std::uint64_t refused = 0;
  {
    PeerSide source(SecurityOptions{});
    zmq::context_t context(1);
    auto dealer = source.links ? make_worker_dealer(context, "tcp://127.0.0.1:" + std::to_string(source.socket->port()), SecurityOptions{})
                               : Result<zmq::socket_t>(Status::Internal("no peer socket"));
    if (dealer.ok()) {
      std::vector<std::byte> frame;
      runtime::DataNodeMessage write;
      write.tag = DataTag{1, 4, 0};
      write.slot = 3;
      runtime::encode(write, frame);
      for (int i = 0; i < kWrites; ++i) send_envelope(*dealer, EnvelopeKind::kRequest, static_cast<std::uint64_t>(i + 1), frame);
      const auto deadline = Clock::now() + std::chrono::seconds(20);
      PeerLinks::Request r;
      while (source.links->refused_messages() < kWrites && Clock::now() < deadline) {
        std::vector<zmq::pollitem_t> items;
        source.links->poll_items(items);
        zmq::poll(items, std::chrono::milliseconds(20));
        while (source.links->take_request(r)) ADD_FAILURE() << "a write reached the executor";
      }
      refused = source.links->refused_messages();
      dealer->close();
    }
  }
  const std::string log = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(refused, static_cast<std::uint64_t>(kWrites));
  EXPECT_EQ(lines_with(log, "refused a message from a peer"), 4u) << log;
  EXPECT_EQ(lines_with(log, "a request that is not a slot read\n"), 1u) << "the first refusal is not logged alone, in full\n" << log;
  for (const char* n : {" (10 times)", " (100 times)", " (1000 times)"}) EXPECT_EQ(lines_with(log, n), 1u) << n << "\n" << log;
  EXPECT_EQ(lines_with(log, "refused 1000 message(s) from its peers in all"), 0u) << "the 1000th was logged; no summary is owed\n" << log;
}

}  // namespace
}  // namespace redflow::net
