// The tile role of a worker (tile_worker.hpp): the session keeps the socket
// and the heartbeat on its thread, the tile runs on an executor thread, a
// queue each way.
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
#include "net/worker_session.hpp"
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
  void reply(Sender& driver, std::uint64_t id, std::span<const std::byte> frame) {
    driver.send(EnvelopeKind::kReply, id, frame);
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

  // `tables`, when set, gives the registry each actor table is resolved in
  // (TileRoleOptions::tables); else `registry`.
  Executor(runtime::LocalTile& tile, const Registry& registry, std::function<std::shared_ptr<const Registry>()> tables, const Doorbell& doorbell)
      : service_(tile), registry_(registry), tables_(std::move(tables)), doorbell_(doorbell), thread_([this] { main(); }) {}
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
  // this object (and the tile it runs on) is never destroyed, so it never
  // waits for an actor that may run for hours. Both are kept where the
  // process can still reach them (a leak checker sees them reachable, also
  // after the thread ended).
  static void abandon(std::unique_ptr<Executor> executor, std::unique_ptr<runtime::LocalTile> tile) {
    {
      std::lock_guard<std::mutex> lock(executor->mutex_);
      executor->stop_ = true;
    }
    executor->thread_.detach();
    struct Left {
      std::vector<std::unique_ptr<Executor>> executors;
      std::vector<std::unique_ptr<runtime::LocalTile>> tiles;
    };
    static Left* const left = new Left;  // session thread only
    left->executors.push_back(std::move(executor));
    left->tiles.push_back(std::move(tile));
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
        service_.serve(job.frame.bytes(), registry_for(job.frame.bytes()), reply.frame);
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

  // The registry `frame` is resolved in: an actor table's comes from
  // `tables_` when set, and is kept while the tile's table points into it.
  const Registry* registry_for(std::span<const std::byte> frame) {
    if (!tables_ || !runtime::frame_is(frame, runtime::WireKind::kActorTable)) return &registry_;
    std::shared_ptr<const Registry> next = tables_();
    if (next) table_registry_ = std::move(next);  // a table that fails leaves the tile without one: the old registry is not read again
    return table_registry_ ? table_registry_.get() : &registry_;
  }

  runtime::TileService service_;
  const Registry& registry_;
  std::function<std::shared_ptr<const Registry>()> tables_;
  std::shared_ptr<const Registry> table_registry_;  // executor thread only
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
bool fetch(PeerLinks& links, std::uint64_t request, std::span<const std::byte> frame, Sender& driver, Ledger& ledger,
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
  FrameGate(PeerLinks& links, Sender& driver, Ledger& ledger) : links_(links), driver_(driver), ledger_(ledger) {}
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
  Sender& driver_;
  Ledger& ledger_;
  std::deque<Held> held_;
  std::vector<runtime::SlotId> fetching_;  // the slots of fetches started and not yet ended (last piece taken, or failed)
};

// The executor's answers: to the driver, the small ones that follow each
// other as one batch (envelope.hpp) and a value alone, in order; to a peer
// over the peer socket.
void send_replies(Sender& driver, PeerLinks& links, Ledger& ledger, std::deque<Executor::Reply> replies) {
  std::vector<Executor::Reply*> batch;
  auto flush = [&] {
    send_batched(std::span<Executor::Reply* const>(batch), EnvelopeKind::kReply,
                 [&](EnvelopeKind kind, std::uint64_t id, std::vector<std::byte> body) { driver.send_owned(kind, id, std::move(body)); });
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
      driver.send_owned(EnvelopeKind::kReply, reply.id, std::move(reply.frame));
      ledger.answered(reply.id);
    }
  }
  flush();
}

// One driver's tile: WELCOMEd with its tile id, it serves the driver's
// frames (and the peers' reads of its slots) until the session ends.
class TileWork final : public WorkerService {
 public:
  TileWork(std::unique_ptr<runtime::LocalTile> tile, const Registry& registry, const TileRoleOptions& options, PeerLinks& links, Sender& driver,
           const Doorbell& doorbell)
      : tile_(std::move(tile)),
        links_(links),
        driver_(driver),
        wait_for_running_actor_(options.wait_for_running_actor),
        executor_(std::make_unique<Executor>(*tile_, registry, options.tables, doorbell)),
        gate_(links, driver, ledger_) {}
  ~TileWork() override = default;

  Status on_request(std::uint64_t id, ReceivedBytes frame) override {
    ledger_.given(id);
    gate_.take(*executor_, id, std::move(frame));  // a frame that does not decode is answered with the decoder's error
    return Status::Ok();
  }
  void on_cancel(std::uint64_t id) override { gate_.cancel(*executor_, id); }
  void poll_items(std::vector<zmq::pollitem_t>& items) override { links_.poll_items(items); }
  Status turn() override {
    PeerLinks::Request read;
    while (links_.take_request(read)) executor_->submit(Executor::Job{read.id, std::move(read.route), ReceivedBytes(std::move(read.frame)), nullptr});
    gate_.take_fetched(*executor_);
    // A tile that died (crash-tile) answers nothing but `lost`: the worker
    // ends as a crashed one would (the session says BYE, so the driver
    // loses it now, not after its silence). Read before the replies are
    // taken, so every answer the tile gave before it died still goes out.
    const bool died = tile_->lost();
    send_replies(driver_, links_, ledger_, executor_->take_replies());
    if (died) return Status::IOError("tile " + std::to_string(tile_->index()) + " died (crash-tile fault): this worker serves no more");
    return Status::Ok();
  }
  std::uint64_t answered_through() const override { return ledger_.answered_through(); }
  // Leaving with an actor still running: it cannot be stopped, and waiting
  // for it would keep a worker whose driver is gone alive for as long as the
  // actor takes; it is left to end with the process.
  bool leave() override {
    if (wait_for_running_actor_ || !executor_->busy()) return false;  // the executor's end waits for it
    spdlog::warn("tile worker: leaving an actor still running");
    Executor::abandon(std::move(executor_), std::move(tile_));
    return true;
  }

 private:
  std::unique_ptr<runtime::LocalTile> tile_;
  PeerLinks& links_;
  Sender& driver_;
  bool wait_for_running_actor_;
  Ledger ledger_;
  std::unique_ptr<Executor> executor_;
  FrameGate gate_;  // a kPeerDataNode is fetched by the transport, never seen by the tile
};

class TileRole final : public WorkerRole {
 public:
  TileRole(const TileRoleOptions& options, const Registry& registry, std::string origin)
      : options_(options), registry_(registry), origin_(std::move(origin)) {}
  Role role() const override { return Role::kTile; }
  std::uint16_t version() const override { return runtime::kTileProtocolVersion; }
  Status describe(PeerSocket& peers, HelloMessage& hello) override {
    links_ = std::make_unique<PeerLinks>(peers);  // nothing of the last driver's fetches carries over
    hello.slots = options_.slots;
    hello.slot_bytes = options_.slot_bytes;
    hello.functions = describe_functions(registry_, origin_);
    return Status::Ok();
  }
  Result<std::unique_ptr<WorkerService>> start(const WelcomeMessage& welcome, Sender& driver, const Doorbell& doorbell) override {
    std::unique_ptr<runtime::LocalTile> tile;
    try {
      tile = std::make_unique<runtime::LocalTile>(options_.slots, options_.slot_bytes, options_.cores, welcome.tile);
    } catch (const std::bad_alloc&) {
      return Status::ResourceExhausted("cannot reserve " + std::to_string(options_.slots) + " slots of " + std::to_string(options_.slot_bytes) +
                                       " bytes");
    }
    return std::unique_ptr<WorkerService>(std::make_unique<TileWork>(std::move(tile), registry_, options_, *links_, driver, doorbell));
  }

 private:
  TileRoleOptions options_;
  const Registry& registry_;
  std::string origin_;
  std::unique_ptr<PeerLinks> links_;
};

}  // namespace

std::unique_ptr<WorkerRole> make_tile_role(const TileRoleOptions& options, const Registry& registry, std::string_view origin) {
  return std::make_unique<TileRole>(options, registry, std::string(origin));
}

Status run_tile_worker(const TileWorkerOptions& options, const Registry& registry, std::string_view origin) {
  WorkerSessionOptions session;
  session.driver = [connect = options.connect]() -> Result<DriverAddress> { return DriverAddress{connect, {}}; };
  session.security = options.security;
  session.name = options.name;
  session.cores = options.cores;
  session.connect_timeout_s = options.connect_timeout_s;
  WorkerSession worker(std::move(session));
  worker.add(make_tile_role(TileRoleOptions{options.cores, options.slots, options.slot_bytes}, registry, origin));
  return worker.run();
}

}  // namespace redflow::net
