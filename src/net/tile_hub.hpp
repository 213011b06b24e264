// TileHub: the driver's end of the link to tile workers as state and event
// handlers, with no socket, no thread and no clock of its own (HyperQueue's
// `tako` reactor shape). TileServer (tile_server.hpp) owns the ROUTER socket
// and the I/O thread and forwards each event here; a unit test drives the
// same handlers with a recording sender and a clock it advances itself.
//
// Events in (tile_hub.cpp): a message from a routing id with its parts and
// the peer's address; a tick of the clock (heartbeats, silent workers,
// deadlines); a request the engine submitted; a worker the engine loses or
// refuses. What they make the driver say (WELCOME, REFUSED, HEARTBEAT, BYE,
// REQUESTs, CANCELs) is queued, and goes out in order through a HubSender
// when the owner flushes (tile_hub_outbox.cpp): take_outbox() under the
// owner's lock, Outbox::emit() outside it (the engine's threads keep
// submitting meanwhile), sent() under it again (bytes counted, a worker whose
// connection dropped declared lost).
//
// The session with each worker (HELLO admission, WELCOME, heartbeats,
// silence, BYE, what a lost worker still sends) is the PeerHub's
// (peer_hub.hpp), the same for every model's driver; the tile is a service
// on it. A worker lost (silent, gone, or lost by the engine) has every
// request in flight to it, and every later one, answered `lost`. Workers
// beyond the ones waited for are welcomed up to `capacity` at any time,
// mid-run too (a join: `on_join` tells the engine); a process that comes back
// after being declared lost is such a new worker, with a new tile id.
//
// Heartbeats alone are not progress (docs/remote.md, "Deadlines"). A worker
// that owes answers must give one within the deadline of the oldest request
// it owes, counted from when that request became the oldest: kFloorBeats
// heartbeat timeouts, or longer for an actor the engine expects to take
// longer (Request::budget_s); past it the worker is lost. And a worker's
// heartbeat says up to which request it has answered everything: a request
// the driver still waits for below that line had its answer dropped on the
// way (or sent under another request id), and the worker is lost at once.
//
// Thread-safety: none; the owner serialises every call (TileServer under
// its mutex). Requests answered or lost are listed for the owner to wake
// their waiters (take_answered()), after it releases its lock.
#pragma once

#include <zmq.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "net/envelope.hpp"
#include "net/peer_hub.hpp"
#include "net/refusal_log.hpp"
#include "net/security.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"

namespace redflow::net {

struct TileServerOptions {
  std::string listen = "tcp://127.0.0.1:*";
  unsigned workers = 1;             // how many wait_for_workers() waits for
  unsigned capacity = 0;            // how many it welcomes in all (then refuses); 0: `workers`
  unsigned first_tile = 0;          // tile id of the first worker welcomed
  // Called on the I/O thread, under the server's lock, when a worker beyond
  // the first `workers` is welcomed (its 0-based index): it must only note it.
  std::function<void(unsigned worker)> on_join = {};
  double heartbeat_timeout_s = 2;   // silence after which a worker is lost
  unsigned slots = 2;               // a worker must have at least these slots...
  std::size_t slot_bytes = 1;       // ...of at least these bytes (the driver plans with them)
  SecurityOptions security = {};    // keys and authorized workers (none: plain text, loopback only)
};

// Counts a run's stats and tests read.
struct TileServerCounts {
  std::uint64_t refused_messages = 0;  // malformed, oversized, from strangers
  std::uint64_t discarded_late = 0;    // replies nobody waits for any more (a lost worker's)
  std::uint64_t refused_workers = 0;   // HELLOs answered REFUSED
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t batched_requests = 0;  // REQUESTs sent in a batch (envelope.hpp)
  std::uint64_t batched_replies = 0;   // REPLYs received in a batch
  // Bytes of values (frames too large to share a batch) copied between a
  // buffer and a message on the driver's side. A value goes out in the
  // buffer it was encoded into and is read where it arrived, so this stays
  // 0; the tests hold it to that (docs/remote.md, "Transfers").
  std::uint64_t copied_value_bytes = 0;
  // The largest message a worker sent: a value read back comes in chunks
  // (RemoteTile::read_slot), so this stays near PeerLinks::kChunkBytes.
  std::uint64_t largest_message_bytes = 0;
  // The largest message the driver sent: a large value goes in pieces
  // (RemoteTile::send_in_pieces), so with small batches this stays near a chunk too.
  std::uint64_t largest_sent_bytes = 0;
};

// One worker's traffic over the server's life (ExecutionStats' per-tile bytes).
struct WorkerTraffic {
  std::uint64_t bytes_sent = 0;      // driver -> worker
  std::uint64_t bytes_received = 0;  // worker -> driver
};

class TileHub final : private PeerService {
 public:
  using Clock = HubClock;
  using Time = Clock::time_point;

  // A request's budget (Request::budget_s): kFloor for what takes no user
  // code, kUnbounded for an actor whose own deadline is not known yet.
  static constexpr double kFloor = -1, kUnbounded = 0;
  // The least deadline: kFloorBeats heartbeat timeouts.
  static constexpr double kFloorBeats = 4;

  // One request to one worker, from submit() until it is answered or lost.
  // Its fields are the hub's (under the owner's lock); `frame` is read by
  // Outbox::emit() once take_outbox() took it.
  struct Request {
    unsigned worker = 0;
    std::uint64_t id = 0;
    std::vector<std::byte> frame;
    EnvelopeKind kind = EnvelopeKind::kRequest;  // or kCancel of request `id` (no frame, no answer)
    bool wants_reply = true;
    int fetch_from = -1;  // a fetch: the worker whose peer socket this asks
    double budget_s = kFloor;  // how long it may stay the oldest its worker owes (at least the floor)
    Time sent_at{};  // when it went on the wire
    bool done = false;
    bool lost = false;
    ReceivedBytes reply;
    // The owner's, to wake the one thread awaiting this request; the hub
    // never touches it (it lists the request in take_answered()).
    std::condition_variable answered;
  };

  // Where other workers fetch values from a worker (peer_links.hpp): its
  // peer socket's endpoint, at the address the driver sees it at (empty:
  // none), and with keys that socket's public key.
  struct PeerAddress {
    std::string endpoint;
    std::string public_key;
  };

  // What take_outbox() took for the wire: notices (WELCOME, REFUSED,
  // HEARTBEAT, BYE) first, then requests, each worker's in the order queued.
  // emit() sends it and notes what went; it reads nothing of the hub, so the
  // owner calls it without its lock.
  class Outbox {
   public:
    bool empty() const { return notices_.empty() && queued_.empty(); }
    // Sends everything: notices alone, runs of small requests as one batch,
    // a value or a CANCEL alone (flushing what is queued before it).
    void emit(HubSender& out);

   private:
    friend class TileHub;
    struct Sent {
      std::string routing_id;
      std::size_t bytes = 0;  // the body's
      bool ok = false;
    };
    void note(const std::string& routing_id, std::size_t bytes, bool ok) { sent_.push_back({routing_id, bytes, ok}); }
    std::vector<PeerHub::Notice> notices_;
    std::deque<std::shared_ptr<Request>> queued_;
    std::vector<std::string> routes_;  // by worker index, of the workers with a request here
    std::vector<Sent> sent_;
    std::size_t batched_ = 0;
  };

  // `peer_keys`: with keys, the authorized workers' public keys, sent in WELCOME.
  TileHub(const TileServerOptions& options, std::vector<std::string> peer_keys);
  ~TileHub() override;
  TileHub(const TileHub&) = delete;
  TileHub& operator=(const TileHub&) = delete;

  // How often the owner calls on_tick() (heartbeat_interval()).
  std::chrono::milliseconds interval() const { return hub_.interval(); }
  double floor_s() const { return kFloorBeats * options_.heartbeat_timeout_s; }

  // ---- Events ----
  // `bytes` arrived from `routing_id` (every part, the routing id's too).
  void received(const std::string& routing_id, std::size_t bytes);
  // A message from `routing_id`: `parts` after the routing id; `address` the
  // IP it came from (ZeroMQ's Peer-Address; empty if unknown); `body_part`
  // the message part that holds the body, if any (a REPLY's frame is kept in
  // it, not copied).
  void on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address, Time now,
                  zmq::message_t* body_part = nullptr);
  // The clock: HEARTBEAT to every worker, silent ones and ones past their deadline lost.
  void on_tick(Time now);
  // A request for worker `w`: queued, or answered at once (done) when `w` is
  // lost or unknown (lost), or when it fetches from a `fetch_from` that is
  // (NotFound, what the worker would answer after a CANCEL).
  std::shared_ptr<Request> submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from, double budget_s);
  // Declares worker `w` lost for `why`, counted as a refused message
  // (TileServer::lose). False when it was lost already or is unknown.
  bool lose(unsigned w, const std::string& why);
  // Tells worker `w` `why` in a REFUSED and declares it lost (TileServer::refuse).
  bool refuse(unsigned w, const std::string& why);
  // The driver leaves: BYE to every worker not lost.
  void leave();

  // ---- Sending ----
  // Everything queued since the last flush; requests taken become in flight, sent at `now`.
  Outbox take_outbox(Time now);
  // What emit() did: bytes counted; a worker that could not be reached lost.
  void sent(const Outbox& out);
  // The three in one (a unit test's flush).
  void flush(Time now, HubSender& out);
  // The requests answered or lost since the last call, to wake their waiters.
  void take_answered(std::vector<std::shared_ptr<Request>>& out) { out.swap(answered_); }

  // ---- State ----
  unsigned welcomed() const { return hub_.size(); }
  bool lost(unsigned w) const { return hub_.lost(w); }
  // What worker `w` (0-based, in order of arrival) said in its HELLO.
  HelloMessage hello(unsigned w) const { return w < workers_.size() ? hub_.peer(w).hello : HelloMessage{}; }
  PeerAddress peer(unsigned w) const { return w < workers_.size() ? workers_[w].peer : PeerAddress{}; }
  WorkerTraffic traffic(unsigned w) const { return w < workers_.size() ? workers_[w].traffic : WorkerTraffic{}; }
  TileServerCounts counts() const;

 private:
  // A worker's tile state; its session (HELLO, liveness) is the hub's peer of the same index.
  struct Worker {
    PeerAddress peer;
    // Its last answer (or the last moment it waited for a busy peer's value): deadlines count from here.
    Time progress;
    WorkerTraffic traffic;
  };

  // PeerService: the tile's side of each session event.
  std::string admit(const HelloMessage& hello) override;
  void welcome(unsigned w, WelcomeMessage& welcome) override;
  void welcomed(unsigned w, Time now) override;
  bool message(unsigned w, const Envelope& e, Time now, zmq::message_t* body_part) override;
  void heartbeat(unsigned w, std::uint64_t request) override;
  void lost(unsigned w, const std::string& why, bool left) override;
  std::string describe(unsigned w, const HelloMessage& hello) const override;

  void on_reply(unsigned w, std::uint64_t request, std::span<const std::byte> body, Time now, zmq::message_t* whole = nullptr);
  // Deadlines: a worker that owes answers and gave none in time, or whose heartbeat says it answered what never came.
  void check_progress(Time now);
  void check_answered_through(unsigned w, std::uint64_t through);
  // Queues CANCEL for every fetch from `source`'s peer socket.
  void cancel_fetches_from(unsigned source);

  TileServerOptions options_;
  std::vector<std::string> peer_keys_;
  PeerHub hub_;
  std::vector<Worker> workers_;
  std::deque<std::shared_ptr<Request>> outbox_;
  std::map<std::uint64_t, std::shared_ptr<Request>> in_flight_;
  std::vector<std::shared_ptr<Request>> answered_;  // to wake (take_answered())
  std::uint64_t next_request_ = 1;
  TileServerCounts counts_;  // the tile's own; the session's are the hub's
};

}  // namespace redflow::net
