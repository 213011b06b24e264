// Encoding and decoding of the envelope (envelope.hpp).
#include "net/envelope.hpp"

#include <bit>
#include <string>
#include <utility>

#include "net/wire_codec.hpp"

namespace redflow::net {

static_assert(std::endian::native == std::endian::little, "the envelope's encoder assumes a little-endian host");

namespace {
constexpr char kEnvelopeMagic[4] = {'R', 'F', 'N', 'E'};

bool is_control(EnvelopeKind k) { return k == EnvelopeKind::kHello || k == EnvelopeKind::kWelcome || k == EnvelopeKind::kRefused; }
}  // namespace

const char* envelope_kind_name(EnvelopeKind k) {
  switch (k) {
    case EnvelopeKind::kHello: return "HELLO";
    case EnvelopeKind::kWelcome: return "WELCOME";
    case EnvelopeKind::kRefused: return "REFUSED";
    case EnvelopeKind::kHeartbeat: return "HEARTBEAT";
    case EnvelopeKind::kRequest: return "REQUEST";
    case EnvelopeKind::kReply: return "REPLY";
    case EnvelopeKind::kBye: return "BYE";
    case EnvelopeKind::kAck: return "ACK";
    case EnvelopeKind::kCancel: return "CANCEL";
    case EnvelopeKind::kRequests: return "REQUESTS";
    case EnvelopeKind::kReplies: return "REPLIES";
  }
  return "unknown";
}

bool envelope_has_body(EnvelopeKind k) {
  return k != EnvelopeKind::kHeartbeat && k != EnvelopeKind::kBye && k != EnvelopeKind::kAck && k != EnvelopeKind::kCancel;
}

void encode_header(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte>& out) {
  WireWriter w(out);
  w.raw(kEnvelopeMagic, 4);
  w.u16(kEnvelopeVersion);
  w.u8(static_cast<std::uint8_t>(kind));
  w.u8(0);
  w.u64(request);
}

void BatchWriter::add(std::uint64_t request, std::span<const std::byte> frame) {
  WireWriter w(body_);
  w.u64(request);
  w.u32(static_cast<std::uint32_t>(frame.size()));
  w.raw(frame.data(), frame.size());
  ++entries_;
}

std::vector<std::byte> BatchWriter::take() {
  entries_ = 0;
  return std::exchange(body_, {});
}

Status decode_batch(const Envelope& batch, std::vector<BatchEntry>& out, NetError& error) {
  out.clear();
  error = NetError::kNone;
  const char* name = envelope_kind_name(batch.kind);
  auto refuse = [&](NetError e, const std::string& what) {
    out.clear();
    error = e;
    return net_status("net envelope", e, std::string(name) + ": " + what);
  };
  if (batch.kind != EnvelopeKind::kRequests && batch.kind != EnvelopeKind::kReplies) return refuse(NetError::kMalformed, "not a batch");
  if (batch.request < 2 || batch.request > kMaxBatchEntries)
    return refuse(batch.request > kMaxBatchEntries ? NetError::kOversized : NetError::kMalformed,
                  "a batch of " + std::to_string(batch.request) + " entries (2 to " + std::to_string(kMaxBatchEntries) + ")");
  WireReader r(batch.body);
  out.reserve(batch.request);
  for (std::uint64_t i = 0; i < batch.request && !r.failed(); ++i) {
    BatchEntry entry;
    entry.request = r.u64("entry's request id");
    const std::uint32_t bytes = r.u32("entry's length");
    if (!r.failed() && bytes > kMaxBatchedFrameBytes)
      return refuse(NetError::kOversized, "an entry of " + std::to_string(bytes) + " bytes (at most " + std::to_string(kMaxBatchedFrameBytes) + ")");
    entry.frame = r.bytes("entry", bytes);
    out.push_back(entry);
  }
  r.finish("the batch");
  if (r.failed()) return refuse(r.error(), r.what());
  return Status::Ok();
}

Status decode_envelope(std::span<const std::span<const std::byte>> parts, Envelope& out, NetError& error) {
  auto refuse = [&](NetError e, const std::string& what) {
    error = e;
    return net_status("net envelope", e, what);
  };
  error = NetError::kNone;
  if (parts.empty()) return refuse(NetError::kMalformed, "a message with no parts");
  if (parts[0].size() != kEnvelopeHeaderBytes)
    return refuse(parts[0].size() < kEnvelopeHeaderBytes ? NetError::kTruncated : NetError::kMalformed,
                  "a header of " + std::to_string(parts[0].size()) + " bytes, not " + std::to_string(kEnvelopeHeaderBytes));
  WireReader r(parts[0]);
  char magic[4];
  for (char& c : magic) c = static_cast<char>(r.u8("magic"));
  if (std::string_view(magic, 4) != std::string_view(kEnvelopeMagic, 4)) return refuse(NetError::kBadMagic, "not a redflow envelope");
  const std::uint16_t version = r.u16("version");
  if (version != kEnvelopeVersion)
    return refuse(NetError::kWrongVersion, "version " + std::to_string(version) + ", this build speaks " + std::to_string(kEnvelopeVersion));
  const std::uint8_t kind = r.u8("kind");
  if (kind < 1 || kind > 11) return refuse(NetError::kUnknownKind, "kind " + std::to_string(kind));
  if (r.u8("reserved") != 0) return refuse(NetError::kMalformed, "reserved byte not 0");
  out.kind = static_cast<EnvelopeKind>(kind);
  out.request = r.u64("request id");
  const std::size_t want = envelope_has_body(out.kind) ? 2 : 1;
  if (parts.size() != want)
    return refuse(NetError::kMalformed, std::string(envelope_kind_name(out.kind)) + " in " + std::to_string(parts.size()) + " parts, not " +
                                            std::to_string(want));
  out.body = want == 2 ? parts[1] : std::span<const std::byte>();
  const std::size_t limit = is_control(out.kind) ? kMaxControlBytes : kMaxBodyBytes;
  if (out.body.size() > limit)
    return refuse(NetError::kOversized, std::string(envelope_kind_name(out.kind)) + " body of " + std::to_string(out.body.size()) +
                                            " bytes exceeds the limit of " + std::to_string(limit));
  return Status::Ok();
}

}  // namespace redflow::net
