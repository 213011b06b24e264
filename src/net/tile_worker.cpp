// A worker process's loop (tile_worker.hpp): the socket and heartbeat on the
// calling thread, the tile on an executor thread, a queue each way.
#include "net/tile_worker.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <zmq.hpp>

#include "net/address_file.hpp"
#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/peer_links.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "runtime/local_tile.hpp"
#include "runtime/tile_service.hpp"

namespace redflow::net {

namespace {

using Clock = std::chrono::steady_clock;

// The driver's requests this worker was given and has not answered yet. Its
// heartbeats carry answered_through(): every request up to that id was
// answered, so a driver still waiting for one of them knows the answer went
// missing on the way (or under another request id), not that this worker is
// slow (docs/remote.md, "Deadlines"). Ids come in increasing order. Main
// thread only.
class Ledger {
 public:
  void given(std::uint64_t id) {
    owed_.push_back({id, false});
    highest_ = std::max(highest_, id);
  }
  void answered(std::uint64_t id) {
    auto it = std::lower_bound(owed_.begin(), owed_.end(), id, [](const Owed& o, std::uint64_t x) { return o.id < x; });
    if (it != owed_.end() && it->id == id) it->answered = true;
    while (!owed_.empty() && owed_.front().answered) owed_.pop_front();
  }
  std::uint64_t answered_through() const { return owed_.empty() ? highest_ : owed_.front().id - 1; }
  // An answer to the driver, noted.
  void reply(zmq::socket_t& driver, std::uint64_t id, std::span<const std::byte> frame) {
    send_envelope(driver, EnvelopeKind::kReply, id, frame);
    answered(id);
  }

 private:
  struct Owed {
    std::uint64_t id;
    bool answered;
  };
  std::deque<Owed> owed_;
  std::uint64_t highest_ = 0;
};

// The tile's executor: requests in, replies out (rung on `doorbell`). A
// request is a frame from the driver (`route` empty) or a peer's slot read
// (`route`: its routing id on the peer socket), or a value fetched from a
// peer to place (`fetched`); all are taken in the order they came.
class Executor {
 public:
  // The id of a job the worker gives itself (the driver's requests count
  // from 1): served like the driver's, never answered.
  static constexpr std::uint64_t kOwnJob = 0;
  struct Job {
    std::uint64_t id = 0;
    std::string route;
    ReceivedBytes frame;  // a value's frame stays in the message it came in
    std::unique_ptr<PeerLinks::Fetched> fetched;
  };
  struct Reply {
    std::uint64_t id = 0;
    std::string route;
    std::vector<std::byte> frame;
  };

  Executor(runtime::LocalTile& tile, const Registry& registry, const Doorbell& doorbell)
      : service_(tile), registry_(registry), doorbell_(doorbell), thread_([this] { main(); }) {}
  ~Executor() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    work_.notify_all();
    thread_.join();
  }
  void submit(Job job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      inbox_.push_back(std::move(job));
    }
    work_.notify_one();
  }
  std::deque<Reply> take_replies() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(outbox_, {});
  }
  // Running a job (an actor may take long, and cannot be interrupted).
  bool busy() {
    std::lock_guard<std::mutex> lock(mutex_);
    return running_;
  }
  // Leaving while busy: the thread is left to end with the process, and
  // this object (and what it uses) is never destroyed, so it never waits
  // for an actor that may run for hours.
  static void abandon(std::unique_ptr<Executor> executor) {
    {
      std::lock_guard<std::mutex> lock(executor->mutex_);
      executor->stop_ = true;
    }
    executor->thread_.detach();
    (void)executor.release();
  }

 private:
  void main() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [&] { return stop_ || !inbox_.empty(); });
        if (stop_) return;
        job = std::move(inbox_.front());
        inbox_.pop_front();
        running_ = true;
      }
      Reply reply{job.id, std::move(job.route), {}};
      if (job.fetched) {
        service_.place(job.fetched->message, job.fetched->offset, job.fetched->piece(), reply.frame);
      } else {
        service_.serve(job.frame.bytes(), &registry_, reply.frame);
      }
      if (job.id == kOwnJob && job.route.empty()) reply.frame.clear();
      job = Job{};  // a fetched value's message goes now, not when the next job comes
      {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = false;
        if (stop_) return;
        outbox_.push_back(std::move(reply));
      }
      doorbell_.ring();
    }
  }

  runtime::TileService service_;
  const Registry& registry_;
  const Doorbell& doorbell_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<Job> inbox_;
  std::deque<Reply> outbox_;
  bool stop_ = false;
  bool running_ = false;
  std::thread thread_;
};

// Starts the fetch a kPeerDataNode request names, into `slot`; a frame that
// does not decode is answered at once, DataLoss with the decoder's error
// (false: no fetch), and the driver places the value another way.
bool fetch(PeerLinks& links, std::uint64_t request, std::span<const std::byte> frame, zmq::socket_t& driver, Ledger& ledger,
           runtime::SlotId& slot) {
  runtime::DecodedFrame decoded;
  if (Status s = runtime::decode(frame, decoded); !s.ok()) {
    std::vector<std::byte> answer;
    runtime::encode(Status::DataLoss("a frame from the driver arrived unreadable: " + s.message()), answer);
    ledger.reply(driver, request, answer);
    return false;
  }
  slot = decoded.data_node.slot;
  links.fetch(request, decoded);
  return true;
}

// The slots a frame from the driver reads or writes; false for one that must
// keep its place among all others (the actor table, a fault configuration,
// a clear of every slot, or a frame that does not decode, which the tile
// answers with the decoder's error in its turn).
bool slots_of(std::span<const std::byte> frame, std::vector<runtime::SlotId>& slots) {
  runtime::DecodedFrame d;
  if (!runtime::decode(frame, d).ok()) return false;
  switch (d.kind) {
    case runtime::WireKind::kDataNode:
    case runtime::WireKind::kPeerDataNode: slots = {d.data_node.slot}; return true;
    case runtime::WireKind::kDataNodePiece: slots = {d.piece.slot}; return true;
    case runtime::WireKind::kClearSlot: slots = {d.clear_slot.slot}; return true;
    case runtime::WireKind::kReadSlot: slots = {d.read_slot.slot}; return true;
    case runtime::WireKind::kActor:
      slots.assign(d.actor.input_slots.begin(), d.actor.input_slots.end());
      slots.push_back(d.actor.output_slot);
      slots.insert(slots.end(), d.actor.extra_output_slots.begin(), d.actor.extra_output_slots.end());
      return true;
    default: return false;
  }
}

// The driver's frames, held back behind the values being fetched from
// peers. The driver sends a fetch and then, without waiting for its answer,
// the actor that reads it (pipelined transfers, docs/remote.md): the actor
// must not run before the value is in its slot. A frame waits while it
// touches a slot that a fetch under way fills or that a frame held before
// it touches; the others go at once, so an actor whose inputs are here runs
// while another's are fetched, and the next actor's fetch starts before the
// one before it has ended. Frames on the same slot keep their order, and
// replies are matched by request id, so the driver sees no difference but
// time. A frame whose slots are not known waits for everything before it.
// A fetch that fails empties its slot first, so the actor behind it finds
// no value and says so instead of reading a stale one.
class FrameGate {
 public:
  FrameGate(PeerLinks& links, zmq::socket_t& driver, Ledger& ledger) : links_(links), driver_(driver), ledger_(ledger) {}
  void take(Executor& executor, std::uint64_t id, ReceivedBytes frame) {
    held_.push_back(Held{id, std::move(frame)});
    release(executor);
  }
  // The pieces and failures of fetches that came: placed in order, answered.
  void take_fetched(Executor& executor) {
    auto fetched = std::make_unique<PeerLinks::Fetched>();
    while (links_.take_fetched(*fetched)) {
      if (fetched->ok) {
        const bool last = fetched->last;
        const runtime::SlotId slot = fetched->message.slot;
        const std::uint64_t id = fetched->driver_request;
        executor.submit(Executor::Job{id, {}, {}, std::move(fetched)});
        fetched = std::make_unique<PeerLinks::Fetched>();
        if (last) ended(slot);
      } else {
        fail(executor, *fetched);
      }
    }
    release(executor);
  }
  // CANCEL from the driver: its source was declared lost. A fetch not yet
  // started (held behind another frame) is answered here, its slot emptied
  // in its place in the order.
  void cancel(Executor& executor, std::uint64_t request) {
    for (Held& h : held_) {
      if (h.id != request || !runtime::frame_is(h.frame.bytes(), runtime::WireKind::kPeerDataNode)) continue;
      runtime::DecodedFrame decoded;
      if (!runtime::decode(h.frame.bytes(), decoded).ok()) return;  // answered with the decoder's error when its turn comes
      std::vector<std::byte> answer;
      runtime::encode(Status::NotFound("peer fetch of data node " + std::to_string(decoded.data_node.tag.data) +
                                       ": the driver declared the source lost"),
                      answer);
      ledger_.reply(driver_, request, answer);
      h = Held{Executor::kOwnJob, clear_frame(decoded.data_node.slot)};
      return;
    }
    PeerLinks::Fetched cancelled;
    if (!links_.cancel(request, cancelled)) return;
    fail(executor, cancelled);
    release(executor);
  }

 private:
  struct Held {
    std::uint64_t id;
    ReceivedBytes frame;
    bool known = false, decoded = false;  // slots_of, asked the first time a fetch is under way
    std::vector<runtime::SlotId> slots{};
  };
  static ReceivedBytes clear_frame(runtime::SlotId slot) {
    std::vector<std::byte> frame;
    runtime::encode(runtime::ClearSlotMessage{slot}, frame);
    return ReceivedBytes(std::move(frame));
  }
  void fail(Executor& executor, const PeerLinks::Fetched& failed) {
    executor.submit(Executor::Job{Executor::kOwnJob, {}, clear_frame(failed.message.slot), nullptr});
    ledger_.reply(driver_, failed.driver_request, failed.answer);
    ended(failed.message.slot);
  }
  void ended(runtime::SlotId slot) {
    if (auto it = std::find(fetching_.begin(), fetching_.end(), slot); it != fetching_.end()) fetching_.erase(it);
  }
  static bool touches(const std::vector<runtime::SlotId>& slots, const std::vector<runtime::SlotId>& blocked) {
    return std::any_of(slots.begin(), slots.end(), [&](runtime::SlotId s) { return std::find(blocked.begin(), blocked.end(), s) != blocked.end(); });
  }
  // Starts or hands to the executor every held frame that may go now.
  void release(Executor& executor) {
    std::vector<runtime::SlotId> blocked = fetching_;  // and, below, the slots of frames still held
    for (auto it = held_.begin(); it != held_.end();) {
      if (!blocked.empty()) {
        // Decoded only while something is under way: without fetches every frame goes as it comes.
        if (!it->decoded) it->known = slots_of(it->frame.bytes(), it->slots), it->decoded = true;
        if (!it->known) break;
        if (touches(it->slots, blocked)) {
          blocked.insert(blocked.end(), it->slots.begin(), it->slots.end());
          ++it;
          continue;
        }
      }
      Held h = std::move(*it);
      it = held_.erase(it);
      if (!runtime::frame_is(h.frame.bytes(), runtime::WireKind::kPeerDataNode)) {
        executor.submit(Executor::Job{h.id, {}, std::move(h.frame), nullptr});
      } else if (runtime::SlotId slot; fetch(links_, h.id, h.frame.bytes(), driver_, ledger_, slot)) {
        fetching_.push_back(slot);
        blocked.push_back(slot);
      }
    }
  }

  PeerLinks& links_;
  zmq::socket_t& driver_;
  Ledger& ledger_;
  std::deque<Held> held_;
  std::vector<runtime::SlotId> fetching_;  // the slots of fetches started and not yet ended (last piece taken, or failed)
};

// The executor's answers: to the driver, the small ones that follow each
// other as one batch (envelope.hpp) and a value alone, in order; to a peer
// over the peer socket.
void send_replies(zmq::socket_t& driver, PeerLinks& links, Ledger& ledger, std::deque<Executor::Reply> replies) {
  std::vector<Executor::Reply*> batch;
  auto flush = [&] {
    send_batched(std::span<Executor::Reply* const>(batch), EnvelopeKind::kReply,
                 [&](EnvelopeKind kind, std::uint64_t id, std::vector<std::byte> body) { send_envelope_owned(driver, kind, id, std::move(body)); });
    for (const Executor::Reply* reply : batch) ledger.answered(reply->id);
    batch.clear();
  };
  for (Executor::Reply& reply : replies) {
    if (reply.frame.empty()) continue;  // a piece of a fetched value that does not end it
    if (!reply.route.empty()) {
      links.reply(reply.route, reply.id, std::move(reply.frame));
    } else if (BatchWriter::fits(reply.frame)) {
      batch.push_back(&reply);
      if (batch.size() == kMaxBatchEntries) flush();
    } else {
      flush();
      // A value read out of a slot: ZeroMQ takes the frame over, so its bytes
      // are copied once on this side (out of the slot into the frame).
      send_envelope_owned(driver, EnvelopeKind::kReply, reply.id, std::move(reply.frame));
      ledger.answered(reply.id);
    }
  }
  flush();
}

}  // namespace

Status run_tile_worker(const TileWorkerOptions& options, const Registry& registry, std::string_view origin) {
  zmq::context_t context(1);
  LinkWatch watch;  // what became of the connection, should no WELCOME come
  auto dealer = make_worker_dealer(context, options.connect, options.security, &watch);
  if (!dealer.ok()) return dealer.status();
  zmq::socket_t& socket = *dealer;
  // On the heap: a busy executor left behind at the end rings it (Executor::abandon).
  auto doorbell_owner = std::make_unique<Doorbell>();
  const Doorbell& doorbell = *doorbell_owner;
  if (!doorbell.ok()) return Status::IOError("eventfd failed");

  HelloMessage hello;
  hello.tile_protocol = runtime::kTileProtocolVersion;
  hello.host = host_name();
  hello.pid = static_cast<std::uint32_t>(getpid());
  hello.name = options.name.empty() ? hello.host + ":" + std::to_string(hello.pid) : options.name;
  hello.cores = options.cores;
  hello.slots = options.slots;
  hello.slot_bytes = options.slot_bytes;
  hello.functions = describe_functions(registry, origin);
  auto peers = PeerLinks::open(context, options.connect, options.security);
  if (!peers.ok()) return peers.status();
  PeerLinks& links = **peers;
  hello.peer_port = links.port();
  hello.public_key = links.public_key();
  std::vector<std::byte> body;
  encode(hello, body);
  const auto connect_deadline = welcome_deadline(options.connect_timeout_s);
  const bool keyed = !options.security.key_file.empty();
  if (!send_hello(socket, body, connect_deadline)) return no_welcome(options.connect, options.connect_timeout_s, keyed, &watch);

  std::unique_ptr<runtime::LocalTile> tile;
  std::unique_ptr<Executor> executor;
  WelcomeMessage welcome;
  auto heard = Clock::now();
  auto next_beat = heard;
  auto grace = Clock::time_point::max();  // max: not silent
  std::vector<zmq::message_t> parts;
  std::vector<zmq::pollitem_t> items;
  std::vector<BatchEntry> batch;
  Ledger ledger;
  FrameGate gate(links, socket, ledger);  // a kPeerDataNode is fetched by the transport, never seen by the tile
  auto take_request = [&](std::uint64_t id, ReceivedBytes frame) {
    if (!executor) {
      // The driver sends WELCOME before any REQUEST; one before it is a driver's bug.
      spdlog::warn("tile worker: dropped REQUEST {} that came before the WELCOME", id);
    } else {
      ledger.given(id);
      gate.take(*executor, id, std::move(frame));
    }
  };
  // Leaving with an actor still running: it cannot be stopped, and waiting
  // for it would keep a worker whose driver is gone alive for as long as the
  // actor takes; it is left to end with the process.
  auto leave = [&](Status why) {
    if (executor && executor->busy()) {
      spdlog::warn("tile worker '{}': leaving an actor still running", hello.name);
      Executor::abandon(std::move(executor));
      (void)tile.release();
      (void)doorbell_owner.release();
    }
    return why;
  };
  for (;;) {
    const auto interval = std::chrono::milliseconds(tile ? welcome.heartbeat_interval_ms : 100);
    items = {{socket.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell.fd(), ZMQ_POLLIN, 0}};
    links.poll_items(items);
    if (Status s = poll_for(items, next_beat - Clock::now()); !s.ok()) return leave(s);
    if (items[1].revents & ZMQ_POLLIN) doorbell.drain();
    // What is due goes out before anything is read: a worker woken after
    // being frozen past the timeout beats once (the driver discards it as
    // late), then reads the driver's BYE.
    auto now = Clock::now();
    if (now >= next_beat) {
      if (tile) send_envelope(socket, EnvelopeKind::kHeartbeat, ledger.answered_through(), {});
      next_beat = now + interval;
    }
    while (receive_message(socket, parts)) {
      const auto spans = part_spans(parts);
      Envelope e;
      wire::Error error;
      if (Status s = decode_envelope(spans, e, error); !s.ok()) return leave(refuse_and_leave(socket, options.connect, s));
      heard = Clock::now();
      switch (e.kind) {
        case EnvelopeKind::kWelcome: {
          if (tile) break;
          REDFLOW_RETURN_IF_ERROR(decode(e.body, welcome));
          try {
            tile = std::make_unique<runtime::LocalTile>(options.slots, options.slot_bytes, options.cores, welcome.tile);
          } catch (const std::bad_alloc&) {
            send_envelope(socket, EnvelopeKind::kBye, 0, {});
            return Status::ResourceExhausted("cannot reserve " + std::to_string(options.slots) + " slots of " +
                                             std::to_string(options.slot_bytes) + " bytes");
          }
          REDFLOW_RETURN_IF_ERROR(links.admit(welcome.peer_keys));
          executor = std::make_unique<Executor>(*tile, registry, doorbell);
          spdlog::info("tile worker '{}': welcomed as tile {} by {}", hello.name, welcome.tile, options.connect);
          break;
        }
        case EnvelopeKind::kRefused: {
          RefusedMessage refused;
          REDFLOW_RETURN_IF_ERROR(decode(e.body, refused));
          return Status::InvalidArgument("the driver at " + options.connect + " refused this worker: " + refused.reason);
        }
        case EnvelopeKind::kRequest:
          // The frame stays in the message it came in (a value is then copied
          // once on this side, into its slot); `e` is not read after this.
          take_request(e.request, ReceivedBytes(std::move(parts[1])));
          break;
        case EnvelopeKind::kRequests:
          if (Status s = decode_batch(e, batch, error); !s.ok()) return leave(refuse_and_leave(socket, options.connect, s));
          for (const BatchEntry& request : batch)
            take_request(request.request, ReceivedBytes(std::vector<std::byte>(request.frame.begin(), request.frame.end())));
          break;
        case EnvelopeKind::kBye:
          // What is due goes out first, as at the top of the loop: a worker
          // stopped inside this loop (after that check) and woken past the
          // timeout reads the BYE here without having beaten since.
          if (tile && Clock::now() >= next_beat) send_envelope(socket, EnvelopeKind::kHeartbeat, ledger.answered_through(), {});
          socket.set(zmq::sockopt::linger, 500);  // what is already sent still goes out
          return leave(Status::Ok());
        case EnvelopeKind::kCancel:
          if (executor) gate.cancel(*executor, e.request);
          break;
        case EnvelopeKind::kHeartbeat: break;
        default: spdlog::warn("tile worker: ignored a {} from the driver", envelope_kind_name(e.kind)); break;
      }
    }
    if (executor) {
      PeerLinks::Request read;
      while (links.take_request(read)) executor->submit(Executor::Job{read.id, std::move(read.route), ReceivedBytes(std::move(read.frame)), nullptr});
      gate.take_fetched(*executor);
      send_replies(socket, links, ledger, executor->take_replies());
    }
    now = Clock::now();
    if (!tile) {
      if (now > connect_deadline) return no_welcome(options.connect, options.connect_timeout_s, keyed, &watch);
    } else if (now - heard <= std::chrono::milliseconds(welcome.heartbeat_timeout_ms)) {
      grace = Clock::time_point::max();
    } else if (grace == Clock::time_point::max()) {
      // One more interval before giving up: after this process was stopped
      // (SIGSTOP, a swapped-out machine) the driver's messages may be on the
      // wire but not yet read by ZeroMQ's own thread.
      grace = now + interval;
    } else if (now > grace) {
      return leave(Status::IOError("the driver at " + options.connect + " has been silent for more than " +
                                   std::to_string(welcome.heartbeat_timeout_ms) + " ms"));
    }
  }
}

}  // namespace redflow::net
