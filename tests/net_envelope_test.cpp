// The wire of the remote tiles: every envelope kind and the worker's and
// driver's messages encode and decode to themselves, and anything malformed
// is refused with its named error, never read past its end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "byte_literals.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/worker_messages.hpp"

namespace redflow::net {
namespace {

std::vector<std::span<const std::byte>> parts_of(const std::vector<std::byte>& header, const std::vector<std::byte>* body) {
  std::vector<std::span<const std::byte>> p{header};
  if (body != nullptr) p.emplace_back(*body);
  return p;
}

TEST(NetEnvelope, EveryKindRoundTrips) {
  const std::vector<std::byte> body = {std::byte{1}, std::byte{2}, std::byte{3}};
  for (EnvelopeKind k : {EnvelopeKind::kHello, EnvelopeKind::kWelcome, EnvelopeKind::kRefused, EnvelopeKind::kHeartbeat,
                         EnvelopeKind::kRequest, EnvelopeKind::kReply, EnvelopeKind::kBye, EnvelopeKind::kAck,
                         EnvelopeKind::kRequests, EnvelopeKind::kReplies}) {
    std::vector<std::byte> header;
    encode_header(k, 0x0123456789abcdefULL, header);
    ASSERT_EQ(header.size(), kEnvelopeHeaderBytes);
    const bool with_body = k != EnvelopeKind::kHeartbeat && k != EnvelopeKind::kBye && k != EnvelopeKind::kAck;
    EXPECT_EQ(envelope_has_body(k), with_body) << envelope_kind_name(k);
    Envelope e;
    wire::Error error;
    ASSERT_TRUE(decode_envelope(parts_of(header, with_body ? &body : nullptr), e, error).ok()) << envelope_kind_name(k);
    EXPECT_EQ(e.kind, k);
    EXPECT_EQ(e.request, 0x0123456789abcdefULL);
    EXPECT_EQ(e.body.size(), with_body ? body.size() : 0u);
    // The wrong number of parts is refused.
    EXPECT_FALSE(decode_envelope(parts_of(header, with_body ? nullptr : &body), e, error).ok());
    EXPECT_EQ(error, wire::Error::kMalformed);
  }
}

TEST(NetEnvelope, MalformedHeadersAreRefusedByName) {
  std::vector<std::byte> good;
  encode_header(EnvelopeKind::kHeartbeat, 7, good);
  auto refused = [](std::vector<std::byte> header) {
    Envelope e;
    wire::Error error = wire::Error::kNone;
    const Status s = decode_envelope(parts_of(header, nullptr), e, error);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(wire::error_name(error)), std::string::npos) << s.message();
    return error;
  };
  EXPECT_EQ(refused(std::vector<std::byte>(good.begin(), good.begin() + 5)), wire::Error::kTruncated);
  auto bad = good;
  bad[0] = std::byte{'X'};
  EXPECT_EQ(refused(bad), wire::Error::kBadMagic);
  bad = good;
  bad[4] = std::byte{9};
  EXPECT_EQ(refused(bad), wire::Error::kWrongVersion);
  bad = good;
  bad[6] = std::byte{0};
  EXPECT_EQ(refused(bad), wire::Error::kUnknownKind);
  bad = good;
  bad[7] = std::byte{1};
  EXPECT_EQ(refused(bad), wire::Error::kMalformed);
  bad = good;
  bad.push_back(std::byte{0});
  EXPECT_EQ(refused(bad), wire::Error::kMalformed);
  Envelope e;
  wire::Error error;
  EXPECT_FALSE(decode_envelope({}, e, error).ok());
}

using testing::bytes_of;

TEST(NetEnvelope, ABatchHoldsItsEntriesInOrder) {
  const auto a = bytes_of({1, 2, 3});
  const std::vector<std::byte> empty;
  const std::vector<std::byte> largest(kMaxBatchedFrameBytes, std::byte{7});
  EXPECT_TRUE(BatchWriter::fits(largest));
  EXPECT_FALSE(BatchWriter::fits(std::vector<std::byte>(kMaxBatchedFrameBytes + 1)));
  BatchWriter writer;
  writer.add(41, a);
  writer.add(7, empty);
  writer.add(1ULL << 40, largest);
  ASSERT_EQ(writer.entries(), 3u);
  const std::vector<std::byte> body = writer.take();
  EXPECT_EQ(writer.entries(), 0u);
  EXPECT_TRUE(writer.take().empty());
  for (EnvelopeKind k : {EnvelopeKind::kRequests, EnvelopeKind::kReplies}) {
    std::vector<BatchEntry> entries;
    wire::Error error;
    ASSERT_TRUE(decode_batch(Envelope{k, 3, body}, entries, error).ok());
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].request, 41u);
    EXPECT_TRUE(std::equal(entries[0].frame.begin(), entries[0].frame.end(), a.begin(), a.end()));
    EXPECT_EQ(entries[1].request, 7u);
    EXPECT_TRUE(entries[1].frame.empty());
    EXPECT_EQ(entries[2].request, 1ULL << 40);
    EXPECT_TRUE(std::equal(entries[2].frame.begin(), entries[2].frame.end(), largest.begin(), largest.end()));
    // The frames are views into the body, not copies.
    EXPECT_GE(entries[2].frame.data(), body.data());
    EXPECT_LE(entries[2].frame.data() + entries[2].frame.size(), body.data() + body.size());
  }
}

TEST(NetEnvelope, ABatchThatDoesNotHoldItsCountIsRefusedWhole) {
  BatchWriter writer;
  writer.add(1, bytes_of({1, 2, 3, 4}));
  writer.add(2, bytes_of({5, 6}));
  const std::vector<std::byte> body = writer.take();
  auto refused = [](EnvelopeKind k, std::uint64_t count, std::span<const std::byte> b) {
    std::vector<BatchEntry> entries{BatchEntry{99, {}}};
    wire::Error error = wire::Error::kNone;
    const Status s = decode_batch(Envelope{k, count, b}, entries, error);
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(entries.empty()) << "nothing of a refused batch is acted on";
    EXPECT_NE(s.message().find(wire::error_name(error)), std::string::npos) << s.message();
    return error;
  };
  EXPECT_EQ(refused(EnvelopeKind::kRequests, 3, body), wire::Error::kTruncated);      // fewer entries than the count
  EXPECT_EQ(refused(EnvelopeKind::kRequests, 1, body), wire::Error::kMalformed);      // a batch of one is a REQUEST
  EXPECT_EQ(refused(EnvelopeKind::kRequests, 0, {}), wire::Error::kMalformed);
  EXPECT_EQ(refused(EnvelopeKind::kReplies, kMaxBatchEntries + 1, body), wire::Error::kOversized);
  EXPECT_EQ(refused(EnvelopeKind::kRequest, 2, body), wire::Error::kMalformed);       // not a batch kind
  for (std::size_t cut = 0; cut < body.size(); ++cut)                             // every truncation
    EXPECT_EQ(refused(EnvelopeKind::kReplies, 2, std::span(body).first(cut)), wire::Error::kTruncated) << cut;
  auto longer = body;
  longer.push_back(std::byte{0});
  EXPECT_EQ(refused(EnvelopeKind::kReplies, 2, longer), wire::Error::kTrailingBytes);
  // An entry claiming more than a batched frame may hold, though the bytes are there.
  std::vector<std::byte> big;
  BatchWriter w2;
  w2.add(1, bytes_of({1}));
  big = w2.take();
  const std::uint32_t huge = static_cast<std::uint32_t>(kMaxBatchedFrameBytes + 1);
  big.insert(big.end(), 8, std::byte{0});
  big.insert(big.end(), reinterpret_cast<const std::byte*>(&huge), reinterpret_cast<const std::byte*>(&huge) + 4);
  big.resize(big.size() + huge);
  EXPECT_EQ(refused(EnvelopeKind::kReplies, 2, big), wire::Error::kOversized);
}

TEST(NetEnvelope, AnOversizedControlBodyIsRefused) {
  std::vector<std::byte> header;
  encode_header(EnvelopeKind::kHello, 0, header);
  const std::vector<std::byte> body(kMaxControlBytes + 1);
  Envelope e;
  wire::Error error;
  EXPECT_FALSE(decode_envelope(parts_of(header, &body), e, error).ok());
  EXPECT_EQ(error, wire::Error::kOversized);
}

TEST(NetMessages, HelloWelcomeAndRefusedRoundTrip) {
  HelloMessage h;
  h.roles = {{Role::kTile, 1}, {Role::kNode, 2}, {Role::kTaskManager, 3}};
  h.name = "node7";
  h.host = "example";
  h.pid = 4242;
  h.cores = 4;
  h.slots = 16;
  h.slot_bytes = 8 << 20;
  h.functions = describe_functions(Registry::with_builtins(), "built-in");
  h.peer_port = 41234;
  h.public_key = std::string(40, 'p');
  h.operators = {"counter", "collect"};
  ASSERT_FALSE(h.functions.empty());
  std::vector<std::byte> bytes;
  encode(h, bytes);
  HelloMessage back;
  ASSERT_TRUE(decode(bytes, back).ok());
  EXPECT_EQ(back, h);
  // Every truncation is refused, none read past the end.
  for (std::size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode(std::span(bytes).first(n), back).ok()) << n;
  bytes.push_back(std::byte{0});
  EXPECT_FALSE(decode(bytes, back).ok());

  WelcomeMessage w{Role::kTaskManager, 3, 9, 50, 200, {std::string(40, 'k'), std::string(40, 'q')}, {std::byte{1}, std::byte{2}}};
  bytes.clear();
  encode(w, bytes);
  WelcomeMessage wb;
  ASSERT_TRUE(decode(bytes, wb).ok());
  EXPECT_EQ(wb, w);
  w.heartbeat_timeout_ms = 10;  // shorter than the interval
  bytes.clear();
  encode(w, bytes);
  EXPECT_FALSE(decode(bytes, wb).ok());
  w.heartbeat_timeout_ms = 200;
  bytes.clear();
  encode(w, bytes);
  bytes[0] = std::byte{kMaxRole + 1};  // a role no worker serves
  Status unknown = decode(bytes, wb);
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("role 4"), std::string::npos) << unknown.message();

  RefusedMessage r{"too many"};
  bytes.clear();
  encode(r, bytes);
  RefusedMessage rb;
  ASSERT_TRUE(decode(bytes, rb).ok());
  EXPECT_EQ(rb, r);
}

TEST(NetMessages, AHelloWithImpossibleSlotsOrAHugeCountIsRefused) {
  HelloMessage h;
  h.roles = {{Role::kTile, 1}};
  h.slots = 1;
  h.slot_bytes = 1;
  std::vector<std::byte> bytes;
  encode(h, bytes);
  HelloMessage back;
  Status s = decode(bytes, back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("malformed"), std::string::npos) << s.message();
  // A function count far beyond the bytes that follow.
  h.slots = 4;
  bytes.clear();
  encode(h, bytes);
  const std::uint32_t huge = 1u << 15;
  // The count is the field before the (empty) operators, the peer port and the (empty) public key.
  ASSERT_TRUE(h.functions.empty() && h.operators.empty() && h.public_key.empty());
  std::memcpy(bytes.data() + bytes.size() - 16, &huge, 4);
  s = decode(bytes, back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

// Roles: a HELLO offers each at most once, each at a version; a driver's
// refusal says what the worker serves and what was wanted.
TEST(NetMessages, AHelloOffersRolesOnceAndADriverSaysWhichItWanted) {
  HelloMessage h;
  h.roles = {{Role::kNode, 1}};
  h.name = "n";
  std::vector<std::byte> bytes;
  encode(h, bytes);
  HelloMessage back;
  ASSERT_TRUE(decode(bytes, back).ok()) << "a node needs no slots";
  EXPECT_EQ(role_refusal(back, Role::kNode, 1), "");
  const std::string other = role_refusal(back, Role::kTile, 5);
  EXPECT_NE(other.find("it serves stream node (protocol 1), not tile"), std::string::npos) << other;
  const std::string version = role_refusal(back, Role::kNode, 2);
  EXPECT_NE(version.find("it speaks stream node protocol version 1; the driver speaks 2"), std::string::npos) << version;

  for (const std::vector<RoleOffer>& bad : {std::vector<RoleOffer>{}, std::vector<RoleOffer>{{Role::kNode, 1}, {Role::kNode, 1}},
                                           std::vector<RoleOffer>{{Role::kNode, 0}}, std::vector<RoleOffer>{{static_cast<Role>(9), 1}}}) {
    h.roles = bad;
    bytes.clear();
    encode(h, bytes);
    Status s = decode(bytes, back);
    EXPECT_FALSE(s.ok()) << describe_roles(bad);
    EXPECT_NE(s.message().find("malformed"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace redflow::net
