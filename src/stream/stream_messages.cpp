// Encoding and decoding of the stream messages (stream_messages.hpp), with the
// field codec of src/wire/codec.hpp.
#include "stream/stream_messages.hpp"

#include <cstring>

#include "wire/codec.hpp"

namespace redflow::stream {

namespace {

bool same_streams(const std::vector<Program::Stream>& a, const std::vector<Program::Stream>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].from != b[i].from || a[i].from_port != b[i].from_port || a[i].to != b[i].to || a[i].to_port != b[i].to_port ||
        a[i].token_bytes != b[i].token_bytes)
      return false;
  return true;
}

// Decoding starts after the type byte, which must be `want`.
wire::Reader reader_for(std::span<const std::byte> body, StreamMessage want) {
  wire::Reader r(body);
  const auto t = static_cast<StreamMessage>(r.u8("type"));
  if (!r.failed() && t != want)
    r.fail(wire::Error::kUnknownKind, std::string("a ") + stream_message_name(t) + " body where a " + stream_message_name(want) + " was expected");
  return r;
}

void write_checkpoint(wire::Writer& w, const OperatorCheckpoint& c) {
  w.u8(c.finished);
  w.bytes(c.state);
  w.u32(static_cast<std::uint32_t>(c.channels.size()));
  for (const auto& ch : c.channels) w.bytes(ch);
}

OperatorCheckpoint read_checkpoint(wire::Reader& r) {
  OperatorCheckpoint c;
  c.finished = r.boolean("finished");
  const auto state = r.bytes("state", kMaxValueBytes);
  c.state.assign(state.begin(), state.end());
  const std::size_t channels = r.count("channels", kMaxProgramItems, 4);
  for (std::size_t i = 0; i < channels && !r.failed(); ++i) {
    const auto ch = r.bytes("channel", kMaxValueBytes);
    c.channels.emplace_back(ch.begin(), ch.end());
  }
  return c;
}

}  // namespace

const char* stream_message_name(StreamMessage t) {
  switch (t) {
    case StreamMessage::kSetup: return "SETUP";
    case StreamMessage::kReady: return "READY";
    case StreamMessage::kStart: return "START";
    case StreamMessage::kTokens: return "TOKENS";
    case StreamMessage::kDone: return "DONE";
    case StreamMessage::kError: return "ERROR";
    case StreamMessage::kCheckpoint: return "CHECKPOINT";
    case StreamMessage::kBarrier: return "BARRIER";
    case StreamMessage::kSnapshot: return "SNAPSHOT";
    case StreamMessage::kCredit: return "CREDIT";
    case StreamMessage::kSent: return "SENT";
    case StreamMessage::kOutput: return "OUTPUT";
  }
  return "unknown";
}

bool operator==(const SetupMessage& a, const SetupMessage& b) {
  return a.protocol == b.protocol && a.node == b.node && a.nodes == b.nodes && a.mode == b.mode && a.two_level == b.two_level &&
         a.aggregate == b.aggregate && a.trace == b.trace && a.buffer_bytes == b.buffer_bytes && a.instances == b.instances && same_streams(a.streams, b.streams) && a.node_of == b.node_of &&
         a.incarnation == b.incarnation && a.epoch == b.epoch && a.checkpoints == b.checkpoints && a.restore == b.restore && a.links == b.links;
}

SetupMessage make_setup(const Program& p, const std::vector<unsigned>& node_of, unsigned node, unsigned nodes) {
  SetupMessage m;
  m.node = node;
  m.nodes = nodes;
  for (const auto& i : p.instances()) m.instances.push_back({i.name, i.op, i.args});
  m.streams = p.streams();
  m.node_of.assign(node_of.begin(), node_of.end());
  return m;
}

Result<Program> program_of(const SetupMessage& m, const OperatorRegistry& registry) {
  Program p;
  for (const auto& i : m.instances) REDFLOW_RETURN_IF_ERROR(p.add(registry, i.name, i.op, i.args));
  for (const auto& s : m.streams) {
    if (s.from >= m.instances.size() || s.to >= m.instances.size())
      return Status::InvalidArgument("stream SETUP: a stream names operator " + std::to_string(std::max(s.from, s.to)) + " of " +
                                     std::to_string(m.instances.size()));
    REDFLOW_RETURN_IF_ERROR(p.connect(m.instances[s.from].name, s.from_port, m.instances[s.to].name, s.to_port, s.token_bytes));
  }
  REDFLOW_RETURN_IF_ERROR(p.validate());
  return p;
}

void encode_type(StreamMessage t, std::vector<std::byte>& out) { wire::Writer(out).u8(static_cast<std::uint8_t>(t)); }

void encode_error(const std::string& what, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kError));
  w.str(what.substr(0, kMaxNameBytes * 4));
}

void encode(const SetupMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kSetup));
  w.u16(m.protocol);
  w.u32(m.node);
  w.u32(m.nodes);
  w.u8(m.mode == Mode::kPool ? 0 : 1);
  w.u8(m.two_level);
  w.u8(m.aggregate);
  w.u8(m.trace);
  w.u64(m.buffer_bytes);
  w.u32(static_cast<std::uint32_t>(m.instances.size()));
  for (const auto& i : m.instances) {
    w.str(i.name);
    w.str(i.op);
    w.u32(static_cast<std::uint32_t>(i.args.size()));
    for (const auto& [k, v] : i.args) {
      w.str(k);
      w.str(v);
    }
  }
  w.u32(static_cast<std::uint32_t>(m.streams.size()));
  for (const auto& s : m.streams) {
    w.u32(static_cast<std::uint32_t>(s.from));
    w.u32(static_cast<std::uint32_t>(s.from_port));
    w.u32(static_cast<std::uint32_t>(s.to));
    w.u32(static_cast<std::uint32_t>(s.to_port));
    w.u64(s.token_bytes);
  }
  w.u32(static_cast<std::uint32_t>(m.node_of.size()));
  for (auto n : m.node_of) w.u32(n);
  w.u32(m.incarnation);
  w.u32(m.epoch);
  w.u8(m.checkpoints);
  w.u32(static_cast<std::uint32_t>(m.restore.size()));
  for (const auto& [op, c] : m.restore) {
    w.u32(op);
    write_checkpoint(w, c);
  }
  w.u32(static_cast<std::uint32_t>(m.links.size()));
  for (const NodeLink& l : m.links) {
    w.str(l.endpoint);
    w.str(l.public_key);
  }
}

Status decode(std::span<const std::byte> body, SetupMessage& out) {
  wire::Reader r = reader_for(body, StreamMessage::kSetup);
  SetupMessage m;
  m.protocol = r.u16("protocol version");
  if (!r.failed() && m.protocol != kStreamProtocolVersion)
    r.fail(wire::Error::kWrongVersion, "stream protocol " + std::to_string(m.protocol) + ", this build speaks " + std::to_string(kStreamProtocolVersion));
  m.node = r.u32("node");
  m.nodes = r.u32("nodes");
  const std::uint8_t mode = r.u8("mode");
  m.mode = mode == 0 ? Mode::kPool : Mode::kThreadPerOperator;
  const std::uint8_t two_level = r.u8("two_level"), aggregate = r.u8("aggregate"), trace = r.u8("trace");
  m.two_level = two_level != 0;
  m.aggregate = aggregate != 0;
  m.trace = trace != 0;
  if (!r.failed() && (mode > 1 || two_level > 1 || aggregate > 1 || trace > 1)) r.fail(wire::Error::kMalformed, "a mode or switch byte above 1");
  m.buffer_bytes = r.u64("stream buffer bytes");
  const std::size_t n = r.count("operators", kMaxProgramItems, 12);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    SetupMessage::Instance inst;
    inst.name = r.str("operator name", kMaxNameBytes);
    inst.op = r.str("operator", kMaxNameBytes);
    const std::size_t args = r.count("args", kMaxProgramItems, 8);
    for (std::size_t a = 0; a < args && !r.failed(); ++a) {
      std::string k = r.str("arg key", kMaxNameBytes);
      inst.args[k] = r.str("arg value", kMaxNameBytes);
    }
    m.instances.push_back(std::move(inst));
  }
  const std::size_t s = r.count("streams", kMaxProgramItems, 24);
  for (std::size_t i = 0; i < s && !r.failed(); ++i) {
    Program::Stream st;
    st.from = r.u32("stream from");
    st.from_port = r.u32("stream from_port");
    st.to = r.u32("stream to");
    st.to_port = r.u32("stream to_port");
    st.token_bytes = r.u64("stream token");
    if (!r.failed() && (st.from >= m.instances.size() || st.to >= m.instances.size()))
      r.fail(wire::Error::kMalformed, "stream " + std::to_string(i) + " names an operator beyond the " + std::to_string(m.instances.size()) + " given");
    m.streams.push_back(st);
  }
  const std::size_t placed = r.count("placement", kMaxProgramItems, 4);
  for (std::size_t i = 0; i < placed && !r.failed(); ++i) m.node_of.push_back(r.u32("node of"));
  m.incarnation = r.u32("incarnation");
  m.epoch = r.u32("epoch");
  m.checkpoints = r.boolean("checkpoints");
  const std::size_t restored = r.count("restored operators", kMaxProgramItems, 13);
  for (std::size_t i = 0; i < restored && !r.failed(); ++i) {
    const std::uint32_t op = r.u32("restored operator");
    if (!r.failed() && op >= m.instances.size())
      r.fail(wire::Error::kMalformed, "a checkpoint of operator " + std::to_string(op) + " of " + std::to_string(m.instances.size()));
    OperatorCheckpoint c = read_checkpoint(r);
    m.restore.emplace_back(op, std::move(c));
  }
  const std::size_t links = r.count("node links", kMaxProgramItems, 8);
  for (std::size_t i = 0; i < links && !r.failed(); ++i) {
    NodeLink l;
    l.endpoint = r.str("node link endpoint", kMaxNameBytes);
    l.public_key = r.str("node link key", kMaxNameBytes);
    m.links.push_back(std::move(l));
  }
  r.finish("SETUP");
  if (!r.failed() && (m.nodes == 0 || m.node >= m.nodes))
    r.fail(wire::Error::kMalformed, "node " + std::to_string(m.node) + " of " + std::to_string(m.nodes));
  if (!r.failed() && m.node_of.size() != m.instances.size())
    r.fail(wire::Error::kMalformed, "a placement of " + std::to_string(m.node_of.size()) + " operators for " + std::to_string(m.instances.size()));
  if (!r.failed() && !m.links.empty() && m.links.size() != m.nodes)
    r.fail(wire::Error::kMalformed, "links to " + std::to_string(m.links.size()) + " nodes of " + std::to_string(m.nodes));
  for (std::size_t i = 0; i < m.node_of.size() && !r.failed(); ++i)
    if (m.node_of[i] >= m.nodes)
      r.fail(wire::Error::kMalformed, "operator " + std::to_string(i) + " placed on node " + std::to_string(m.node_of[i]) + " of " + std::to_string(m.nodes));
  if (r.failed()) return wire::status("stream SETUP", r.error(), r.what());
  out = std::move(m);
  return Status::Ok();
}

void encode_done(const RunResult& result, std::vector<std::byte>& out, std::uint64_t most_waiting_bytes) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kDone));
  w.f64(result.seconds);
  w.u32(static_cast<std::uint32_t>(result.outputs.size()));
  for (const auto& [name, bytes] : result.outputs) {
    w.str(name);
    w.bytes(bytes);
  }
  w.u32(static_cast<std::uint32_t>(result.operators.size()));
  for (const auto& o : result.operators) {
    w.str(o.name);
    w.u64(o.firings);
    w.f64(o.busy_s);
    w.u32(static_cast<std::uint32_t>(o.spans.size()));
    for (const auto& sp : o.spans) {
      w.f64(sp.start_s);
      w.f64(sp.end_s);
    }
  }
  w.u32(static_cast<std::uint32_t>(result.streams.size()));
  for (const auto& s : result.streams) {
    w.str(s.from);
    w.str(s.to);
    w.u64(s.tokens);
  }
  w.u64(most_waiting_bytes);
}

Status decode_done(std::span<const std::byte> body, RunResult& out, std::uint64_t* most_waiting_bytes) {
  wire::Reader r = reader_for(body, StreamMessage::kDone);
  RunResult m;
  m.seconds = r.f64("seconds");
  const std::size_t outputs = r.count("outputs", kMaxProgramItems, 8);
  for (std::size_t i = 0; i < outputs && !r.failed(); ++i) {
    std::string name = r.str("output name", kMaxNameBytes);
    const auto bytes = r.bytes("output", kMaxValueBytes);
    m.outputs[name].assign(bytes.begin(), bytes.end());
  }
  const std::size_t ops = r.count("operators", kMaxProgramItems, 24);
  for (std::size_t i = 0; i < ops && !r.failed(); ++i) {
    OperatorProfile o;
    o.name = r.str("operator name", kMaxNameBytes);
    o.firings = r.u64("firings");
    o.busy_s = r.f64("busy");
    const std::size_t spans = r.count("spans", kMaxProgramItems, 16);
    for (std::size_t k = 0; k < spans && !r.failed(); ++k) {
      FiringSpan sp;
      sp.start_s = r.f64("span start");
      sp.end_s = r.f64("span end");
      o.spans.push_back(sp);
    }
    m.operators.push_back(std::move(o));
  }
  const std::size_t streams = r.count("streams", kMaxProgramItems, 16);
  for (std::size_t i = 0; i < streams && !r.failed(); ++i) {
    StreamProfile s;
    s.from = r.str("stream from", kMaxNameBytes);
    s.to = r.str("stream to", kMaxNameBytes);
    s.tokens = r.u64("tokens");
    m.streams.push_back(std::move(s));
  }
  const std::uint64_t most = r.u64("most waiting bytes");
  r.finish("DONE");
  if (r.failed()) return wire::status("stream DONE", r.error(), r.what());
  out = std::move(m);
  if (most_waiting_bytes) *most_waiting_bytes = most;
  return Status::Ok();
}

Status decode_error(std::span<const std::byte> body, std::string& out) {
  wire::Reader r = reader_for(body, StreamMessage::kError);
  std::string what = r.str("error", kMaxNameBytes * 4);
  r.finish("ERROR");
  if (r.failed()) return wire::status("stream ERROR", r.error(), r.what());
  out = std::move(what);
  return Status::Ok();
}

void encode_ready(std::uint32_t incarnation, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kReady));
  w.u32(incarnation);
}

Status decode_ready(std::span<const std::byte> body, std::uint32_t& incarnation) {
  wire::Reader r = reader_for(body, StreamMessage::kReady);
  const std::uint32_t v = r.u32("incarnation");
  r.finish("READY");
  if (r.failed()) return wire::status("stream READY", r.error(), r.what());
  incarnation = v;
  return Status::Ok();
}

void encode_checkpoint(std::uint32_t epoch, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kCheckpoint));
  w.u32(epoch);
}

Status decode_checkpoint(std::span<const std::byte> body, std::uint32_t& epoch) {
  wire::Reader r = reader_for(body, StreamMessage::kCheckpoint);
  const std::uint32_t v = r.u32("epoch");
  r.finish("CHECKPOINT");
  if (r.failed()) return wire::status("stream CHECKPOINT", r.error(), r.what());
  epoch = v;
  return Status::Ok();
}

void encode_barriers(const std::vector<BarrierEntry>& barriers, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kBarrier));
  w.u32(static_cast<std::uint32_t>(barriers.size()));
  for (const auto& b : barriers) {
    w.u32(b.stream);
    w.u32(b.epoch);
    w.u64(b.position);
  }
}

Status decode_barriers(std::span<const std::byte> body, std::vector<BarrierEntry>& out) {
  wire::Reader r = reader_for(body, StreamMessage::kBarrier);
  std::vector<BarrierEntry> v;
  const std::size_t n = r.count("barriers", kMaxProgramItems, 16);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    BarrierEntry b;
    b.stream = r.u32("stream");
    b.epoch = r.u32("epoch");
    b.position = r.u64("position");
    v.push_back(b);
  }
  r.finish("BARRIER");
  if (r.failed()) return wire::status("stream BARRIER", r.error(), r.what());
  out = std::move(v);
  return Status::Ok();
}

void encode(const SnapshotMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kSnapshot));
  w.u32(m.epoch);
  w.u32(m.op);
  write_checkpoint(w, m.checkpoint);
}

Status decode(std::span<const std::byte> body, SnapshotMessage& out) {
  wire::Reader r = reader_for(body, StreamMessage::kSnapshot);
  SnapshotMessage m;
  m.epoch = r.u32("epoch");
  m.op = r.u32("operator");
  m.checkpoint = read_checkpoint(r);
  r.finish("SNAPSHOT");
  if (r.failed()) return wire::status("stream SNAPSHOT", r.error(), r.what());
  out = std::move(m);
  return Status::Ok();
}

Result<StreamMessage> message_type(std::span<const std::byte> body) {
  if (body.empty()) return wire::status("stream message", wire::Error::kTruncated, "an empty body");
  const auto t = static_cast<std::uint8_t>(body[0]);
  if (t < 1 || t > 12) return wire::status("stream message", wire::Error::kUnknownKind, "type " + std::to_string(t));
  return static_cast<StreamMessage>(t);
}

void TokenBatchWriter::begin(std::uint32_t node) {
  wire::Writer w(out_);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kTokens));
  w.u32(node);
}

void TokenBatchWriter::add(std::uint32_t stream, bool close, std::span<const std::byte> tokens, std::size_t count) {
  wire::Writer w(out_);
  w.u32(stream);
  w.u8(close);
  w.u32(static_cast<std::uint32_t>(count));
  w.raw(tokens.data(), tokens.size());
}

namespace {
// A CREDIT's or SENT's list: u32 count, then {u32 stream, u64 tokens}.
void write_counts(wire::Writer& w, const std::vector<TokenCount>& counts) {
  w.u32(static_cast<std::uint32_t>(counts.size()));
  for (const auto& c : counts) {
    w.u32(c.stream);
    w.u64(c.tokens);
  }
}
std::vector<TokenCount> read_counts(wire::Reader& r) {
  std::vector<TokenCount> v;
  const std::size_t n = r.count("stream counts", kMaxProgramItems, 12);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    TokenCount c;
    c.stream = r.u32("stream");
    c.tokens = r.u64("tokens");
    v.push_back(c);
  }
  return v;
}
}  // namespace

void encode_credits(std::uint32_t node, const std::vector<TokenCount>& credits, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kCredit));
  w.u32(node);
  write_counts(w, credits);
}

Status decode_credits(std::span<const std::byte> body, std::uint32_t& node, std::vector<TokenCount>& out) {
  wire::Reader r = reader_for(body, StreamMessage::kCredit);
  const std::uint32_t to = r.u32("node");
  std::vector<TokenCount> v = read_counts(r);
  r.finish("CREDIT");
  if (r.failed()) return wire::status("stream CREDIT", r.error(), r.what());
  node = to;
  out = std::move(v);
  return Status::Ok();
}

void encode_sent(std::uint64_t bytes, const std::vector<TokenCount>& sent, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kSent));
  w.u64(bytes);
  write_counts(w, sent);
}

Status decode_sent(std::span<const std::byte> body, std::uint64_t& bytes, std::vector<TokenCount>& out) {
  wire::Reader r = reader_for(body, StreamMessage::kSent);
  const std::uint64_t b = r.u64("bytes");
  std::vector<TokenCount> v = read_counts(r);
  r.finish("SENT");
  if (r.failed()) return wire::status("stream SENT", r.error(), r.what());
  bytes = b;
  out = std::move(v);
  return Status::Ok();
}

void encode(const OutputMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(StreamMessage::kOutput));
  w.u32(m.op);
  w.u64(m.offset);
  w.bytes(m.bytes);
}

Status decode(std::span<const std::byte> body, OutputMessage& out) {
  wire::Reader r = reader_for(body, StreamMessage::kOutput);
  OutputMessage m;
  m.op = r.u32("operator");
  m.offset = r.u64("offset");
  const auto bytes = r.bytes("bytes", kMaxValueBytes);
  m.bytes.assign(bytes.begin(), bytes.end());
  r.finish("OUTPUT");
  if (r.failed()) return wire::status("stream OUTPUT", r.error(), r.what());
  if (m.offset > kMaxValueBytes - m.bytes.size())
    return Status::InvalidArgument("stream OUTPUT: bytes at offset " + std::to_string(m.offset) + " end beyond the largest output");
  out = std::move(m);
  return Status::Ok();
}

Result<std::uint32_t> tokens_node(std::span<const std::byte> body) {
  wire::Reader r = reader_for(body, StreamMessage::kTokens);
  const std::uint32_t node = r.u32("node");
  if (r.failed()) return wire::status("stream TOKENS", r.error(), r.what());
  return node;
}

Status decode_tokens(std::span<const std::byte> body, const std::function<std::size_t(std::uint32_t)>& token_bytes,
                     const std::function<void(std::uint32_t, bool, std::span<const std::byte>, std::size_t)>& entry) {
  // Two passes: check everything, then deliver, so a bad entry delivers nothing.
  for (int pass = 0; pass < 2; ++pass) {
    wire::Reader r = reader_for(body, StreamMessage::kTokens);
    r.u32("node");
    while (!r.failed() && r.left() > 0) {
      const std::uint32_t stream = r.u32("stream");
      const std::uint8_t close = r.u8("close");
      const std::uint32_t count = r.u32("count");
      if (r.failed()) break;
      const std::size_t size = token_bytes(stream);
      if (size == 0) {
        r.fail(wire::Error::kMalformed, "stream " + std::to_string(stream) + " does not come to this node");
        break;
      }
      if (close > 1) {
        r.fail(wire::Error::kMalformed, "a close byte of " + std::to_string(close));
        break;
      }
      if (count > r.left() / size) {
        r.fail(wire::Error::kTruncated, std::to_string(count) + " tokens of " + std::to_string(size) + " bytes run past the message's end");
        break;
      }
      const auto tokens = r.view("tokens", std::size_t{count} * size);
      if (pass == 1) entry(stream, close != 0, tokens, count);
    }
    if (r.failed()) return wire::status("stream TOKENS", r.error(), r.what());
  }
  return Status::Ok();
}

}  // namespace redflow::stream
