// TileServer: the driver's end of the link to worker processes (docs/remote.md).
// One ROUTER socket bound at RuntimeOptions::listen, owned by one I/O thread;
// the engine's threads never touch it. They hand requests (tile-protocol
// frames for one worker) to the I/O thread through a queue and an eventfd,
// and wait for the REPLY with the same request id.
//
// In HyperQueue's `tako` shape, the parts are apart: the state (workers,
// requests in flight; this class's members), what happens on each event
// (tile_server_events.cpp: HELLO, REPLY, HEARTBEAT, BYE, a garbled message, a
// silent worker) and the sending and the wire (tile_server.cpp: the poll loop,
// receiving and sending multipart messages).
//
// Liveness is the ZeroMQ guide's Paranoid Pirate: both sides send HEARTBEAT
// every interval and take any message as a sign of life; a worker silent for
// heartbeat_timeout_s is declared lost: every request in flight to it, and
// every later one, is answered `lost`. A worker is never taken back: anything
// a lost worker still sends is discarded and counted. Workers beyond the
// ones waited for are welcomed up to `capacity` at any time, mid-run too
// (a join: `on_join` tells the engine); a process that comes back after being
// declared lost is such a new worker, with a new tile id.
//
// Heartbeats alone are not progress (docs/remote.md, "Deadlines"). A worker
// that owes answers must give one within the deadline of the oldest request
// it owes, counted from when that request became the oldest: kFloorBeats
// heartbeat timeouts, or longer for an actor the engine expects to take
// longer (bound()); past it the worker is lost. And a worker's heartbeat says
// up to which request it has answered everything: a request the driver still
// waits for below that line had its answer dropped on the way (or sent under
// another request id), and the worker is lost at once.
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "net/doorbell.hpp"
#include "net/envelope.hpp"
#include "net/refusal_log.hpp"
#include "net/security.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "redflow/status.hpp"

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

class TileServer {
  struct Request;

 public:
  static Result<std::unique_ptr<TileServer>> start(const TileServerOptions& options);
  ~TileServer();  // says BYE to every worker, then stops the I/O thread
  TileServer(const TileServer&) = delete;
  TileServer& operator=(const TileServer&) = delete;

  const std::string& endpoint() const { return endpoint_; }

  // Waits until every expected worker was welcomed; after `timeout_s` an
  // error naming how many came.
  Status wait_for_workers(double timeout_s);
  unsigned welcomed() const;
  // What worker `w` (0-based, in order of arrival) said in its HELLO.
  HelloMessage hello(unsigned w) const;

  // Sends `frame` to worker `w` and waits for its answer; false when the
  // worker is (or becomes) lost before it answers.
  bool call(unsigned w, std::vector<std::byte> frame, ReceivedBytes& reply);
  // call() in two halves, so a caller can have several requests on the wire
  // at once (pipelined actors): send() queues `frame` and returns at once;
  // await() waits for that request's answer, with call()'s result. A worker
  // answers its requests in the order they were sent.
  class Ticket {
   public:
    Ticket() = default;
   private:
    friend class TileServer;
    std::shared_ptr<Request> request_;
  };
  //
  // `budget_s` is how long the request may stay the oldest its worker owes
  // before the worker is lost: kFloor for what takes no user code (data,
  // tables, reads), kUnbounded for an actor until bound() gives it its own.
  static constexpr double kFloor = -1, kUnbounded = 0;
  Ticket send(unsigned w, std::vector<std::byte> frame, double budget_s = kFloor);
  // Gives the request its deadline: at least the floor, at most `budget_s` (kUnbounded: none).
  void bound(const Ticket& ticket, double budget_s);
  // The least deadline: kFloorBeats heartbeat timeouts.
  static constexpr double kFloorBeats = 4;
  double floor_s() const { return kFloorBeats * options_.heartbeat_timeout_s; }
  bool await(Ticket& ticket, ReceivedBytes& reply);
  // Whether await() would return at once, waiting at most `timeout_s` for it.
  bool answered_within(const Ticket& ticket, double timeout_s);
  // Nobody will await this request: its answer is dropped when it comes.
  void abandon(Ticket& ticket);
  // Sends `frame` to worker `w`; its answer is read and dropped.
  void post(unsigned w, std::vector<std::byte> frame);
  bool lost(unsigned w) const;
  // Declares worker `w` lost for `why` (logged), like a silent one, so its
  // work is re-run elsewhere and nothing else it says is trusted: a worker
  // that answered what cannot be read or not what was asked (a frame of the
  // wrong kind), or whose values keep failing the end-to-end check. Counted
  // as a refused message.
  void lose(unsigned w, const std::string& why);
  // Refuses worker `w` after its WELCOME (it lacks what a graph needs, such
  // as an actor function): tells it `why` in a REFUSED, which it prints as it
  // exits, logs it, and declares it lost.
  void refuse(unsigned w, const std::string& why);
  // send() of a frame that makes worker `w` fetch a value from worker
  // `source`'s peer socket. Should `source` be lost, it may never answer:
  // the server then sends `w` CANCEL, which makes it answer NotFound (and a
  // fetch asked of a source already lost is answered NotFound at once).
  Ticket send_fetch(unsigned w, std::vector<std::byte> frame, unsigned source);

  // Where other workers fetch values from worker `w` (peer_links.hpp): its
  // peer socket's endpoint, at the address the driver sees it at (empty:
  // none), and with keys that socket's public key.
  struct PeerAddress {
    std::string endpoint;
    std::string public_key;
  };
  PeerAddress peer(unsigned w) const;

  TileServerCounts counts() const;
  WorkerTraffic traffic(unsigned w) const;

 private:
  struct Request {
    unsigned worker = 0;
    std::uint64_t id = 0;
    std::vector<std::byte> frame;
    EnvelopeKind kind = EnvelopeKind::kRequest;  // or kCancel of request `id` (no frame, no answer)
    bool wants_reply = true;
    int fetch_from = -1;  // send_fetch(): the worker whose peer socket this asks
    double budget_s = kFloor;
    std::chrono::steady_clock::time_point sent_at{};  // when it went on the wire
    bool done = false;
    bool lost = false;
    ReceivedBytes reply;
    // Its own, so an answer wakes only the thread awaiting it (with several
    // requests in flight per worker, one shared condition woke every waiter on
    // every answer).
    std::condition_variable answered;
  };
  struct Worker {
    std::string routing_id;
    HelloMessage hello;
    PeerAddress peer;
    std::chrono::steady_clock::time_point heard;
    // Its last answer (or the last moment it waited for a busy peer's value): deadlines count from here.
    std::chrono::steady_clock::time_point progress;
    bool lost = false;
    WorkerTraffic traffic;
  };

  explicit TileServer(const TileServerOptions& options);
  unsigned capacity() const { return std::max(options_.capacity, options_.workers); }
  std::shared_ptr<Request> submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from = -1, double budget_s = kFloor);
  // Queues CANCEL for every fetch from `source`'s peer socket (with the lock held).
  void cancel_fetches_from(unsigned source);

  // The wire and the sending (tile_server.cpp), I/O thread only.
  void io_main();
  void receive_one();
  void send_queued();
  void send_to(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body);
  // The same, handing `body` to ZeroMQ instead of copying it (a batch).
  void send_owned(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body);
  void sent_or_lost(const std::string& routing_id, bool sent, std::size_t bytes);
  void wake();

  // What happens on each event (tile_server_events.cpp), I/O thread only, under mutex_.
  // `address`: the IP the message came from (ZeroMQ's Peer-Address; empty if unknown).
  // `body_part`: the message part that holds the body (a REPLY's frame is kept in it, not copied).
  void on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address,
                  zmq::message_t* body_part);
  void on_hello(const std::string& routing_id, std::span<const std::byte> body, const std::string& address);
  void on_reply(Worker& w, std::uint64_t request, std::span<const std::byte> body, zmq::message_t* whole = nullptr);
  void on_tick();
  // Deadlines: a worker that owes answers and gave none in time, or whose heartbeat says it answered what never came.
  void check_progress(std::chrono::steady_clock::time_point now);
  void check_answered_through(unsigned w, std::uint64_t through);
  void declare_lost(unsigned w, const std::string& why);
  void unreadable(unsigned w, const Status& why);
  Worker* find_worker(const std::string& routing_id, unsigned* index = nullptr);

  TileServerOptions options_;
  std::chrono::milliseconds interval_;
  std::string endpoint_;
  zmq::context_t context_;
  // Declared after the context and before the socket: it answers the
  // socket's CURVE handshakes, so it stops after the socket closes and
  // before the context ends.
  std::unique_ptr<ZapAuthenticator> zap_;
  zmq::socket_t router_;
  Doorbell doorbell_;  // the I/O thread's

  // The state, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a worker came
  std::vector<Worker> workers_;
  std::deque<std::shared_ptr<Request>> outbox_;
  std::map<std::uint64_t, std::shared_ptr<Request>> in_flight_;
  std::vector<std::shared_ptr<Request>> answered_;  // replies on_reply() took, to wake their waiters (I/O thread)
  std::uint64_t next_request_ = 1;
  std::uint64_t incarnations_ = 0;
  TileServerCounts counts_;
  RefusalLog refusals_;  // what was refused, by peer: logged first, then counted (refusal_log.hpp)
  RefusalLog discards_;  // messages from workers declared lost, by worker: the same
  std::vector<std::string> peer_keys_;  // with keys: the authorized worker keys, sent in WELCOME
  std::vector<std::pair<std::string, EnvelopeKind>> notices_;  // HEARTBEAT/BYE/WELCOME/REFUSED to send, with bodies below
  std::vector<std::vector<std::byte>> notice_bodies_;
  std::chrono::steady_clock::time_point next_tick_;

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace redflow::net
