// WorkerPool: the server's side of the workers' endpoint. `redflow worker
// --connect ENDPOINT --persist` processes dial it and say HELLO; the pool
// holds each HELLO unanswered (the worker is idle) until a job takes the
// worker, then answers REDIRECT with the port of that job's driver. The
// worker serves the driver there and, after its BYE (or when the driver
// ends without one), dials this endpoint again and is idle once more. So
// several jobs' drivers run at once, each on its own port, on disjoint
// workers, and the workers never see more than one endpoint.
//
// An idle worker that died is found out when a REDIRECT to it cannot be sent
// (the ROUTER is mandatory): it is dropped, and another is taken.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <zmq.hpp>

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
  static Result<std::unique_ptr<WorkerPool>> open(zmq::context_t& context, const std::string& endpoint, const net::SecurityOptions& security);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The endpoint bound (its port chosen when asked for "*").
  const std::string& endpoint() const { return endpoint_; }
  // For the server's poll.
  zmq::socket_t& socket() { return socket_; }
  // Takes every message come: a HELLO makes its worker idle; anything else is logged and dropped.
  void receive();
  std::size_t idle() const { return idle_.size(); }
  // "NAME on HOST" of each idle worker, longest idle first.
  std::vector<std::string> idle_names() const;
  // Sends up to `n` idle workers, longest idle first, to the driver
  // listening on `port` of this host; each comes back to the server when
  // that driver has not welcomed it within `welcome_timeout_s`. Returns the
  // "NAME on HOST" of each one sent (fewer than `n` when some were gone).
  std::vector<std::string> send(std::size_t n, std::uint16_t port, double welcome_timeout_s);

 private:
  struct Idle {
    std::string routing_id;
    std::string name;  // "NAME on HOST"
    std::string host;
    std::uint32_t pid = 0;
  };
  WorkerPool(zmq::context_t& context) : zap_(context) {}

  net::ZapAuthenticator zap_;  // before the socket: it outlives it
  zmq::socket_t socket_;
  std::string endpoint_;
  std::vector<Idle> idle_;  // in the order their HELLOs came
};

}  // namespace redflow::server
