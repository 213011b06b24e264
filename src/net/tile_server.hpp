// TileServer: the driver's end of the link to worker processes (docs/remote.md).
// One ROUTER socket bound at RuntimeOptions::listen, owned by one I/O thread;
// the engine's threads never touch it. They hand requests (tile-protocol
// frames for one worker) to the I/O thread through a queue and an eventfd,
// and wait for the REPLY with the same request id.
//
// The state and what happens on each event (HELLO, REPLY, HEARTBEAT, BYE, a
// garbled message, a silent worker, a missed deadline) are a TileHub
// (tile_hub.hpp), which owns no socket and no thread; this class is its
// effects: the poll loop, receiving multipart messages and handing them to
// the hub, sending what the hub queued, the clock's ticks, and waking the
// engine's threads that await answers (tile_server.cpp).
//
// Thread-safety: every public method may be called from any thread; the hub
// is used under one mutex, and the socket only by the I/O thread.
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/doorbell.hpp"
#include "net/tile_hub.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

class TileServer {
  using Request = TileHub::Request;

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
  static constexpr double kFloor = TileHub::kFloor, kUnbounded = TileHub::kUnbounded;
  Ticket send(unsigned w, std::vector<std::byte> frame, double budget_s = kFloor);
  // Gives the request its deadline: at least the floor, at most `budget_s` (kUnbounded: none).
  void bound(const Ticket& ticket, double budget_s);
  // The least deadline: kFloorBeats heartbeat timeouts.
  static constexpr double kFloorBeats = TileHub::kFloorBeats;
  double floor_s() const { return hub_->floor_s(); }
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
  using PeerAddress = TileHub::PeerAddress;
  PeerAddress peer(unsigned w) const;

  TileServerCounts counts() const;
  WorkerTraffic traffic(unsigned w) const;

 private:
  explicit TileServer(const TileServerOptions& options) : options_(options), context_(1) {}
  std::shared_ptr<Request> submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from = -1, double budget_s = kFloor);
  // lose() and refuse(): the hub's `how`, then its waiters and the I/O thread woken.
  void drop(bool (TileHub::*how)(unsigned, const std::string&), unsigned w, const std::string& why);

  // I/O thread only.
  void io_main();
  void receive_one();
  void send_queued();
  void wake();
  // Wakes the threads awaiting the requests the hub answered or lost
  // (TileHub::take_answered), after the lock is released: a runner woken
  // under it would wake only to block on the lock this thread still holds.
  static void wake_answered(std::vector<std::shared_ptr<Request>>& answered);

  TileServerOptions options_;
  std::string endpoint_;
  zmq::context_t context_;
  // Declared after the context and before the socket: it answers the
  // socket's CURVE handshakes, so it stops after the socket closes and
  // before the context ends.
  std::unique_ptr<ZapAuthenticator> zap_;
  zmq::socket_t router_;
  Doorbell doorbell_;  // the I/O thread's

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a worker came
  std::unique_ptr<TileHub> hub_;     // under mutex_; made by start() once the keys are known
  TileHub::Time next_tick_;

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace redflow::net
