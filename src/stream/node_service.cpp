// The stream node's side of each session event and what each node's
// message makes the driver do (node_service.hpp).
#include "stream/node_service.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "net/driver_messages.hpp"
#include "net/peer_socket.hpp"
#include "stream/builtin_operators.hpp"
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

NodeService::NodeService(const Program& program, const RunOptions& run, const ClusterOptions& options, std::vector<unsigned> node_of,
                         std::vector<std::string> peer_keys)
    : program_(program),
      run_(run),
      options_(options),
      node_of_(std::move(node_of)),
      hub_(node_session_options(options), *this),
      relayed_tokens_(program.streams().size(), 0),
      parts_(program.instances().size()),
      finals_(program.instances().size()),
      gathered_(program.instances().size()),
      peer_keys_(std::move(peer_keys)) {
  for (const auto& inst : program_.instances())
    if (!inst.spec.checkpointable) cannot_snapshot_ += (cannot_snapshot_.empty() ? "'" : ", '") + inst.name + "' (" + inst.op + ")";
  checkpoints_ = options_.checkpoint_every_s > 0 && cannot_snapshot_.empty();
  if (options_.checkpoint_every_s > 0 && !checkpoints_)
    spdlog::warn("stream driver: no checkpoints: operator(s) {} cannot snapshot their state, so a lost node ends the run", cannot_snapshot_);
}

unsigned NodeService::alive() const {
  unsigned n = 0;
  for (const Node& p : nodes_) n += p.alive;
  return n;
}

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

std::string NodeService::admit(const net::HelloMessage& hello) {
  std::set<std::string> has(hello.operators.begin(), hello.operators.end());
  std::string missing;
  for (const auto& inst : program_.instances())
    if (!has.count(inst.op) && missing.find("'" + inst.op + "'") == std::string::npos) missing += (missing.empty() ? "'" : ", '") + inst.op + "'";
  return missing.empty() ? std::string() : "it lacks the operator(s) " + missing + " that the program uses";
}

void NodeService::welcome(unsigned, net::WelcomeMessage& welcome) { welcome.peer_keys = peer_keys_; }

void NodeService::welcomed(unsigned n, Time) {
  nodes_.emplace_back();
  spdlog::info("stream driver: {} joined as node {}", hub_.peer(n).hello.name, n);
  if (nodes_.size() < options_.cluster.min_workers) return;
  send_setups();
}

// Each node still in the run gets its SETUP: the program, the placement, and
// after a loss the checkpoint its operators go on from.
void NodeService::send_setups() {
  waiting_ready_ = true;
  ready_ = 0;
  // Where each node's link socket is, as the driver sees the node (a worker
  // may not know its own routable address); none for a lost node.
  std::vector<NodeLink> links(nodes_.size());
  for (unsigned k = 0; k < nodes_.size(); ++k) {
    const net::PeerHub::Peer& p = hub_.peer(k);
    if (nodes_[k].alive) links[k] = NodeLink{net::peer_endpoint(p.address, p.hello.peer_port), p.hello.public_key};
    if (links[k].endpoint.empty()) links[k].public_key.clear();
  }
  for (unsigned k = 0; k < nodes_.size(); ++k) {
    if (!nodes_[k].alive) continue;
    SetupMessage setup = make_setup(program_, node_of_, k, static_cast<unsigned>(nodes_.size()));
    setup.mode = run_.mode;
    setup.aggregate = options_.aggregate;
    setup.two_level = options_.two_level;
    setup.trace = run_.trace;
    setup.buffer_bytes = run_.stream_buffer_bytes;
    setup.incarnation = incarnation_;
    setup.epoch = epoch_;
    setup.checkpoints = checkpoints_;
    for (std::size_t op = 0; op < complete_.size(); ++op)
      if (node_of_[op] == k && complete_[op]) setup.restore.emplace_back(static_cast<std::uint32_t>(op), *complete_[op]);
    if (options_.direct_links) setup.links = links;
    std::vector<std::byte> body;
    encode(setup, body);
    send(k, body);
    nodes_[k].ready = false;
  }
}

void NodeService::tick(Time now) {
  now_ = now;
  if (!checkpoints_ || !started_ || waiting_ready_ || in_flight_ || now < next_checkpoint_) return;
  ++epoch_;
  in_flight_ = true;
  for (auto& p : parts_) p.reset();
  std::vector<std::byte> b;
  encode_checkpoint(epoch_, b);
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].alive) send(i, b);
}

bool NodeService::message(unsigned n, const net::Envelope& e, Time now, zmq::message_t*) {
  if (e.kind != net::EnvelopeKind::kReply) return false;
  now_ = now;
  nodes_[n].bytes_out += e.body.size();
  on_reply(n, e.body);
  return true;
}

void NodeService::lost(unsigned n, const std::string& why, bool) {
  if (n >= nodes_.size() || !nodes_[n].alive) return;
  if (recover(n, why)) return;
  std::string because = "its operators held state, so the run cannot go on without it";
  if (started_ && !cannot_snapshot_.empty() && options_.checkpoint_every_s > 0)
    because += " (no checkpoints: operator(s) " + cannot_snapshot_ + " cannot snapshot their state)";
  else if (started_ && checkpoints_)
    because = "no other node is left to take its operators";
  fail(Status::IOError(who(n) + " was lost mid-stream: " + why + "; " + because + " (docs/streams.md, \"When a node is lost\")"));
}

bool NodeService::recover(unsigned n, const std::string& why) {
  if (!checkpoints_ || !started_ || alive() <= 1 || !error_.ok()) return false;
  const Time now = now_;
  spdlog::warn("stream driver: {} was lost ({}); going on from checkpoint {} on the other nodes", who(n), why, complete_epoch_);
  losses_.push_back(NodeLoss{hub_.peer(n).hello.name, why, complete_epoch_, std::chrono::duration<double>(now - start_).count(), 0});
  recovering_since_ = now;
  nodes_[n].alive = false;
  // Its operators to the survivors with the fewest.
  std::vector<std::size_t> count(nodes_.size(), 0);
  for (unsigned k : node_of_) ++count[k];
  for (auto& k : node_of_) {
    if (k != n) continue;
    unsigned best = n;
    for (unsigned c = 0; c < nodes_.size(); ++c)
      if (nodes_[c].alive && (best == n || count[c] < count[best])) best = c;
    k = best;
    ++count[best];
  }
  // The abandoned incarnation's checkpoint in progress and results go;
  // operators restored finished do not report again: their final state stays.
  ++incarnation_;
  in_flight_ = false;
  for (std::size_t op = 0; op < finals_.size(); ++op) finals_[op] = op < complete_.size() && complete_[op] && complete_[op]->finished ? complete_[op] : std::nullopt;
  // A collect operator not restored finished goes on from what its state
  // holds (nothing without a checkpoint); a finished one's output is whole.
  for (std::size_t op = 0; op < gathered_.size(); ++op) {
    if (program_.instances()[op].op != "collect" || finals_[op]) continue;
    gathered_[op].clear();
    if (op >= complete_.size() || !complete_[op]) continue;
    CollectOperator c;
    StateReader in(complete_[op]->state);
    std::string bad;
    try {
      c.restore(in);
      if (!in.done()) bad = "it has bytes it does not hold";
    } catch (const std::exception& e) {
      bad = e.what();
    }
    if (!bad.empty()) {
      fail(Status::IOError("stream driver: the saved state of collect operator '" + program_.instances()[op].name + "': " + bad));
      return false;
    }
    gathered_[op] = c.take_bytes();
  }
  done_ = 0;
  nodes_[n].result = {};  // what it reported before it was lost is redone by the others
  for (Node& p : nodes_) {
    if (!p.alive) continue;
    p.resetting = true;
    p.done = false;
    p.result = {};
  }
  send_setups();
  return true;
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
  // What a node sent before it took up the new incarnation belongs to the abandoned one.
  if (nodes_[i].resetting && *type != StreamMessage::kReady && *type != StreamMessage::kError) return;
  switch (*type) {
    case StreamMessage::kReady: return on_ready(i, body);
    case StreamMessage::kBarrier: return on_barriers(i, body);
    case StreamMessage::kSnapshot: return on_snapshot(i, body);
    case StreamMessage::kTokens: {
      auto node = tokens_node(body);
      if (!node.ok() || *node >= nodes_.size())
        return fail(Status::IOError(who(i) + " sent tokens to " + (node.ok() ? "node " + std::to_string(*node) + ", which does not exist" : node.status().message())));
      if (!nodes_[*node].alive) return;  // the run goes back to a checkpoint: these tokens were lost with it
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
    case StreamMessage::kCredit: return on_credits(i, body);
    case StreamMessage::kSent: return on_sent(i, body);
    case StreamMessage::kOutput: return on_output(i, body);
    case StreamMessage::kDone: {
      if (nodes_[i].done || !nodes_[i].alive) return;
      if (Status s = decode_done(body, nodes_[i].result, &nodes_[i].most_waiting_bytes); !s.ok()) return fail(Status::IOError(who(i) + ": " + s.message()));
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

void NodeService::on_ready(std::size_t i, std::span<const std::byte> body) {
  std::uint32_t incarnation = 0;
  if (Status s = decode_ready(body, incarnation); !s.ok()) return fail(Status::IOError(who(i) + ": " + s.message()));
  if (incarnation != incarnation_ || nodes_[i].ready) return;  // an abandoned incarnation's
  nodes_[i].ready = true;
  nodes_[i].resetting = false;
  if (++ready_ < alive()) return;
  const Time now = now_;
  if (!started_) start_ = now;
  else if (!losses_.empty()) losses_.back().resumed_s = std::chrono::duration<double>(now - recovering_since_).count();
  started_ = true;
  waiting_ready_ = false;
  next_checkpoint_ = now + std::chrono::duration_cast<Time::duration>(std::chrono::duration<double>(options_.checkpoint_every_s));
  std::vector<std::byte> b;
  encode_type(StreamMessage::kStart, b);
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (nodes_[k].alive) send(k, b);
}

void NodeService::on_barriers(std::size_t i, std::span<const std::byte> body) {
  std::vector<BarrierEntry> entries;
  if (Status s = decode_barriers(body, entries); !s.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + s.message()));
  std::map<unsigned, std::vector<BarrierEntry>> to;
  for (BarrierEntry b : entries) {
    if (b.stream >= program_.streams().size() || node_of_[program_.streams()[b.stream].from] != i)
      return fail(Status::IOError(who(i) + " sent a barrier on stream " + std::to_string(b.stream) + ", which does not leave it"));
    const unsigned dest = node_of_[program_.streams()[b.stream].to];
    if (dest == i) continue;
    to[dest].push_back(b);
  }
  for (auto& [dest, list] : to) {
    std::vector<std::byte> b;
    encode_barriers(list, b);
    send(dest, b);
  }
}

// A reader's grant goes to the node of the streams' producer, unchanged.
void NodeService::on_credits(std::size_t i, std::span<const std::byte> body) {
  std::uint32_t to = 0;
  std::vector<TokenCount> credits;
  if (Status s = decode_credits(body, to, credits); !s.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + s.message()));
  for (const TokenCount& c : credits) {
    const auto& streams = program_.streams();
    if (c.stream >= streams.size() || node_of_[streams[c.stream].to] != i || node_of_[streams[c.stream].from] != to || to == i)
      return fail(Status::IOError(who(i) + " granted credit on stream " + std::to_string(c.stream) + " from node " + std::to_string(to) +
                                  ", which it does not read from there"));
  }
  if (to >= nodes_.size() || !nodes_[to].alive) return;
  send(to, body);
}

// What a node sent straight to others: counts so far, each SENT replacing the last.
void NodeService::on_sent(std::size_t i, std::span<const std::byte> body) {
  std::uint64_t bytes = 0;
  std::vector<TokenCount> sent;
  if (Status s = decode_sent(body, bytes, sent); !s.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + s.message()));
  const auto& streams = program_.streams();
  for (const TokenCount& c : sent)
    if (c.stream >= streams.size() || node_of_[streams[c.stream].from] != i)
      return fail(Status::IOError(who(i) + " counted tokens on stream " + std::to_string(c.stream) + ", which does not leave it"));
  nodes_[i].bytes_to_nodes = bytes;
  for (const TokenCount& c : sent) relayed_tokens_[c.stream] = c.tokens;
}

std::uint64_t NodeService::relayed() const {
  std::uint64_t bytes = relayed_;
  for (const Node& p : nodes_) bytes += p.bytes_to_nodes;
  return bytes;
}

// A collect operator's bytes, in order: each OUTPUT starts where the last ended.
void NodeService::on_output(std::size_t i, std::span<const std::byte> body) {
  OutputMessage m;
  if (Status s = decode(body, m); !s.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + s.message()));
  if (m.op >= node_of_.size() || node_of_[m.op] != i || program_.instances()[m.op].op != "collect")
    return fail(Status::IOError(who(i) + " sent output of operator " + std::to_string(m.op) + ", which is not a collect operator it runs"));
  Bytes& out = gathered_[m.op];
  if (m.offset != out.size())
    return fail(Status::IOError(who(i) + " sent output of collect operator '" + program_.instances()[m.op].name + "' at byte " +
                                std::to_string(m.offset) + ", but the driver holds " + std::to_string(out.size())));
  out.insert(out.end(), m.bytes.begin(), m.bytes.end());
}

void NodeService::on_snapshot(std::size_t i, std::span<const std::byte> body) {
  SnapshotMessage m;
  if (Status s = decode(body, m); !s.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + s.message()));
  if (m.op >= node_of_.size() || node_of_[m.op] != i)
    return fail(Status::IOError(who(i) + " sent the state of operator " + std::to_string(m.op) + ", which it does not run"));
  if (m.epoch == kFinalEpoch) finals_[m.op] = std::move(m.checkpoint);
  else if (in_flight_ && m.epoch == epoch_) parts_[m.op] = std::move(m.checkpoint);
  if (!in_flight_) return;
  for (std::size_t op = 0; op < parts_.size(); ++op)
    if (!parts_[op] && !finals_[op]) return;
  // Whole: it replaces the last one.
  complete_.assign(parts_.size(), std::nullopt);
  for (std::size_t op = 0; op < parts_.size(); ++op) complete_[op] = parts_[op] ? std::move(parts_[op]) : finals_[op];
  complete_epoch_ = epoch_;
  ++checkpoints_done_;
  in_flight_ = false;
  next_checkpoint_ = now_ + std::chrono::duration_cast<Time::duration>(std::chrono::duration<double>(options_.checkpoint_every_s));
}

RunResult NodeService::finish() {
  RunResult r;
  r.seconds = std::chrono::duration<double>(now_ - start_).count();
  std::map<std::string, OperatorProfile> ops;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    Node& p = nodes_[n];
    const net::HelloMessage& hello = hub_.peer(static_cast<unsigned>(n)).hello;
    for (auto& [name, bytes] : p.result.outputs) r.outputs[name] = std::move(bytes);  // of operators other than collect
    for (auto& o : p.result.operators) {
      o.node = static_cast<int>(n);
      ops[o.name] = std::move(o);
    }
    for (auto& s : p.result.streams) r.streams.push_back(std::move(s));
    std::size_t count = 0;
    for (unsigned k : node_of_) count += k == n;
    r.nodes.push_back(NodeReport{hello.name, hello.host, count, p.bytes_in, p.bytes_out, p.bytes_to_nodes, p.result.seconds, p.most_waiting_bytes});
  }
  for (const auto& inst : program_.instances())
    if (auto it = ops.find(inst.name); it != ops.end()) r.operators.push_back(std::move(it->second));
  // A node's DONE carries no collect operator's output: each came as it
  // gathered. With checkpoints its final state says it finished.
  for (std::size_t op = 0; op < program_.instances().size(); ++op) {
    const auto& inst = program_.instances()[op];
    if (inst.op != "collect") continue;
    if (checkpoints_ && !finals_[op]) {
      fail(Status::Internal("stream driver: collect operator '" + inst.name + "' finished without its final state reaching the driver"));
      continue;
    }
    r.outputs[inst.name] = std::move(gathered_[op]);
  }
  r.checkpoints = checkpoints_done_;
  r.losses = losses_;
  return r;
}

}  // namespace redflow::stream
