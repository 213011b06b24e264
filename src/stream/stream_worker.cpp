// The stream node role of a worker (stream_worker.hpp): what the session's
// I/O thread does for a node, and the node's part of the program on a Runner
// thread.
#include "stream/stream_worker.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <zmq.hpp>

#include "net/address_file.hpp"
#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "net/worker_session.hpp"
#include "stream/builtin_operators.hpp"
#include "stream/credit_window.hpp"
#include "stream/inbox.hpp"
#include "stream/node_links.hpp"
#include "stream/op_state.hpp"
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
// Bodies from other nodes taken per turn of the I/O loop.
constexpr int kBodiesPerTurn = 256;

// This node's part of the program while it runs.
class NodeRun {
 public:
  NodeRun(SetupMessage setup, Program program, unsigned threads, const net::Doorbell& doorbell)
      : setup_(std::move(setup)), program_(std::move(program)), doorbell_(doorbell) {
    options_.mode = setup_.mode;
    options_.threads = threads;
    options_.trace = setup_.trace;
    options_.stream_buffer_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(setup_.buffer_bytes, SIZE_MAX));
    part_.local.resize(setup_.node_of.size());
    for (std::size_t i = 0; i < setup_.node_of.size(); ++i) part_.local[i] = setup_.node_of[i] == setup_.node;
    part_.two_level = setup_.two_level;
    part_.credit_window = credit_windows(program_, setup_.node_of, setup_.buffer_bytes);
    part_.outgoing = [this] {
      if (!rung_.exchange(true)) doorbell_.ring();
    };
    part_.epoch = setup_.epoch;
    base_.assign(setup_.streams.size(), 0);
    if (!setup_.restore.empty()) {
      part_.restore.resize(setup_.node_of.size());
      for (auto& [op, c] : setup_.restore) part_.restore[op] = std::move(c);
      setup_.restore.clear();
      // A producer counts a barrier's position from its first token of this
      // incarnation; the reader's count starts with the tokens its checkpoint put back.
      for (std::size_t k = 0; k < setup_.streams.size(); ++k) {
        const Program::Stream& st = setup_.streams[k];
        const auto& c = part_.restore[st.to];
        if (setup_.node_of[st.to] == setup_.node && c && st.to_port < c->channels.size())
          base_[k] = c->channels[st.to_port].size() / std::max<std::size_t>(1, st.token_bytes);
      }
    }
    // What each collect operator gathers goes to the driver as it comes
    // (OUTPUT), from the I/O thread: queued here, sent by flush().
    part_.on_output = [this](std::size_t op, std::size_t offset, std::span<const std::byte> bytes) {
      std::lock_guard lock(reports_mutex_);
      if (outputs_.empty()) doorbell_.ring();
      OutputMessage* last = outputs_.empty() ? nullptr : &outputs_.back();
      if (last && last->op == op && last->offset + last->bytes.size() == offset && last->bytes.size() < kBatchBytes)
        last->bytes.insert(last->bytes.end(), bytes.begin(), bytes.end());
      else
        outputs_.push_back(OutputMessage{static_cast<std::uint32_t>(op), offset, std::vector<std::byte>(bytes.begin(), bytes.end())});
    };
    if (setup_.checkpoints) {
      // Each operator's part goes to the driver from the I/O thread: queued
      // here, sent by flush() (which sends the barriers with the tokens).
      part_.on_checkpoint = [this](std::size_t op, std::uint32_t epoch, OperatorCheckpoint c) {
        // A finished collect's output has gone out as OUTPUT, ahead of this
        // (one queue): its final state need not carry the bytes again.
        if (epoch == kFinalEpoch && setup_.instances[op].op == "collect") {
          StateWriter empty;
          CollectOperator().snapshot(empty);
          c.state = std::move(empty.bytes);
        }
        std::lock_guard lock(reports_mutex_);
        snapshots_.push_back(SnapshotMessage{epoch, static_cast<std::uint32_t>(op), std::move(c)});
        doorbell_.ring();
      };
    }
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
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (TokenQueue* q = runner_->outgoing_queue(k)) {
        Out o{static_cast<std::uint32_t>(k), q, setup_.node_of[streams[k].to]};
        o.window = part_.credit_window[k];
        outs_.push_back(o);
      }
      if (runner_->incoming(k) && part_.credit_window[k] > 0) ins_.push_back(In{static_cast<std::uint32_t>(k), setup_.node_of[streams[k].from]});
    }
    return Status::Ok();
  }
  void request_checkpoint(std::uint32_t epoch) { runner_->request_checkpoint(epoch); }
  // Barriers on streams from other nodes to here; a named error for one that does not come here.
  Status deliver_barriers(const std::vector<BarrierEntry>& barriers) {
    for (const BarrierEntry& b : barriers)
      if (!runner_->incoming(b.stream)) return Status::InvalidArgument("stream BARRIER: stream " + std::to_string(b.stream) + " does not come to this node");
    for (const BarrierEntry& b : barriers) runner_->deliver_barrier(b.stream, b.epoch, b.position + base_[b.stream]);
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

  // A CREDIT from the driver: the node reading these streams took as many
  // more; a named error for a stream that does not leave here with a window.
  Status credit(std::span<const std::byte> body) {
    std::uint32_t node = 0;
    std::vector<TokenCount> credits;
    REDFLOW_RETURN_IF_ERROR(decode_credits(body, node, credits));
    for (const TokenCount& c : credits) {
      auto it = std::find_if(outs_.begin(), outs_.end(), [&](const Out& o) { return o.stream == c.stream; });
      if (node != setup_.node || it == outs_.end() || it->window == 0)
        return Status::InvalidArgument("stream CREDIT: stream " + std::to_string(c.stream) + " does not leave node " + std::to_string(node) +
                                       " with a credit window");
      it->granted = c.tokens > kUnlimited - it->granted ? kUnlimited : it->granted + c.tokens;
    }
    doorbell_.ring();
    return Status::Ok();
  }
  // The most bytes of tokens from other nodes that waited here at once (each stream's peak, summed).
  std::uint64_t most_waiting_bytes() const {
    std::uint64_t bytes = 0;
    const auto& streams = program_.streams();
    for (std::size_t k = 0; k < streams.size(); ++k)
      if (const Inbox* in = runner_->incoming_inbox(k)) bytes += in->most_waiting() * streams[k].token_bytes;
    return bytes;
  }

  // Sends what the operators here wrote to streams bound elsewhere, within
  // the credit of those with a window, and the credit this node's readers
  // have to grant, each through `post(node, body)`, which sends a TOKENS,
  // BARRIER or CREDIT body on its way to `node` (straight, or through the
  // driver). True when every stream bound elsewhere has ended and its end
  // was sent.
  using Post = std::function<void(std::uint32_t, std::vector<std::byte>)>;
  bool flush(net::Sender& driver, const Post& post) {
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
      post(node, std::move(it->second));
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
      // With a window: no further than the reader's node granted.
      const std::uint64_t limit = o.window == 0 || o.granted > kUnlimited - o.window ? kUnlimited : o.granted + o.window;
      const std::uint64_t allowed = limit - std::min(o.popped, limit);
      std::size_t taken = 0;
      bool drained = false, waits_for_credit = false;
      while (taken < budget) {
        const std::uint64_t left = allowed > taken ? allowed - taken : 0;
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(setup_.aggregate ? budget - taken : 1, left));
        if (want == 0) {
          drained = o.queue->size() == 0;
          waits_for_credit = !drained;  // the CREDIT that comes rings again
          break;
        }
        const std::size_t at = run.size();
        run.resize(at + want * size);
        const std::size_t n = o.queue->pop_many(run.data() + at, want);
        run.resize(at + n * size);
        o.popped += n;
        count += n;
        if (setup_.checkpoints)
          if (auto barrier = barrier_due(o.stream, o.popped, o.sent_epoch)) {
            // The run's tokens before the barrier leave first, then the
            // BARRIER, then the rest: the node that reads the stream learns
            // of the barrier before any token beyond it, so what its
            // operator saw available stays readable.
            const std::uint64_t beyond = o.popped - barrier->position;
            const std::size_t before = beyond > count ? 0 : count - static_cast<std::size_t>(beyond);
            std::vector<std::byte> rest(run.begin() + static_cast<std::ptrdiff_t>(before * size), run.end());
            run.resize(before * size);
            count = before;
            if (count > 0) emit(false);
            send(o.node);
            std::vector<std::byte> b;
            encode_barriers(std::vector<BarrierEntry>{*barrier}, b);
            post(o.node, std::move(b));
            o.sent_epoch = barrier->epoch;
            run = std::move(rest);
            count = run.size() / size;
          }
        if (n == 0) {
          drained = true;
          break;
        }
        taken += n;
        if (!setup_.aggregate) emit(false);
      }
      runner_->took_outgoing(o.stream);
      if (closed && drained) {
        emit(true);
        o.closed_sent = true;
      } else {
        all_closed = false;
        if (count > 0) emit(false);
        more |= !drained && !waits_for_credit;
      }
    }
    if (more) doorbell_.ring();
    for (auto& [node, body] : bodies) send(node);
    send_credits(post);
    send_reports(driver);
    return all_closed;
  }
  // What this node's readers of streams with a window took since the last
  // grant, to each producer's node.
  void send_credits(const Post& post) {
    std::map<std::uint32_t, std::vector<TokenCount>> grants;
    for (const In& in : ins_)
      if (const std::uint64_t t = runner_->incoming_inbox(in.stream)->take_credit()) grants[in.node].push_back(TokenCount{in.stream, t});
    for (const auto& [node, credits] : grants) {
      std::vector<std::byte> b;
      encode_credits(node, credits, b);
      post(node, std::move(b));
    }
  }
  // A barrier on stream `o` not yet sent and no further than the tokens
  // taken: read after popping them, the slot shows every barrier they
  // reach past (it is set before any token beyond it is written).
  std::optional<BarrierEntry> barrier_due(std::uint32_t stream, std::uint64_t popped, std::uint32_t sent_epoch) const {
    const std::uint64_t slot = runner_->outgoing_barrier(stream);
    const auto epoch = static_cast<std::uint32_t>(slot >> kBarrierShift);
    const std::uint64_t at = slot & kPositionMask;
    if (slot == 0 || epoch == sent_epoch || at > popped) return std::nullopt;
    return BarrierEntry{stream, epoch, at};
  }

  // What the collect operators gathered and the operators' checkpoint
  // parts, queued since the last turn: taken together so a collect's last
  // bytes go out before its final state.
  void send_reports(net::Sender& driver) {
    std::vector<OutputMessage> outputs;
    std::vector<SnapshotMessage> snapshots;
    {
      std::lock_guard lock(reports_mutex_);
      outputs.swap(outputs_);
      snapshots.swap(snapshots_);
    }
    std::vector<std::byte> b;
    for (const OutputMessage& m : outputs) {
      b.clear();
      encode(m, b);
      driver.send(net::EnvelopeKind::kReply, 0, b);
    }
    for (const SnapshotMessage& m : snapshots) {
      b.clear();
      encode(m, b);
      driver.send(net::EnvelopeKind::kReply, 0, b);
    }
  }
  // The tokens of each stream leaving this node taken for sending so far.
  std::vector<TokenCount> sent() const {
    std::vector<TokenCount> out;
    for (const Out& o : outs_) out.push_back(TokenCount{o.stream, o.popped});
    return out;
  }
  const SetupMessage& setup() const { return setup_; }

 private:
  struct Out {
    std::uint32_t stream;
    TokenQueue* queue;
    std::uint32_t node;
    bool closed_sent = false;
    std::uint64_t popped = 0;     // tokens taken from the queue so far
    std::uint32_t sent_epoch = 0; // the last barrier sent on (as packed: 24 bits)
    std::uint64_t window = 0;     // credits (0: none): may send up to granted + window
    std::uint64_t granted = 0;
  };
  struct In {  // a stream from elsewhere with a window: its reader's grants go to `node`
    std::uint32_t stream, node;
  };
  static constexpr std::uint64_t kUnlimited = ~std::uint64_t{0};

  SetupMessage setup_;
  Program program_;
  const net::Doorbell& doorbell_;
  RunOptions options_;
  NodePart part_;
  std::unique_ptr<Runner> runner_;
  std::vector<Out> outs_;
  std::vector<In> ins_;
  std::vector<std::uint64_t> base_;  // by stream: the tokens its reader's checkpoint put back
  std::mutex reports_mutex_;  // outputs and checkpoint reports from the operators' threads
  std::vector<OutputMessage> outputs_;
  std::vector<SnapshotMessage> snapshots_;
  std::atomic<bool> rung_{false}, finished_{false};
  bool started_ = false;
  std::optional<Result<RunResult>> result_;
  std::thread thread_;
};

// One driver's node: SETUP builds its part, START runs it, TOKENS feed its
// incoming streams; each turn sends what its operators wrote elsewhere, and
// DONE (or ERROR) once its part ended.
class NodeWork final : public net::WorkerService {
 public:
  NodeWork(const OperatorRegistry& registry, unsigned threads, NodeLinks& links, net::Sender& driver, const net::Doorbell& doorbell)
      : registry_(registry), threads_(threads), links_(links), driver_(driver), doorbell_(doorbell) {}

  Status on_request(std::uint64_t, net::ReceivedBytes frame) override {
    const std::span<const std::byte> body = frame.bytes();
    auto type = message_type(body);
    if (!type.ok()) return type.status();
    if (*type == StreamMessage::kSetup) {
      SetupMessage setup;
      Status s = decode(body, setup);
      if (s.ok() && node_) {
        if (setup.incarnation <= node_->setup().incarnation) {
          spdlog::warn("stream worker: ignored a second SETUP of incarnation {}", setup.incarnation);
          return Status::Ok();
        }
        // A node was lost: this part is dropped and the run goes on from a checkpoint.
        node_.reset();
        outcome_.reset();
        done_sent_ = false;
      }
      const std::uint32_t incarnation = setup.incarnation;
      Result<Program> program = s.ok() ? program_of(setup, registry_) : Result<Program>(s);
      if (!program.ok()) return report_error(program.status());
      links_.expect(setup.links, setup.node, incarnation);
      node_ = std::make_unique<NodeRun>(std::move(setup), std::move(*program), threads_, doorbell_);
      if (Status p = node_->prepare(); !p.ok()) return report_error(p);
      std::vector<std::byte> b;
      encode_ready(incarnation, b);
      reply(b);
    } else if (*type == StreamMessage::kCheckpoint) {
      std::uint32_t epoch = 0;
      if (Status s = decode_checkpoint(body, epoch); !s.ok()) return report_error(s);
      if (node_ && failure_.ok()) node_->request_checkpoint(epoch);
    } else if (*type == StreamMessage::kBarrier || *type == StreamMessage::kCredit || *type == StreamMessage::kTokens) {
      return from_node(*type, body);    } else if (*type == StreamMessage::kStart) {
      if (!node_ || !failure_.ok() || node_->started()) return Status::Ok();
      if (Status l = links_.connect(); !l.ok()) return report_error(l);
      node_->start();
    } else {
      spdlog::warn("stream worker: ignored a {} from the driver", stream_message_name(*type));
    }
    return Status::Ok();
  }

  Status turn() override {
    // What other nodes sent straight here, before this node's own sends;
    // bounded, so a flood cannot keep this thread from its heartbeats (the
    // rest is read on the next turn: the socket stays readable).
    net::ReceivedBytes b;
    for (int i = 0; i < kBodiesPerTurn && links_.receive(b); ++i) {
      if (!node_ || !failure_.ok()) continue;
      auto type = message_type(b.bytes());  // NodeLinks let in only the bodies nodes send each other
      REDFLOW_RETURN_IF_ERROR(from_node(*type, b.bytes()));
    }
    if (!node_ || !node_->started() || done_sent_ || !failure_.ok()) return Status::Ok();
    // Finished read first: what the operators reported before they ended
    // then goes out in this flush, ahead of DONE.
    const bool finished = node_->finished();
    links_.retry();
    const bool all_sent = node_->flush(driver_, [this](std::uint32_t node, std::vector<std::byte> body) {
      if (links_.direct(node)) links_.send(node, std::move(body));
      else driver_.send_owned(net::EnvelopeKind::kReply, 0, std::move(body));
    }) && links_.idle();
    report_sent(finished && all_sent);
    if (!finished) return Status::Ok();
    if (!outcome_) outcome_ = node_->take_result();  // joins: the runner is done
    if (!outcome_->ok()) {
      report_error(outcome_->status());
    } else if (all_sent) {
      // Each collect operator's output went to the driver as it gathered
      // (OUTPUT, sent before this): DONE does not carry the same bytes over
      // the link a second time.
      for (const auto& inst : node_->setup().instances)
        if (inst.op == "collect") (*outcome_)->outputs.erase(inst.name);
      std::vector<std::byte> b;
      encode_done(**outcome_, b, node_->most_waiting_bytes());
      reply(b);
      done_sent_ = true;
    }
    // Else what the operators wrote before they finished is still going
    // out, a share per turn (flush rang the doorbell for the next one).
    return Status::Ok();
  }

  void poll_items(std::vector<zmq::pollitem_t>& items) override { links_.poll_items(items); }

  Status on_bye() override {
    if (!failure_.ok()) return failure_;
    if (!done_sent_) return Status::IOError("the driver ended the run before this node's part finished (another node failed or was lost)");
    return Status::Ok();
  }
  bool leave() override {
    if (node_ && !done_sent_) node_->abort(Status::IOError("the driver went silent or the run ended"));
    return false;
  }

 private:
  // With direct links the driver sees no tokens: SENT tells it what went,
  // about ten times a second and once more before DONE (`last`).
  void report_sent(bool last) {
    const std::uint64_t bytes = links_.sent_bytes();
    const auto now = Clock::now();
    if (bytes == reported_bytes_ || (!last && now < next_report_)) return;
    std::vector<std::byte> b;
    encode_sent(bytes, node_->sent(), b);
    reply(b);
    reported_bytes_ = bytes;
    next_report_ = now + std::chrono::milliseconds(100);
  }
  // TOKENS, BARRIER or CREDIT, from the driver or straight from another node.
  Status from_node(StreamMessage type, std::span<const std::byte> body) {
    if (!node_ || !failure_.ok()) return Status::Ok();
    // Tokens that do not fit this node's part are refused whole: a stream
    // program cannot go on with a hole in a stream.
    Status s = type == StreamMessage::kTokens ? node_->deliver(body) : type == StreamMessage::kCredit ? node_->credit(body) : [&] {
      std::vector<BarrierEntry> barriers;
      Status d = decode_barriers(body, barriers);
      return d.ok() ? node_->deliver_barriers(barriers) : d;
    }();
    if (!s.ok()) {
      node_->abort(s);
      return report_error(s);
    }
    return Status::Ok();
  }
  void reply(const std::vector<std::byte>& b) { driver_.send(net::EnvelopeKind::kReply, 0, b); }
  // Why this node's part failed: reported once (Ok: the session goes on
  // until the driver's BYE), then returned at BYE.
  Status report_error(const Status& s) {
    if (!failure_.ok()) return Status::Ok();
    failure_ = s;
    std::vector<std::byte> b;
    encode_error(s.ToString(), b);
    reply(b);
    return Status::Ok();
  }

  const OperatorRegistry& registry_;
  unsigned threads_;
  NodeLinks& links_;
  net::Sender& driver_;
  const net::Doorbell& doorbell_;
  std::unique_ptr<NodeRun> node_;
  Status failure_;
  std::optional<Result<RunResult>> outcome_;  // the node's part, once it finished
  bool done_sent_ = false;
  std::uint64_t reported_bytes_ = 0;  // in the last SENT
  Clock::time_point next_report_{};
};

class NodeRole final : public net::WorkerRole {
 public:
  NodeRole(const OperatorRegistry& registry, unsigned threads) : registry_(registry), threads_(threads) {}
  net::Role role() const override { return net::Role::kNode; }
  std::uint16_t version() const override { return kStreamProtocolVersion; }
  Status describe(net::PeerSocket& peers, net::HelloMessage& hello) override {
    links_ = std::make_unique<NodeLinks>(peers);  // nothing of the last driver's links carries over
    hello.operators = registry_.names();
    return Status::Ok();
  }
  Result<std::unique_ptr<net::WorkerService>> start(const net::WelcomeMessage&, net::Sender& driver, const net::Doorbell& doorbell) override {
    return std::unique_ptr<net::WorkerService>(std::make_unique<NodeWork>(registry_, threads_, *links_, driver, doorbell));
  }

 private:
  const OperatorRegistry& registry_;
  unsigned threads_;
  std::unique_ptr<NodeLinks> links_;
};

}  // namespace

std::unique_ptr<net::WorkerRole> make_node_role(const OperatorRegistry& registry, unsigned threads) {
  return std::make_unique<NodeRole>(registry, threads);
}

Status run_stream_worker(const StreamWorkerOptions& options, const OperatorRegistry& registry) {
  net::WorkerSessionOptions session;
  session.driver = [connect = options.connect]() -> Result<net::DriverAddress> { return net::DriverAddress{connect, {}}; };
  session.security = options.security;
  session.name = options.name;
  session.cores = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  session.connect_timeout_s = options.connect_timeout_s;
  net::WorkerSession worker(std::move(session));
  worker.add(make_node_role(registry, options.threads));
  return worker.run();
}

}  // namespace redflow::stream
