// WorkerPool: the server's side of the workers' endpoint. `redflow worker
// --connect ENDPOINT --persist` processes dial it and say HELLO; the pool
// holds each HELLO unanswered (the worker is idle) until a job takes the
// worker, then answers REDIRECT with the port of that job's driver. The
// worker serves the driver there and, after its BYE (or when the driver
// ends without one), dials this endpoint again and is idle once more. So
// several jobs' drivers run at once, each on its own port, on disjoint
// workers, and the workers never see more than one endpoint.
//
// The pool beats every idle worker once a second (beat()): the worker's wait
// for a job starts again with each beat, so it waits as long as the server
// is there; and a beat that cannot be sent finds an idle worker that died.
//
// A worker takes its REDIRECT by answering BYE before it leaves. One that
// does not within the confirm timeout (it died while idle, and its REDIRECT
// went into a connection that was already gone), or that says HELLO again
// instead, did not go: untaken() gives it back to the server, whose job then
// gets another. One whose connection the ROUTER already knows to be gone is
// found out at once (the ROUTER is mandatory) and another is taken.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/security.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/status.hpp"

namespace redflow::server {

class WorkerPool {
 public:
  // Binds `endpoint` (with keys: a CURVE server letting in the authorized keys).
  // A worker sent that has not answered BYE within `confirm_timeout_s` did not go.
  static Result<std::unique_ptr<WorkerPool>> open(zmq::context_t& context, const std::string& endpoint, const net::SecurityOptions& security,
                                                  double confirm_timeout_s = 5);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The endpoint bound (its port chosen when asked for "*").
  const std::string& endpoint() const { return endpoint_; }
  // For the server's poll.
  zmq::socket_t& socket() { return socket_; }
  // Takes every message come: a HELLO makes its worker idle; a BYE confirms
  // that a worker sent took its REDIRECT; anything else is logged and dropped.
  void receive();
  std::size_t idle() const { return idle_.size(); }
  // "NAME on HOST" of each idle worker, longest idle first.
  std::vector<std::string> idle_names() const;
  // "NAME on HOST" of every worker the pool knows: idle, sent, serving a job.
  std::vector<std::string> names() const;
  // Sends up to `n` idle workers, longest idle first, to the driver
  // listening on `port` of this host; each comes back to the server when
  // that driver has not welcomed it within `welcome_timeout_s`. Returns the
  // "NAME on HOST" of each one sent (fewer than `n` when some were gone).
  std::vector<std::string> send(std::size_t n, std::uint16_t port, double welcome_timeout_s, std::uint64_t job);

  // Once a second at most: a HEARTBEAT to each idle worker; one that cannot
  // be sent (the worker's connection is gone) drops that worker.
  void beat();

  // A worker sent to `job` that did not go.
  struct Untaken {
    std::uint64_t job = 0;
    std::string name;  // "NAME on HOST"
    std::string why;
  };
  // The workers sent that did not confirm within the timeout or said HELLO
  // again; each is given once, then forgotten (a HELLO makes it idle again).
  std::vector<Untaken> untaken();

  // A worker that served `job` (it confirmed its REDIRECT) and is idle here
  // again: the job's driver let it go, so the job no longer holds it.
  struct Returned {
    std::uint64_t job = 0;
    std::string name;  // "NAME on HOST"
  };
  // The workers returned since the last call; each is given once.
  std::vector<Returned> returned() { return std::exchange(returned_, {}); }
  // Job `job`'s driver has ended: its workers still away are on their way
  // back. One not back within `return_timeout_s` is forgotten (it died).
  void job_ended(std::uint64_t job, double return_timeout_s = 10);
  // The workers of ended jobs on their way back (the forgotten ones logged and dropped).
  std::size_t returning();

 private:
  using Clock = std::chrono::steady_clock;
  struct Idle {
    std::string routing_id;
    std::string name;  // "NAME on HOST"
    std::string host;
    std::uint32_t pid = 0;
  };
  struct Sent {
    Idle worker;
    std::uint64_t job = 0;
    Clock::time_point deadline;  // unconfirmed: for its BYE; serving an ended job: to be back
    bool job_ended = false;
  };
  WorkerPool(zmq::context_t& context, double confirm_timeout_s) : zap_(context), confirm_timeout_(confirm_timeout_s) {}

  net::ZapAuthenticator zap_;  // before the socket: it outlives it
  zmq::socket_t socket_;
  std::string endpoint_;
  std::vector<Idle> idle_;  // in the order their HELLOs came
  std::chrono::duration<double> confirm_timeout_;
  std::vector<Sent> unconfirmed_;  // sent, no BYE yet
  std::vector<Untaken> untaken_;   // said HELLO again before their BYE
  std::vector<Sent> serving_;      // confirmed: serving their job's driver
  std::vector<Returned> returned_;  // served, and said HELLO here again
  Clock::time_point next_beat_ = Clock::now();
};

}  // namespace redflow::server
