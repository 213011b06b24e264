// The man-in-the-middle proxy (wire_proxy.hpp) does what its rules say: each
// fault on the message (or batch entry) it picks, in the direction it picks,
// counted; everything else passes untouched.
#include <gtest/gtest.h>

#include <vector>
#include <zmq.hpp>

#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net_fake_worker.hpp"
#include "runtime/tile_protocol.hpp"
#include "wire_proxy.hpp"

namespace redflow::testing {
namespace {

using net::EnvelopeKind;
using runtime::WireKind;

// A tile-protocol frame a worker could send: a status, or a slot's bytes.
std::vector<std::byte> status_frame() {
  std::vector<std::byte> f;
  runtime::encode(Status::Ok(), f);
  return f;
}
std::vector<std::byte> slot_data_frame(std::size_t bytes) {
  std::vector<std::byte> f;
  runtime::encode_slot_data(true, std::vector<std::byte>(bytes, std::byte{7}), f);
  return f;
}

// A driver (ROUTER) and a worker (DEALER) connected through a proxy.
struct ProxiedPair {
  zmq::context_t context{1};
  Router driver{context};
  WireProxy proxy{driver.endpoint};
  zmq::socket_t worker{context, zmq::socket_type::dealer};
  std::string route;

  explicit ProxiedPair(const std::vector<ProxyRule>& rules) {
    for (const ProxyRule& r : rules) proxy.add(r);
    proxy.start();
    worker.set(zmq::sockopt::linger, 0);
    worker.connect(proxy.endpoint());
    // A first message opens the proxy's link, so the driver knows where to answer.
    net::send_envelope(worker, EnvelopeKind::kHello, 0, std::vector<std::byte>(4));
    net::Envelope e;
    EXPECT_TRUE(driver.next(e, 5));
    route = driver.sender();
  }
  void reply(std::uint64_t id, const std::vector<std::byte>& frame) { net::send_envelope(worker, EnvelopeKind::kReply, id, frame); }
  // The REPLYs (and entries of REPLIES) the driver gets within `timeout_s`, as (id, frame).
  std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> replies(std::size_t want, double timeout_s = 3) {
    std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> got;
    net::Envelope e;
    while (got.size() < want && driver.next(e, timeout_s)) {
      if (e.kind == EnvelopeKind::kReply) got.emplace_back(e.request, std::vector<std::byte>(e.body.begin(), e.body.end()));
      if (e.kind == EnvelopeKind::kReplies) {
        std::vector<net::BatchEntry> entries;
        wire::Error error;
        EXPECT_TRUE(net::decode_batch(e, entries, error).ok());
        for (const auto& x : entries) got.emplace_back(x.request, std::vector<std::byte>(x.frame.begin(), x.frame.end()));
      }
    }
    return got;
  }
};

// Sends what `w` holds as one REPLIES.
void send_batch(zmq::socket_t& worker, net::BatchWriter& w) {
  const std::size_t entries = w.entries();  // before take() empties it
  net::send_envelope(worker, EnvelopeKind::kReplies, entries, w.take());
}

std::vector<std::uint64_t> ids_of(const std::vector<std::pair<std::uint64_t, std::vector<std::byte>>>& got) {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, f] : got) ids.push_back(id);
  return ids;
}

bool frame_reads(const std::vector<std::byte>& frame) {
  runtime::DecodedFrame out;
  return runtime::decode(frame, out).ok();
}

TEST(WireProxy, GarblesOnlyTheNthMatchingReply) {
  ProxyRule garble{.action = ProxyAction::kGarble, .envelope = EnvelopeKind::kReply, .frame = WireKind::kStatus, .nth = 2};
  ProxiedPair p({garble});
  p.reply(1, slot_data_frame(16));  // not a status: not counted
  for (std::uint64_t id = 2; id <= 4; ++id) p.reply(id, status_frame());
  const auto got = p.replies(4);
  ASSERT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(frame_reads(got[0].second));
  EXPECT_TRUE(frame_reads(got[1].second));
  runtime::DecodedFrame out;
  const Status s = runtime::decode(got[2].second, out);
  EXPECT_NE(s.message().find("bad magic"), std::string::npos) << s.ToString();
  EXPECT_TRUE(frame_reads(got[3].second));
  EXPECT_EQ(p.proxy.applied(0), 1);
  EXPECT_EQ(p.proxy.matched(0), 3);
}

TEST(WireProxy, DropsDuplicatesReordersAndRewritesIds) {
  ProxiedPair p({{.action = ProxyAction::kDrop, .envelope = EnvelopeKind::kReply, .nth = 1},
                 {.action = ProxyAction::kDuplicate, .envelope = EnvelopeKind::kReply, .nth = 1},
                 {.action = ProxyAction::kReorder, .envelope = EnvelopeKind::kReply, .nth = 1},
                 {.action = ProxyAction::kRewriteId, .envelope = EnvelopeKind::kReply, .nth = 2, .id_delta = 100}});
  // Rules are tried in order, the first that picks a message applies: reply 1
  // is dropped, 2 duplicated, 3 held behind 4, and 5 (rule 4's 2nd) re-labelled.
  for (std::uint64_t id = 1; id <= 5; ++id) p.reply(id, status_frame());
  EXPECT_EQ(ids_of(p.replies(5)), (std::vector<std::uint64_t>{2, 2, 4, 3, 105}));
  for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(p.proxy.applied(r), 1) << "rule " << r;
}

TEST(WireProxy, ReplacesABody) {
  ProxiedPair p({{.action = ProxyAction::kReplace, .envelope = EnvelopeKind::kReply, .nth = 1, .replacement = slot_data_frame(8)}});
  p.reply(1, status_frame());
  p.reply(2, status_frame());
  const auto got = p.replies(2);
  ASSERT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(got[0].second, slot_data_frame(8));
  EXPECT_EQ(got[1].second, status_frame());
}

TEST(WireProxy, RewritesTheKindOfOneEntryOfABatch) {
  ProxiedPair p({{.action = ProxyAction::kRewriteKind, .envelope = EnvelopeKind::kReply, .nth = 2, .new_kind = EnvelopeKind::kRequest}});
  net::BatchWriter w;
  for (std::uint64_t id = 1; id <= 3; ++id) w.add(id, status_frame());
  send_batch(p.worker, w);
  net::Envelope e;
  ASSERT_TRUE(p.driver.next(e, 3));
  EXPECT_EQ(e.kind, EnvelopeKind::kReplies);
  EXPECT_EQ(e.request, 2u);  // entries 1 and 3
  ASSERT_TRUE(p.driver.next(e, 3));
  EXPECT_EQ(e.kind, EnvelopeKind::kRequest);
  EXPECT_EQ(e.request, 2u);
}

TEST(WireProxy, DelaysOneMessageWhileOthersPass) {
  ProxiedPair p({{.action = ProxyAction::kDelay, .envelope = EnvelopeKind::kReply, .nth = 1, .delay_ms = 300}});
  const auto t0 = std::chrono::steady_clock::now();
  p.reply(1, status_frame());
  p.reply(2, status_frame());
  const auto got = p.replies(2);
  EXPECT_EQ(ids_of(got), (std::vector<std::uint64_t>{2, 1}));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
}

TEST(WireProxy, HitsOneEntryInsideABatch) {
  ProxiedPair p({{.action = ProxyAction::kDrop, .envelope = EnvelopeKind::kReply, .nth = 2},
                 {.action = ProxyAction::kFlipBit, .envelope = EnvelopeKind::kReply, .nth = 3, .bit = 0, .bit_from_end = true}});
  net::BatchWriter w;
  const std::vector<std::byte> data = slot_data_frame(64);
  for (std::uint64_t id = 1; id <= 4; ++id) w.add(id, data);
  send_batch(p.worker, w);
  const auto got = p.replies(3);
  ASSERT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 3, 4}));
  EXPECT_EQ(got[0].second, data);
  EXPECT_EQ(got[1].second, data);
  // Entry 4 (the rule's 3rd match: entry 2 was the drop rule's) has its last bit flipped.
  ASSERT_EQ(got[2].second.size(), data.size());
  EXPECT_EQ(got[2].second.back(), data.back() ^ std::byte{0x80});
  EXPECT_EQ(p.proxy.applied(0), 1);
  EXPECT_EQ(p.proxy.applied(1), 1);
}

TEST(WireProxy, ABatchLeftWithOneEntryGoesAlone) {
  ProxiedPair p({{.action = ProxyAction::kDrop, .envelope = EnvelopeKind::kReply, .nth = 1}});
  net::BatchWriter w;
  w.add(7, status_frame());
  w.add(8, status_frame());
  send_batch(p.worker, w);
  net::Envelope e;
  ASSERT_TRUE(p.driver.next(e, 3));
  EXPECT_EQ(e.kind, EnvelopeKind::kReply);
  EXPECT_EQ(e.request, 8u);
}

TEST(WireProxy, PicksByDirection) {
  ProxiedPair p({{.action = ProxyAction::kGarbleEnvelope, .direction = ProxyDirection::kToWorker, .envelope = EnvelopeKind::kRequest, .nth = 1}});
  p.reply(1, status_frame());  // from the worker: untouched
  EXPECT_EQ(p.replies(1).size(), 1u);
  net::send_envelope(p.driver.socket, EnvelopeKind::kRequest, 9, status_frame(), p.route);
  zmq::pollitem_t item{p.worker.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(3000));
  std::vector<zmq::message_t> parts;
  ASSERT_TRUE(net::receive_message(p.worker, parts));
  net::Envelope e;
  wire::Error error;
  EXPECT_FALSE(net::decode_envelope(net::part_spans(parts), e, error).ok());
  EXPECT_EQ(error, wire::Error::kBadMagic);
  EXPECT_EQ(p.proxy.applied(0), 1);
}

TEST(WireProxy, ProbabilityIsSeeded) {
  auto run = [](std::uint32_t seed) {
    ProxiedPair p({{.action = ProxyAction::kDrop, .envelope = EnvelopeKind::kReply, .probability = 0.5, .seed = seed, .limit = 0}});
    for (std::uint64_t id = 1; id <= 40; ++id) p.reply(id, status_frame());
    p.reply(41, slot_data_frame(8));  // a sentinel the rule (probability, any frame) may drop too
    auto got = ids_of(p.replies(41, 1));
    EXPECT_EQ(static_cast<std::size_t>(p.proxy.applied(0)), 41 - got.size());
    return std::make_pair(p.proxy.applied(0), got);
  };
  const auto a = run(3), b = run(3);
  EXPECT_GT(a.first, 5);
  EXPECT_LT(a.first, 36);
  EXPECT_EQ(a, b);
}

// SPITS's way round: the worker listens, the driver connects (to the proxy).
TEST(WireProxy, WorksWhenTheWorkerListens) {
  zmq::context_t context(1);
  Router worker(context);
  WireProxy proxy(worker.endpoint, WorkerSide::kListens);
  proxy.add({.action = ProxyAction::kGarble, .direction = ProxyDirection::kFromWorker, .envelope = EnvelopeKind::kReply, .nth = 1});
  proxy.start();
  zmq::socket_t driver(context, zmq::socket_type::dealer);
  driver.set(zmq::sockopt::linger, 0);
  driver.connect(proxy.endpoint());
  net::send_envelope(driver, EnvelopeKind::kRequest, 1, status_frame());
  net::Envelope e;
  ASSERT_TRUE(worker.next(e, 5));
  EXPECT_EQ(e.kind, EnvelopeKind::kRequest);
  EXPECT_TRUE(net::send_envelope(worker.socket, EnvelopeKind::kReply, 1, status_frame(), worker.sender()));
  zmq::pollitem_t item{driver.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(3000));
  std::vector<zmq::message_t> parts;
  ASSERT_TRUE(net::receive_message(driver, parts));
  wire::Error error;
  ASSERT_TRUE(net::decode_envelope(net::part_spans(parts), e, error).ok());
  EXPECT_EQ(e.kind, EnvelopeKind::kReply);
  EXPECT_FALSE(frame_reads(std::vector<std::byte>(e.body.begin(), e.body.end())));
  EXPECT_EQ(proxy.applied(0), 1);
  EXPECT_EQ(proxy.forwarded(ProxyDirection::kToWorker), 1u);
  EXPECT_EQ(proxy.forwarded(ProxyDirection::kFromWorker), 1u);
}

}  // namespace
}  // namespace redflow::testing
