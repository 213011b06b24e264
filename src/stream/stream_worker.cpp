// A stream node's process (stream_worker.hpp): the I/O thread's loop, and the
// node's part of the program on a Runner thread.
#include "stream/stream_worker.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <zmq.hpp>

#include "net/address_file.hpp"
#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "stream/runner.hpp"
#include "stream/stream_messages.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {

namespace {

using Clock = std::chrono::steady_clock;

// A message to a node is cut at about this size; a stream's run of tokens
// in one entry too, so one busy stream does not hold the others back.
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
// Without aggregation: tokens of one stream sent (one message each) per turn of the I/O loop.
constexpr std::size_t kTokensPerTurn = 4096;

// This node's part of the program while it runs.
class NodeRun {
 public:
  NodeRun(SetupMessage setup, Program program, unsigned threads, const net::Doorbell& doorbell)
      : setup_(std::move(setup)), program_(std::move(program)), doorbell_(doorbell) {
    options_.mode = setup_.mode;
    options_.threads = threads;
    options_.trace = setup_.trace;
    part_.local.resize(setup_.node_of.size());
    for (std::size_t i = 0; i < setup_.node_of.size(); ++i) part_.local[i] = setup_.node_of[i] == setup_.node;
    part_.two_level = setup_.two_level;
    part_.outgoing = [this] {
      if (!rung_.exchange(true)) doorbell_.ring();
    };
    runner_ = std::make_unique<Runner>(program_, options_, &part_);
  }
  ~NodeRun() {
    if (thread_.joinable()) {
      runner_->abort(Status::Internal("the node is shutting down"));
      thread_.join();
    }
  }

  Status prepare() {
    REDFLOW_RETURN_IF_ERROR(runner_->prepare());
    const auto& streams = program_.streams();
    for (std::size_t k = 0; k < streams.size(); ++k)
      if (TokenQueue* q = runner_->outgoing_queue(k)) outs_.push_back(Out{static_cast<std::uint32_t>(k), q, setup_.node_of[streams[k].to]});
    return Status::Ok();
  }
  void start() {
    started_ = true;
    thread_ = std::thread([this] {
      result_ = runner_->run();
      finished_.store(true);
      doorbell_.ring();
    });
  }
  bool started() const { return started_; }
  bool finished() const { return finished_.load(); }
  Result<RunResult> take_result() {
    thread_.join();
    return std::move(*result_);
  }
  void abort(Status why) { runner_->abort(std::move(why)); }

  // Delivers a TOKENS body from the driver; a named error if it does not fit.
  Status deliver(std::span<const std::byte> body) {
    return decode_tokens(
        body, [&](std::uint32_t k) { return runner_->incoming(k) ? program_.streams()[k].token_bytes : 0; },
        [&](std::uint32_t k, bool close, std::span<const std::byte> tokens, std::size_t count) {
          if (count > 0) runner_->deliver(k, tokens.data(), count);
          if (close) runner_->close_incoming(k);
        });
  }

  // Sends what the operators here wrote to streams bound elsewhere. True when
  // every such stream has ended and its end was sent.
  bool flush(zmq::socket_t& socket) {
    rung_.store(false);  // before draining: a write after this point rings again
    std::map<std::uint32_t, std::vector<std::byte>> bodies;
    std::vector<std::byte> run;
    bool all_closed = true, more = false;
    auto body_for = [&](std::uint32_t node) -> std::vector<std::byte>& {
      auto& b = bodies[node];
      if (b.empty()) TokenBatchWriter(b).begin(node);
      return b;
    };
    auto send = [&](std::uint32_t node) {
      auto it = bodies.find(node);
      if (it == bodies.end() || it->second.empty()) return;
      net::send_envelope(socket, net::EnvelopeKind::kReply, 0, it->second);
      sent_bytes_ += it->second.size();
      ++sent_messages_;
      it->second.clear();
    };
    for (Out& o : outs_) {
      if (o.closed_sent) continue;
      const bool closed = o.queue->closed();  // before popping: no token can follow what we then find
      const std::size_t size = o.queue->token_bytes();
      std::size_t count = 0;
      run.clear();
      auto emit = [&](bool close) {
        TokenBatchWriter(body_for(o.node)).add(o.stream, close, run, count);
        run.clear();
        count = 0;
        if (!setup_.aggregate || body_for(o.node).size() >= kBatchBytes) send(o.node);
      };
      // A bounded share per stream per call, so a producer faster than the
      // network cannot keep this thread from its heartbeats and its socket;
      // what is left is taken on the next turn of the loop (rung below).
      // Without aggregation every token is its own message (the ablation).
      const std::size_t budget = setup_.aggregate ? std::max<std::size_t>(1, kBatchBytes / size) : kTokensPerTurn;
      std::size_t taken = 0;
      bool drained = false;
      while (taken < budget) {
        const std::size_t want = setup_.aggregate ? budget - taken : 1;
        const std::size_t at = run.size();
        run.resize(at + want * size);
        const std::size_t n = o.queue->pop_many(run.data() + at, want);
        run.resize(at + n * size);
        if (n == 0) {
          drained = true;
          break;
        }
        taken += n;
        count += n;
        if (!setup_.aggregate) emit(false);
      }
      if (closed && drained) {
        emit(true);
        o.closed_sent = true;
      } else {
        all_closed = false;
        if (count > 0) emit(false);
        more |= !drained;
      }
    }
    if (more) doorbell_.ring();
    for (auto& [node, body] : bodies) send(node);
    return all_closed;
  }
  std::uint64_t sent_bytes() const { return sent_bytes_; }
  const SetupMessage& setup() const { return setup_; }

 private:
  struct Out {
    std::uint32_t stream;
    TokenQueue* queue;
    std::uint32_t node;
    bool closed_sent = false;
  };

  SetupMessage setup_;
  Program program_;
  const net::Doorbell& doorbell_;
  RunOptions options_;
  NodePart part_;
  std::unique_ptr<Runner> runner_;
  std::vector<Out> outs_;
  std::atomic<bool> rung_{false}, finished_{false};
  bool started_ = false;
  std::optional<Result<RunResult>> result_;
  std::thread thread_;
  std::uint64_t sent_bytes_ = 0, sent_messages_ = 0;
};

}  // namespace

Status run_stream_worker(const StreamWorkerOptions& options, const OperatorRegistry& registry) {
  zmq::context_t context(1);
  net::LinkWatch watch;  // what became of the connection, should no WELCOME come
  auto dealer = net::make_worker_dealer(context, options.connect, options.security, &watch);
  if (!dealer.ok()) return dealer.status();
  zmq::socket_t& socket = *dealer;
  const net::Doorbell doorbell;
  if (!doorbell.ok()) return Status::IOError("eventfd failed");

  net::HelloMessage hello;
  hello.tile_protocol = kStreamHelloProtocol;
  hello.host = net::this_process_record().host;
  hello.pid = static_cast<std::uint32_t>(getpid());
  hello.name = options.name.empty() ? hello.host + ":" + std::to_string(hello.pid) : options.name;
  hello.cores = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  // A node has no slots; the HELLO's tile fields say the least a tile may have.
  hello.slots = 2;
  hello.slot_bytes = 1;
  for (const auto& op : registry.names()) hello.functions.push_back({op, 0});
  std::vector<std::byte> body;
  encode(hello, body);
  const auto connect_deadline = net::welcome_deadline(options.connect_timeout_s);
  const bool keyed = !options.security.key_file.empty();
  if (!net::send_hello(socket, body, connect_deadline)) return net::no_welcome(options.connect, options.connect_timeout_s, keyed, &watch);

  std::optional<net::WelcomeMessage> welcome;
  std::unique_ptr<NodeRun> node;
  Status failure;  // why this node's part failed; reported, then returned at BYE
  std::optional<Result<RunResult>> outcome;  // the node's part, once it finished
  bool done_sent = false;
  auto heard = Clock::now();
  auto next_beat = heard;
  std::vector<zmq::message_t> parts;
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell.fd(), ZMQ_POLLIN, 0}};
  auto reply = [&](const std::vector<std::byte>& b) { net::send_envelope(socket, net::EnvelopeKind::kReply, 0, b); };
  auto report_error = [&](const Status& s) {
    if (!failure.ok()) return;
    failure = s;
    std::vector<std::byte> b;
    encode_error(s.ToString(), b);
    reply(b);
  };
  for (;;) {
    const auto interval = std::chrono::milliseconds(welcome ? welcome->heartbeat_interval_ms : 100);
    REDFLOW_RETURN_IF_ERROR(net::poll_for(items, next_beat - Clock::now()));
    if (items[1].revents & ZMQ_POLLIN) doorbell.drain();
    auto now = Clock::now();
    if (now >= next_beat) {
      if (welcome) net::send_envelope(socket, net::EnvelopeKind::kHeartbeat, 0, {});
      next_beat = now + interval;
    }
    while (net::receive_message(socket, parts)) {
      net::Envelope e;
      wire::Error error;
      if (Status s = net::decode_envelope(net::part_spans(parts), e, error); !s.ok()) return net::refuse_and_leave(socket, options.connect, s);
      heard = Clock::now();
      switch (e.kind) {
        case net::EnvelopeKind::kWelcome: {
          net::WelcomeMessage w;
          REDFLOW_RETURN_IF_ERROR(decode(e.body, w));
          if (!welcome) spdlog::info("stream worker '{}': welcomed as node {} by {}", hello.name, w.tile, options.connect);
          welcome = w;
          break;
        }
        case net::EnvelopeKind::kRefused: {
          net::RefusedMessage refused;
          REDFLOW_RETURN_IF_ERROR(decode(e.body, refused));
          return Status::InvalidArgument("the driver at " + options.connect + " refused this worker: " + refused.reason);
        }
        case net::EnvelopeKind::kRequest: {
          auto type = message_type(e.body);
          if (!type.ok()) return net::refuse_and_leave(socket, options.connect, type.status());
          if (*type == StreamMessage::kSetup) {
            if (node) {
              spdlog::warn("stream worker: ignored a second SETUP");
              break;
            }
            SetupMessage setup;
            Status s = decode(e.body, setup);
            Result<Program> program = s.ok() ? program_of(setup, registry) : Result<Program>(s);
            if (!program.ok()) {
              report_error(program.status());
              break;
            }
            node = std::make_unique<NodeRun>(std::move(setup), std::move(*program), options.threads, doorbell);
            if (Status p = node->prepare(); !p.ok()) {
              report_error(p);
              break;
            }
            std::vector<std::byte> b;
            encode_type(StreamMessage::kReady, b);
            reply(b);
          } else if (*type == StreamMessage::kStart) {
            if (node && failure.ok() && !node->started()) node->start();
          } else if (*type == StreamMessage::kTokens) {
            if (!node || !failure.ok()) break;
            // Tokens that do not fit this node's part are refused whole: a
            // stream program cannot go on with a hole in a stream.
            if (Status s = node->deliver(e.body); !s.ok()) {
              node->abort(s);
              report_error(s);
            }
          } else {
            spdlog::warn("stream worker: ignored a {} from the driver", stream_message_name(*type));
          }
          break;
        }
        case net::EnvelopeKind::kBye:
          socket.set(zmq::sockopt::linger, 500);  // what is already sent still goes out
          if (!failure.ok()) return failure;
          if (!done_sent)
            return Status::IOError("the driver at " + options.connect + " ended the run before this node's part finished (another node failed or was lost)");
          return Status::Ok();
        case net::EnvelopeKind::kHeartbeat: break;
        default: spdlog::warn("stream worker: ignored a {} from the driver", net::envelope_kind_name(e.kind)); break;
      }
    }
    if (node && node->started() && !done_sent && failure.ok()) {
      const bool all_sent = node->flush(socket);
      if (node->finished()) {
        if (!outcome) outcome = node->take_result();  // joins: the runner is done
        if (!outcome->ok()) {
          report_error(outcome->status());
        } else if (all_sent) {
          std::vector<std::byte> b;
          encode_done(**outcome, b);
          reply(b);
          done_sent = true;
        }
        // Else what the operators wrote before they finished is still going
        // out, a share per turn (flush rang the doorbell for the next one).
      }
    }
    now = Clock::now();
    if (!welcome) {
      if (now > connect_deadline) return net::no_welcome(options.connect, options.connect_timeout_s, keyed, &watch);
    } else if (now - heard > std::chrono::milliseconds(welcome->heartbeat_timeout_ms) + interval) {
      if (node) node->abort(Status::IOError("the driver went silent"));
      return Status::IOError("the driver at " + options.connect + " has been silent for more than " + std::to_string(welcome->heartbeat_timeout_ms) + " ms");
    }
  }
}

}  // namespace redflow::stream
