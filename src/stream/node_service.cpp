// The stream node's side of each session event and what each node's
// message makes the driver do (node_service.hpp).
#include "stream/node_service.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "net/driver_messages.hpp"
#include "stream/profile.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {

namespace {
std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + " s";
}

net::PeerHubOptions node_session_options(const ClusterOptions& options) {
  net::PeerHubOptions o;
  o.log_name = "stream driver";
  o.role = net::Role::kNode;
  o.version = kStreamProtocolVersion;
  o.heartbeat_timeout_s = options.cluster.heartbeat_timeout_s;
  o.capacity = options.cluster.min_workers;
  o.full_reason = "this stream program has all the " + std::to_string(options.cluster.min_workers) + " nodes it waits for";
  return o;
}
}  // namespace

NodeService::NodeService(const Program& program, const RunOptions& run, const ClusterOptions& options, std::vector<unsigned> node_of)
    : program_(program),
      run_(run),
      options_(options),
      node_of_(std::move(node_of)),
      hub_(node_session_options(options), *this),
      relayed_tokens_(program.streams().size(), 0) {}

std::vector<StreamProfile> NodeService::relayed_streams() const {
  std::vector<StreamProfile> out;
  for (std::size_t i = 0; i < program_.streams().size(); ++i) {
    const Program::Stream& st = program_.streams()[i];
    if (node_of_[st.from] != node_of_[st.to])
      out.push_back(StreamProfile{program_.instances()[st.from].name, program_.instances()[st.to].name, relayed_tokens_[i], 0});
  }
  return out;
}

Status NodeService::none_came(const std::string& endpoint) const {
  std::string refused;
  for (const std::string& r : hub_.refusals()) refused += "; refused " + r;
  return Status::ResourceExhausted("stream driver: waited " + seconds_text(options_.cluster.wait_s) + " for " + std::to_string(options_.cluster.min_workers) +
                                   " worker(s), " + std::to_string(hub_.size()) + " came (start them: redflow worker --connect " + endpoint +
                                   ")" + refused);
}

std::string NodeService::who(std::size_t i) const { return describe(static_cast<unsigned>(i), hub_.peer(static_cast<unsigned>(i)).hello); }

void NodeService::send(std::size_t i, std::span<const std::byte> body) {
  hub_.send(static_cast<unsigned>(i), net::EnvelopeKind::kRequest, 0, std::vector<std::byte>(body.begin(), body.end()));
  nodes_[i].bytes_in += body.size();
}

void NodeService::send_all(StreamMessage type) {
  std::vector<std::byte> b;
  encode_type(type, b);
  for (std::size_t i = 0; i < nodes_.size(); ++i) send(i, b);
}

std::string NodeService::admit(const net::HelloMessage& hello) {
  std::set<std::string> has(hello.operators.begin(), hello.operators.end());
  std::string missing;
  for (const auto& inst : program_.instances())
    if (!has.count(inst.op) && missing.find("'" + inst.op + "'") == std::string::npos) missing += (missing.empty() ? "'" : ", '") + inst.op + "'";
  return missing.empty() ? std::string() : "it lacks the operator(s) " + missing + " that the program uses";
}

void NodeService::welcomed(unsigned n, Time) {
  nodes_.emplace_back();
  spdlog::info("stream driver: {} joined as node {}", hub_.peer(n).hello.name, n);
  if (nodes_.size() < options_.cluster.min_workers) return;
  for (unsigned k = 0; k < options_.cluster.min_workers; ++k) {
    SetupMessage setup = make_setup(program_, node_of_, k, options_.cluster.min_workers);
    setup.mode = run_.mode;
    setup.aggregate = options_.aggregate;
    setup.two_level = options_.two_level;
    setup.trace = run_.trace;
    std::vector<std::byte> body;
    encode(setup, body);
    send(k, body);
  }
}

bool NodeService::message(unsigned n, const net::Envelope& e, Time, zmq::message_t*) {
  if (e.kind != net::EnvelopeKind::kReply) return false;
  nodes_[n].bytes_out += e.body.size();
  on_reply(n, e.body);
  return true;
}

void NodeService::lost(unsigned n, const std::string& why, bool) {
  fail(Status::IOError(who(n) + " was lost mid-stream: " + why +
                       "; its operators held state, so the run cannot go on without it (docs/streams.md, \"When a node is lost\")"));
}

std::string NodeService::describe(unsigned n, const net::HelloMessage& hello) const {
  std::string ops;
  for (std::size_t k = 0; k < node_of_.size(); ++k)
    if (node_of_[k] == n) ops += (ops.empty() ? "" : ", ") + program_.instances()[k].name;
  return "stream worker '" + hello.name + "' (node " + std::to_string(n) + " on " + hello.host + ", operators " + ops + ")";
}

void NodeService::on_reply(std::size_t i, std::span<const std::byte> body) {
  auto type = message_type(body);
  if (!type.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + type.status().message()));
  switch (*type) {
    case StreamMessage::kReady:
      if (!nodes_[i].ready && ++ready_ == options_.cluster.min_workers) {
        start_ = std::chrono::steady_clock::now();
        send_all(StreamMessage::kStart);
      }
      nodes_[i].ready = true;
      return;
    case StreamMessage::kTokens: {
      auto node = tokens_node(body);
      if (!node.ok() || *node >= nodes_.size())
        return fail(Status::IOError(who(i) + " sent tokens to " + (node.ok() ? "node " + std::to_string(*node) + ", which does not exist" : node.status().message())));
      send(*node, body);
      relayed_ += body.size();
      // Counted by stream for the live sample; the node it goes to checks the body and names what is wrong in it.
      if (run_.on_sample) {
        const auto& streams = program_.streams();
        (void)decode_tokens(body, [&](std::uint32_t s) { return s < streams.size() ? streams[s].token_bytes : std::size_t{0}; },
                            [&](std::uint32_t s, bool, std::span<const std::byte>, std::size_t n) { relayed_tokens_[s] += n; });
      }
      return;
    }
    case StreamMessage::kDone: {
      if (nodes_[i].done) return;
      if (Status s = decode_done(body, nodes_[i].result); !s.ok()) return fail(Status::IOError(who(i) + ": " + s.message()));
      nodes_[i].done = true;
      ++done_;
      return;
    }
    case StreamMessage::kError: {
      std::string what;
      if (Status s = decode_error(body, what); !s.ok()) what = s.message();
      return fail(Status::ActorFailed(who(i) + " failed: " + what));
    }
    default: return fail(Status::IOError(who(i) + " sent a " + std::string(stream_message_name(*type)) + ", which only the driver sends"));
  }
}

RunResult NodeService::finish() {
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::map<std::string, OperatorProfile> ops;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    Node& p = nodes_[n];
    const net::HelloMessage& hello = hub_.peer(static_cast<unsigned>(n)).hello;
    for (auto& [name, bytes] : p.result.outputs) r.outputs[name] = std::move(bytes);
    for (auto& o : p.result.operators) {
      o.node = static_cast<int>(n);
      ops[o.name] = std::move(o);
    }
    for (auto& s : p.result.streams) r.streams.push_back(std::move(s));
    std::size_t count = 0;
    for (unsigned k : node_of_) count += k == n;
    r.nodes.push_back(NodeReport{hello.name, hello.host, count, p.bytes_in, p.bytes_out, p.result.seconds});
  }
  for (const auto& inst : program_.instances())
    if (auto it = ops.find(inst.name); it != ops.end()) r.operators.push_back(std::move(it->second));
  return r;
}

}  // namespace redflow::stream
