// Encoding and decoding of the envelope (envelope.hpp).
#include "net/envelope.hpp"

#include <string>
#include <utility>

#include "wire/codec.hpp"

namespace redflow::net {

namespace {
constexpr char kEnvelopeMagic[4] = {'R', 'F', 'N', 'E'};

bool is_control(EnvelopeKind k) {
  return k == EnvelopeKind::kHello || k == EnvelopeKind::kWelcome || k == EnvelopeKind::kRefused || k == EnvelopeKind::kRedirect;
}
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
    case EnvelopeKind::kRedirect: return "REDIRECT";
  }
  return "unknown";
}

bool envelope_has_body(EnvelopeKind k) {
  return k != EnvelopeKind::kHeartbeat && k != EnvelopeKind::kBye && k != EnvelopeKind::kAck && k != EnvelopeKind::kCancel;
}

void encode_header(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.raw(kEnvelopeMagic, 4);
  w.u16(kEnvelopeVersion);
  w.u8(static_cast<std::uint8_t>(kind));
  w.u8(0);
  w.u64(request);
}

void BatchWriter::add(std::uint64_t request, std::span<const std::byte> frame) {
  wire::Writer w(body_);
  w.u64(request);
  w.u32(static_cast<std::uint32_t>(frame.size()));
  w.raw(frame.data(), frame.size());
  ++entries_;
}

std::vector<std::byte> BatchWriter::take() {
  entries_ = 0;
  return std::exchange(body_, {});
}

Status decode_batch(const Envelope& batch, std::vector<BatchEntry>& out, wire::Error& error) {
  out.clear();
  error = wire::Error::kNone;
  const char* name = envelope_kind_name(batch.kind);
  auto refuse = [&](wire::Error e, const std::string& what) {
    out.clear();
    error = e;
    return wire::status("net envelope", e, std::string(name) + ": " + what);
  };
  if (batch.kind != EnvelopeKind::kRequests && batch.kind != EnvelopeKind::kReplies) return refuse(wire::Error::kMalformed, "not a batch");
  if (batch.request < 2 || batch.request > kMaxBatchEntries)
    return refuse(batch.request > kMaxBatchEntries ? wire::Error::kOversized : wire::Error::kMalformed,
                  "a batch of " + std::to_string(batch.request) + " entries (2 to " + std::to_string(kMaxBatchEntries) + ")");
  wire::Reader r(batch.body);
  out.reserve(batch.request);
  for (std::uint64_t i = 0; i < batch.request && !r.failed(); ++i) {
    BatchEntry entry;
    entry.request = r.u64("entry's request id");
    const std::uint32_t bytes = r.u32("entry's length");
    if (!r.failed() && bytes > kMaxBatchedFrameBytes)
      return refuse(wire::Error::kOversized, "an entry of " + std::to_string(bytes) + " bytes (at most " + std::to_string(kMaxBatchedFrameBytes) + ")");
    entry.frame = r.view("entry", bytes);
    out.push_back(entry);
  }
  r.finish("the batch");
  if (r.failed()) return refuse(r.error(), r.what());
  return Status::Ok();
}

Status decode_envelope(std::span<const std::span<const std::byte>> parts, Envelope& out, wire::Error& error) {
  auto refuse = [&](wire::Error e, const std::string& what) {
    error = e;
    return wire::status("net envelope", e, what);
  };
  error = wire::Error::kNone;
  if (parts.empty()) return refuse(wire::Error::kMalformed, "a message with no parts");
  if (parts[0].size() != kEnvelopeHeaderBytes)
    return refuse(parts[0].size() < kEnvelopeHeaderBytes ? wire::Error::kTruncated : wire::Error::kMalformed,
                  "a header of " + std::to_string(parts[0].size()) + " bytes, not " + std::to_string(kEnvelopeHeaderBytes));
  wire::Reader r(parts[0]);
  char magic[4];
  for (char& c : magic) c = static_cast<char>(r.u8("magic"));
  if (std::string_view(magic, 4) != std::string_view(kEnvelopeMagic, 4)) return refuse(wire::Error::kBadMagic, "not a redflow envelope");
  const std::uint16_t version = r.u16("version");
  if (version != kEnvelopeVersion)
    return refuse(wire::Error::kWrongVersion, "version " + std::to_string(version) + ", this build speaks " + std::to_string(kEnvelopeVersion));
  const std::uint8_t kind = r.u8("kind");
  if (kind < 1 || kind > static_cast<std::uint8_t>(EnvelopeKind::kRedirect)) return refuse(wire::Error::kUnknownKind, "kind " + std::to_string(kind));
  if (r.u8("reserved") != 0) return refuse(wire::Error::kMalformed, "reserved byte not 0");
  out.kind = static_cast<EnvelopeKind>(kind);
  out.request = r.u64("request id");
  const std::size_t want = envelope_has_body(out.kind) ? 2 : 1;
  if (parts.size() != want)
    return refuse(wire::Error::kMalformed, std::string(envelope_kind_name(out.kind)) + " in " + std::to_string(parts.size()) + " parts, not " +
                                            std::to_string(want));
  out.body = want == 2 ? parts[1] : std::span<const std::byte>();
  const std::size_t limit = is_control(out.kind) ? kMaxControlBytes : kMaxBodyBytes;
  if (out.body.size() > limit)
    return refuse(wire::Error::kOversized, std::string(envelope_kind_name(out.kind)) + " body of " + std::to_string(out.body.size()) +
                                            " bytes exceeds the limit of " + std::to_string(limit));
  return Status::Ok();
}

}  // namespace redflow::net
