// The wire of the remote tiles: every envelope kind and the worker's and
// driver's messages encode and decode to themselves, and anything malformed
// is refused with its named error, never read past its end.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

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
                         EnvelopeKind::kRequest, EnvelopeKind::kReply, EnvelopeKind::kBye, EnvelopeKind::kAck}) {
    std::vector<std::byte> header;
    encode_header(k, 0x0123456789abcdefULL, header);
    ASSERT_EQ(header.size(), kEnvelopeHeaderBytes);
    const bool with_body = k != EnvelopeKind::kHeartbeat && k != EnvelopeKind::kBye && k != EnvelopeKind::kAck;
    EXPECT_EQ(envelope_has_body(k), with_body) << envelope_kind_name(k);
    Envelope e;
    NetError error;
    ASSERT_TRUE(decode_envelope(parts_of(header, with_body ? &body : nullptr), e, error).ok()) << envelope_kind_name(k);
    EXPECT_EQ(e.kind, k);
    EXPECT_EQ(e.request, 0x0123456789abcdefULL);
    EXPECT_EQ(e.body.size(), with_body ? body.size() : 0u);
    // The wrong number of parts is refused.
    EXPECT_FALSE(decode_envelope(parts_of(header, with_body ? nullptr : &body), e, error).ok());
    EXPECT_EQ(error, NetError::kMalformed);
  }
}

TEST(NetEnvelope, MalformedHeadersAreRefusedByName) {
  std::vector<std::byte> good;
  encode_header(EnvelopeKind::kHeartbeat, 7, good);
  auto refused = [](std::vector<std::byte> header) {
    Envelope e;
    NetError error = NetError::kNone;
    const Status s = decode_envelope(parts_of(header, nullptr), e, error);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(net_error_name(error)), std::string::npos) << s.message();
    return error;
  };
  EXPECT_EQ(refused(std::vector<std::byte>(good.begin(), good.begin() + 5)), NetError::kTruncated);
  auto bad = good;
  bad[0] = std::byte{'X'};
  EXPECT_EQ(refused(bad), NetError::kBadMagic);
  bad = good;
  bad[4] = std::byte{9};
  EXPECT_EQ(refused(bad), NetError::kWrongVersion);
  bad = good;
  bad[6] = std::byte{0};
  EXPECT_EQ(refused(bad), NetError::kUnknownKind);
  bad = good;
  bad[7] = std::byte{1};
  EXPECT_EQ(refused(bad), NetError::kMalformed);
  bad = good;
  bad.push_back(std::byte{0});
  EXPECT_EQ(refused(bad), NetError::kMalformed);
  Envelope e;
  NetError error;
  EXPECT_FALSE(decode_envelope({}, e, error).ok());
}

TEST(NetEnvelope, AnOversizedControlBodyIsRefused) {
  std::vector<std::byte> header;
  encode_header(EnvelopeKind::kHello, 0, header);
  const std::vector<std::byte> body(kMaxControlBytes + 1);
  Envelope e;
  NetError error;
  EXPECT_FALSE(decode_envelope(parts_of(header, &body), e, error).ok());
  EXPECT_EQ(error, NetError::kOversized);
}

TEST(NetMessages, HelloWelcomeAndRefusedRoundTrip) {
  HelloMessage h;
  h.tile_protocol = 1;
  h.name = "node7";
  h.host = "example";
  h.pid = 4242;
  h.cores = 4;
  h.slots = 16;
  h.slot_bytes = 8 << 20;
  h.functions = describe_functions(Registry::with_builtins(), "built-in");
  h.peer_port = 41234;
  h.public_key = std::string(40, 'p');
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

  WelcomeMessage w{3, 9, 50, 200, {std::string(40, 'k'), std::string(40, 'q')}};
  bytes.clear();
  encode(w, bytes);
  WelcomeMessage wb;
  ASSERT_TRUE(decode(bytes, wb).ok());
  EXPECT_EQ(wb, w);
  w.heartbeat_timeout_ms = 10;  // shorter than the interval
  bytes.clear();
  encode(w, bytes);
  EXPECT_FALSE(decode(bytes, wb).ok());

  RefusedMessage r{"too many"};
  bytes.clear();
  encode(r, bytes);
  RefusedMessage rb;
  ASSERT_TRUE(decode(bytes, rb).ok());
  EXPECT_EQ(rb, r);
}

TEST(NetMessages, AHelloWithImpossibleSlotsOrAHugeCountIsRefused) {
  HelloMessage h;
  h.tile_protocol = 1;
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
  // The count is the field before the peer port and the (empty) public key.
  ASSERT_TRUE(h.functions.empty() && h.public_key.empty());
  std::memcpy(bytes.data() + bytes.size() - 12, &huge, 4);
  s = decode(bytes, back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace redflow::net
