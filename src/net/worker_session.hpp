// The worker side of the link to a driver, written once for every role.
//
// A WorkerSession connects to a driver (a DEALER, with keys if given), says
// HELLO with every role it can serve (each WorkerRole adds its part: a tile
// its slots, functions and peer socket, a node its operators), and waits for
// WELCOME, which names the one role the driver wants, or REFUSED. It then
// starts that role's WorkerService and, on the calling thread, keeps the
// socket: heartbeats in the rhythm WELCOME gave, the driver's requests handed
// to the service, the service's turn after every wake-up, and the end:
//
//   - BYE from the driver: the service says what its part came to (Ok, or
//     why it did not finish), and the session ends with that;
//   - the service's turn() failed (a tile that died): BYE to the driver,
//     which loses this worker at once, and the session ends with that error;
//   - REFUSED, an unreadable message (answered REFUSED: the driver must not
//     wait for an answer to a request it may have held), a driver silent
//     past WELCOME's heartbeat timeout (and one more interval of grace), or
//     no WELCOME within connect_timeout_s: the session ends with an error
//     that says which.
//
// A connection that drops before the WELCOME (a persistent worker's HELLO
// reached the last driver, closing after its BYE) is started over on a fresh
// socket with a fresh HELLO, within connect_timeout_s.
//
// A `redflow server` answers HELLO with REDIRECT instead, or, while it has
// no job for this worker, with a HEARTBEAT every second, each of which starts
// the connect_timeout_s wait again (an idle worker waits as long as its
// server is there). The worker confirms a REDIRECT with a BYE to the server,
// then serves the job's driver on the port REDIRECT names, on the host it
// reached the server on, and after
// that session (or when that driver sends no WELCOME within REDIRECT's
// timeout) dials the server again. A session with such a driver also ends
// when its connection drops: the driver's process is gone (cancelled, over
// its time limit, or its server died), and the server's next job should not
// wait out a heartbeat timeout for this worker.
//
// With `persist`, a session that ended after a WELCOME is followed by the
// next one on a fresh socket: the same process serves driver after driver
// (a graph run, then a SPITS job, then a stream program), whatever role each
// one names. Without it the first session's end is the worker's.
//
// Thread-safety: run() owns the socket and runs on one thread; services may
// start threads of their own and wake the session through the doorbell.
#pragma once

#include <zmq.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/peer_socket.hpp"
#include "net/security.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

// What a service sends its driver through: one envelope at a time. The
// session's implementation writes to the DEALER; a unit test's records.
class Sender {
 public:
  virtual ~Sender() = default;
  // False when the message could not be queued (the link is gone).
  virtual bool send(EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) = 0;
  // The same, with `body` taken over (ZeroMQ sends it without a copy).
  virtual bool send_owned(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) = 0;
};

// One role's work for one driver, from WELCOME to the session's end. Every
// call comes from the session's thread.
class WorkerService {
 public:
  virtual ~WorkerService() = default;
  // A REQUEST from the driver (each entry of a REQUESTS batch too), in
  // order. An error: the request cannot be read, and the session answers
  // REFUSED and ends (refuse_and_leave): the driver must not wait for it.
  virtual Status on_request(std::uint64_t request, ReceivedBytes frame) = 0;
  // CANCEL and ACK of a request id (roles that use them).
  virtual void on_cancel(std::uint64_t /*request*/) {}
  virtual void on_ack(std::uint64_t /*request*/) {}
  // Sockets of its own the session polls beside the driver's (a tile's peer socket).
  virtual void poll_items(std::vector<zmq::pollitem_t>& /*items*/) {}
  // After every wake-up: take what is ready and send it. An error ends the
  // session with it, after a BYE to the driver.
  virtual Status turn() { return Status::Ok(); }
  // The id every heartbeat carries (a tile: the request up to which it has answered all).
  virtual std::uint64_t answered_through() const { return 0; }
  // The driver said BYE: what this role's part came to.
  virtual Status on_bye() { return Status::Ok(); }
  // The session ends (after BYE or on an error): stop, or leave behind, what
  // still runs. True when a thread was left running that may still ring the
  // session's doorbell (the session then never frees it).
  virtual bool leave() { return false; }
};

// A role a worker can serve: its part of HELLO, and the service it starts
// when a driver WELCOMEs it into this role. Lives as long as the worker.
class WorkerRole {
 public:
  virtual ~WorkerRole() = default;
  virtual Role role() const = 0;
  virtual std::uint16_t version() const = 0;
  // Before every HELLO: this role's fields. `peers` is the worker's peer
  // socket for this driver (peer_socket.hpp; its port and key are already in
  // HELLO): it lives until the next HELLO, and whichever role the driver
  // WELCOMEs serves its peers on it (a tile's slot reads, a node's tokens).
  virtual Status describe(PeerSocket& peers, HelloMessage& hello) = 0;
  // WELCOMEd into this role: its service for this driver, or why it cannot
  // serve (the session says BYE and ends with that error).
  virtual Result<std::unique_ptr<WorkerService>> start(const WelcomeMessage& welcome, Sender& driver, const Doorbell& doorbell) = 0;
};

// Where a driver is: its endpoint and, when it published one, its public key.
struct DriverAddress {
  std::string endpoint;
  std::string server_public_key;  // Z85; empty: the key file of `security`, or none
};

struct WorkerSessionOptions {
  // Where the driver is, asked before every session (an address file may
  // name another driver each time).
  std::function<Result<DriverAddress>()> driver;
  SecurityOptions security = {};  // its key pair and the driver's public key (none: plain text)
  std::string name;               // empty: host:pid
  unsigned cores = 1;
  double connect_timeout_s = 30;  // for each WELCOME
  bool persist = false;           // serve driver after driver
  double idle_timeout_s = 0;      // at a server: end (Ok) after this long with no job; 0: never
  // Tests and embedders: called with each WELCOME taken (role and id).
  std::function<void(const WelcomeMessage&)> on_welcome = {};
};

class WorkerSession {
 public:
  explicit WorkerSession(WorkerSessionOptions options) : options_(std::move(options)) {}
  void add(std::unique_ptr<WorkerRole> role) { roles_.push_back(std::move(role)); }
  // Serves until the last session ends: its outcome (Ok after BYE).
  Status run();

 private:
  enum class Outcome { kNoWelcome, kRefused, kWelcomed, kDropped, kRedirected, kIdle };
  // One session. `redirected`: with a job's driver a server sent this worker
  // to (it ends when the connection drops). A REDIRECT fills `redirect`.
  Status serve_one(const DriverAddress& driver, double connect_timeout_s, bool redirected, Outcome& outcome, RedirectMessage& redirect);
  WorkerRole* role_for(Role role) const;

  WorkerSessionOptions options_;
  zmq::context_t context_{1};  // first: every socket closes before it
  std::unique_ptr<PeerSocket> peers_;  // this driver's (opened before each HELLO)
  std::vector<std::unique_ptr<WorkerRole>> roles_;  // last: their links over peers_ go first
};

}  // namespace redflow::net
