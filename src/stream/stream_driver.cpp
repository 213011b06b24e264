// The driver of a stream program over worker processes (stream.hpp:
// run_cluster()). One ROUTER socket on this thread, which is the driver's one
// I/O thread: it welcomes `nodes` workers (HELLO, checked against the
// operators the program uses), places the program and sends each node its
// SETUP, STARTs them all once every one is READY, forwards every TOKENS body
// to the node it names, and gathers the DONEs. Liveness is the Paranoid
// Pirate of tile_server.hpp: HEARTBEAT both ways, a worker silent past the
// timeout (or one that says BYE) is lost, and that ends the run with an error
// naming it and the operators it held.
//
// Tokens cross nodes through the driver (a star) rather than worker to
// worker: one listening socket and one set of keys, and on a cluster switch
// the bytes cross the same two links either way (docs/streams.md).
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <set>
#include <zmq.hpp>

#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/refusal_log.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/stream.hpp"
#include "stream/profile.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kHeartbeat{250};

class Hub {
 public:
  Hub(const Program& program, const RunOptions& run, const ClusterOptions& options, std::vector<unsigned> node_of, zmq::socket_t& router)
      : program_(program), run_(run), options_(options), node_of_(std::move(node_of)), router_(router) {}
  ~Hub() {
    for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("stream driver: refused {} message(s) from {} in all", n, peer);
  }

  Result<RunResult> serve(const std::string& endpoint) {
    const auto joined_by = Clock::now() + std::chrono::duration<double>(options_.cluster.wait_s);
    auto next_beat = Clock::now(), next_progress = Clock::now();
    std::vector<zmq::message_t> parts;
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    while (error_.ok()) {
      if (Status s = net::poll_for(std::span(&item, 1), next_beat - Clock::now()); !s.ok()) fail(s);
      while (error_.ok() && net::receive_message(router_, parts, 4)) on_message(parts);
      const auto now = Clock::now();
      if (now >= next_beat) {
        for (auto& p : peers_) notice(p, net::EnvelopeKind::kHeartbeat);
        next_beat = now + kHeartbeat;
      }
      if (!error_.ok()) break;
      if (done_ == options_.cluster.min_workers) return finish();
      if (options_.on_progress && ready_ == options_.cluster.min_workers && now >= next_progress) {
        options_.on_progress(done_, relayed_);
        next_progress = now + std::chrono::milliseconds(100);
      }
      if (peers_.size() < options_.cluster.min_workers && now > joined_by)
        fail(Status::ResourceExhausted("stream driver: waited " + fmt_seconds(options_.cluster.wait_s) + " for " + std::to_string(options_.cluster.min_workers) +
                                       " worker(s), " + std::to_string(peers_.size()) + " came (start them: redflow worker --connect " +
                                       endpoint + ")"));
      // A peer silent past the timeout is lost after one more beat: if this
      // process was the one stalled (a loaded machine), what the peer sent
      // meanwhile may still be in ZeroMQ's hands, not yet read.
      for (std::size_t i = 0; i < peers_.size() && error_.ok(); ++i) {
        Peer& p = peers_[i];
        if (now - p.heard <= std::chrono::duration<double>(options_.cluster.heartbeat_timeout_s)) {
          p.suspect_since = Clock::time_point::max();
        } else if (p.suspect_since == Clock::time_point::max()) {
          p.suspect_since = now;
        } else if (now - p.suspect_since >= kHeartbeat) {
          fail(lost(i, "silent for more than " + fmt_seconds(options_.cluster.heartbeat_timeout_s)));
        }
      }
    }
    say_bye();
    return error_;
  }

 private:
  struct Peer {
    std::string id;  // ROUTER routing id
    net::HelloMessage hello;
    Clock::time_point heard;
    Clock::time_point suspect_since = Clock::time_point::max();  // first seen silent past the timeout
    bool ready = false, done = false;
    RunResult result;
    std::uint64_t bytes_in = 0, bytes_out = 0;
  };

  static std::string fmt_seconds(double s) {
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t + " s";
  }
  std::string who(std::size_t i) const {
    const Peer& p = peers_[i];
    std::string ops;
    for (std::size_t k = 0; k < node_of_.size(); ++k)
      if (node_of_[k] == i) ops += (ops.empty() ? "" : ", ") + program_.instances()[k].name;
    return "stream worker '" + p.hello.name + "' (node " + std::to_string(i) + " on " + p.hello.host + ", operators " + ops + ")";
  }
  Status lost(std::size_t i, const std::string& why) {
    return Status::IOError(who(i) + " was lost mid-stream: " + why +
                           "; its operators held state, so the run cannot go on without it (docs/streams.md, \"When a node is lost\")");
  }
  void fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
  }

  void notice(Peer& p, net::EnvelopeKind kind, std::span<const std::byte> body = {}) {
    net::send_envelope(router_, kind, 0, body, p.id, true);
    p.bytes_in += body.size();
  }
  // BYE to every worker; the socket then lingers so the BYEs leave before it closes.
  void say_bye() {
    for (auto& p : peers_) notice(p, net::EnvelopeKind::kBye);
    router_.set(zmq::sockopt::linger, 500);
  }
  void send_all(StreamMessage type) {
    std::vector<std::byte> b;
    encode_type(type, b);
    for (auto& p : peers_) notice(p, net::EnvelopeKind::kRequest, b);
  }

  void on_message(std::vector<zmq::message_t>& parts) {
    if (parts.empty()) return;
    const std::string id(static_cast<const char*>(parts[0].data()), parts[0].size());
    net::Envelope e;
    wire::Error error;
    const Status read = net::decode_envelope(net::part_spans(parts, 1), e, error);
    std::size_t i = 0;
    while (i < peers_.size() && peers_[i].id != id) ++i;
    if (!read.ok()) {
      // From a worker, it may have held tokens: the stream cannot go on without them.
      if (i < peers_.size()) return fail(lost(i, "it sent a message that cannot be read: " + read.message()));
      if (const std::uint64_t n = refusals_.refuse("an unknown peer"))
        spdlog::warn("stream driver: refused a message from an unknown peer: {}{}", read.message(), net::RefusalLog::times(n));
      return;
    }
    if (i == peers_.size()) return on_stranger(id, e);
    Peer& p = peers_[i];
    p.heard = Clock::now();
    p.bytes_out += e.body.size();
    switch (e.kind) {
      case net::EnvelopeKind::kHeartbeat: return;
      case net::EnvelopeKind::kBye: return fail(lost(i, "it said BYE"));
      case net::EnvelopeKind::kRefused: {
        net::RefusedMessage refused;
        const Status s = net::decode(e.body, refused);
        return fail(lost(i, "it could not read a message from this driver: " + (s.ok() ? refused.reason : s.message())));
      }
      case net::EnvelopeKind::kReply: return on_reply(i, e.body);
      // A HELLO again, a REQUEST, a WELCOME: the node no longer follows the
      // protocol, and what it sends next (tokens) cannot be trusted.
      default: return fail(lost(i, std::string("it sent a ") + net::envelope_kind_name(e.kind) + ", which a welcomed node never sends"));
    }
  }

  void on_stranger(const std::string& id, const net::Envelope& e) {
    if (e.kind != net::EnvelopeKind::kHello) return;  // a late message of a worker long gone
    net::HelloMessage hello;
    std::vector<std::byte> b;
    if (Status s = net::decode(e.body, hello); !s.ok()) {
      if (const std::uint64_t n = refusals_.refuse("an unknown peer"))
        spdlog::warn("stream driver: refused a HELLO from an unknown peer: {}{}", s.message(), net::RefusalLog::times(n));
      return;
    }
    auto refuse = [&](const std::string& why) {
      net::encode(net::RefusedMessage{why}, b);
      net::send_envelope(router_, net::EnvelopeKind::kRefused, 0, b, id, true);
    };
    if (peers_.size() == options_.cluster.min_workers) return refuse("this stream program has all the " + std::to_string(options_.cluster.min_workers) + " nodes it waits for");
    std::set<std::string> has(hello.operators.begin(), hello.operators.end());
    std::string missing;
    for (const auto& inst : program_.instances())
      if (!has.count(inst.op) && missing.find("'" + inst.op + "'") == std::string::npos) missing += (missing.empty() ? "'" : ", '") + inst.op + "'";
    std::string why = net::role_refusal(hello, net::Role::kNode, kStreamProtocolVersion);
    if (why.empty() && !missing.empty()) why = "it lacks the operator(s) " + missing + " that the program uses";
    if (!why.empty()) {
      refuse(why);
      return fail(Status::InvalidArgument("stream worker '" + hello.name + "' on " + hello.host + " was refused: " + why));
    }
    Peer p;
    p.id = id;
    p.hello = std::move(hello);
    p.heard = Clock::now();
    peers_.push_back(std::move(p));
    net::WelcomeMessage w;
    w.role = net::Role::kNode;
    w.tile = static_cast<std::uint32_t>(peers_.size() - 1);
    w.incarnation = peers_.size();
    w.heartbeat_interval_ms = static_cast<std::uint32_t>(kHeartbeat.count());
    w.heartbeat_timeout_ms = static_cast<std::uint32_t>(options_.cluster.heartbeat_timeout_s * 1000);
    net::encode(w, b);
    notice(peers_.back(), net::EnvelopeKind::kWelcome, b);
    spdlog::info("stream driver: {} joined as node {}", peers_.back().hello.name, w.tile);
    if (peers_.size() == options_.cluster.min_workers)
      for (unsigned n = 0; n < options_.cluster.min_workers; ++n) {
        SetupMessage setup = make_setup(program_, node_of_, n, options_.cluster.min_workers);
        setup.mode = run_.mode;
        setup.aggregate = options_.aggregate;
        setup.two_level = options_.two_level;
        setup.trace = run_.trace;
        std::vector<std::byte> body;
        encode(setup, body);
        notice(peers_[n], net::EnvelopeKind::kRequest, body);
      }
  }

  void on_reply(std::size_t i, std::span<const std::byte> body) {
    auto type = message_type(body);
    if (!type.ok()) return fail(Status::IOError(who(i) + " sent a malformed message: " + type.status().message()));
    switch (*type) {
      case StreamMessage::kReady:
        if (!peers_[i].ready && ++ready_ == options_.cluster.min_workers) {
          start_ = Clock::now();
          send_all(StreamMessage::kStart);
        }
        peers_[i].ready = true;
        return;
      case StreamMessage::kTokens: {
        auto node = tokens_node(body);
        if (!node.ok() || *node >= peers_.size())
          return fail(Status::IOError(who(i) + " sent tokens to " + (node.ok() ? "node " + std::to_string(*node) + ", which does not exist" : node.status().message())));
        notice(peers_[*node], net::EnvelopeKind::kRequest, body);
        relayed_ += body.size();
        return;
      }
      case StreamMessage::kDone: {
        if (peers_[i].done) return;
        if (Status s = decode_done(body, peers_[i].result); !s.ok()) return fail(Status::IOError(who(i) + ": " + s.message()));
        peers_[i].done = true;
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

  Result<RunResult> finish() {
    RunResult r;
    r.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    std::map<std::string, OperatorProfile> ops;
    for (std::size_t n = 0; n < peers_.size(); ++n) {
      Peer& p = peers_[n];
      for (auto& [name, bytes] : p.result.outputs) r.outputs[name] = std::move(bytes);
      for (auto& o : p.result.operators) {
        o.node = static_cast<int>(n);
        ops[o.name] = std::move(o);
      }
      for (auto& s : p.result.streams) r.streams.push_back(std::move(s));
      std::size_t count = 0;
      for (unsigned k : node_of_) count += k == n;
      r.nodes.push_back(NodeReport{p.hello.name, p.hello.host, count, p.bytes_in, p.bytes_out, p.result.seconds});
    }
    for (const auto& inst : program_.instances())
      if (auto it = ops.find(inst.name); it != ops.end()) r.operators.push_back(std::move(it->second));
    say_bye();
    return r;
  }

  const Program& program_;
  const RunOptions& run_;
  const ClusterOptions& options_;
  std::vector<unsigned> node_of_;
  zmq::socket_t& router_;
  std::vector<Peer> peers_;  // node i is peers_[i], in order of arrival
  net::RefusalLog refusals_;  // what strangers sent that was refused: logged first, then counted
  unsigned ready_ = 0, done_ = 0;
  std::uint64_t relayed_ = 0;  // TOKENS bytes forwarded
  Clock::time_point start_;
  Status error_;
};

}  // namespace

Result<RunResult> run_cluster(const Program& program, const RunOptions& node_options, const ClusterOptions& options) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  REDFLOW_RETURN_IF_ERROR(options.cluster.validate());
  if (options.cluster.min_workers == 0) return Status::InvalidArgument("run_cluster: cluster.min_workers (the nodes) must be at least 1");
  if (!(options.cluster.heartbeat_timeout_s >= 0.5)) return Status::InvalidArgument("run_cluster: a heartbeat timeout under 0.5 s would lose healthy workers");
  auto placed = place_program(program, options.cluster.min_workers, options.place, options.profile_json, "the profile", options.seed);
  if (!placed.ok()) return placed.status();
  net::SecurityOptions security;
  security.key_file = options.cluster.key_file;
  security.authorized_keys_file = options.cluster.authorized_keys_file;
  zmq::context_t context(1);
  net::ZapAuthenticator zap(context);
  std::string bound;
  auto router = net::make_driver_router(context, options.cluster.listen, bound, security, zap);
  if (!router.ok()) return router.status();
  if (options.cluster.on_listening) options.cluster.on_listening(bound);
  Hub hub(program, node_options, options, placed->placement.node_of, *router);
  return hub.serve(bound);
}

}  // namespace redflow::stream
