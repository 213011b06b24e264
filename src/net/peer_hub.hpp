// PeerHub: what every driver does with the worker processes that dial in to
// it, whichever role they serve (a tile, a stream node, a SPITS Task
// Manager), as state and event handlers with no socket, no thread and no
// clock of its own (HyperQueue's `tako` reactor shape). Its owner (the tile
// server, the stream driver, the SPITS Job Manager's link) holds the ROUTER
// socket and the clock, hands each message and tick here, and sends what the
// hub queued through a HubSender; a unit test drives the same handlers with
// a recording sender and a clock it advances itself.
//
// The hub owns the session:
//   - admission of a HELLO: decoded; refused unless it offers the driver's
//     role at its protocol version (role_refusal()), unless the service
//     admits it (PeerService::admit: what the role needs, a name already
//     serving), and while the driver has room (`capacity`); a refusal is a
//     REFUSED with the reason, logged once per peer (RefusalLog);
//   - WELCOME: role, id, incarnation, heartbeat interval and timeout, and
//     whatever the service adds (PeerService::welcome);
//   - liveness (the ZeroMQ guide's Paranoid Pirate): HEARTBEAT to every peer
//     each interval (a quarter of the timeout, at least 10 ms: one late or
//     lost beat never loses a peer), any message a sign of life, a peer
//     silent past the timeout lost;
//   - loss: silence, a BYE or REFUSED from the peer, a message it cannot
//     read, one only a driver sends, a send that fails (its connection
//     dropped), or the service's word (lose(), refuse()); a lost peer is told
//     BYE (in case it is only hung) and never taken back: what it sends later
//     is discarded and counted. A process that comes back is a new peer;
//   - leave(): BYE to every peer not lost; end(why): the driver gave up,
//     REFUSED with the reason to every peer not lost, so each ends with an
//     error that says why rather than as after a finished run.
// What a peer says in its role (REPLYs, ACKs, ...) goes to the service,
// which keeps its own state: a tile its requests and deadlines, a stream
// node its tokens, a Task Manager the tasks it holds.
//
// Thread-safety: none; the owner serialises every call. The service's
// callbacks run inside the call that caused them.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/refusal_log.hpp"
#include "net/worker_messages.hpp"

namespace redflow::net {

using HubClock = std::chrono::steady_clock;

// The one heartbeat policy of every driver: beats every quarter of the
// timeout, at least every 10 ms; a peer heard from last more than the
// timeout ago is silent (lost).
std::chrono::milliseconds heartbeat_interval(double heartbeat_timeout_s);
bool silent(HubClock::time_point heard, HubClock::time_point now, double heartbeat_timeout_s);
// "silent for more than 2 s": why a silent peer is lost, in every model's words.
std::string silence_reason(double heartbeat_timeout_s);

// What a driver's hub sends through: one envelope to one peer, named by its
// routing id. A driver's writes to its ROUTER socket; a unit test's records.
// Thread-safety: the caller's (one thread at a time).
class HubSender {
 public:
  virtual ~HubSender() = default;
  // False when the peer cannot be reached any more (its connection dropped).
  virtual bool send(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) = 0;
  // The same, with `body` taken over (ZeroMQ sends it without a copy).
  virtual bool send_owned(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) = 0;
};

// A role served over the hub. Its callbacks run inside the hub's event
// handlers, under its owner's serialisation. Peers are numbered from 0 in
// order of arrival (a peer's number is never reused).
class PeerService {
 public:
  using Time = HubClock::time_point;
  virtual ~PeerService() = default;
  // Why `hello` (which offers the role at the driver's version) is refused;
  // empty to welcome it.
  virtual std::string admit(const HelloMessage& hello) { (void)hello; return {}; }
  // Fills in the service's part of peer `peer`'s WELCOME (its id in the
  // role, keys, the service's bytes); the hub filled in the rest.
  virtual void welcome(unsigned peer, WelcomeMessage& welcome) { (void)peer, (void)welcome; }
  // `peer` was welcomed (its WELCOME is queued: what the service sends it now follows it).
  virtual void welcomed(unsigned peer, Time now) { (void)peer, (void)now; }
  // A message of the role's from welcomed `peer` (anything but HELLO,
  // HEARTBEAT, BYE and REFUSED); `body_part` the message part holding the
  // body, if the owner has it (a REPLY's frame can be kept, not copied).
  // False when a peer of this role never sends it: the peer is then lost.
  virtual bool message(unsigned peer, const Envelope& e, Time now, zmq::message_t* body_part) = 0;
  // `peer`'s HEARTBEAT, with the request id it carries (what the role's
  // worker says with it: a tile, the request it answered everything up to).
  virtual void heartbeat(unsigned peer, std::uint64_t request) { (void)peer, (void)request; }
  // The request id the hub's HEARTBEAT to `peer` carries (0 for none).
  virtual std::uint64_t beat_request(unsigned peer) { (void)peer; return 0; }
  // `peer` is lost for `why`; `left` when it said BYE itself.
  virtual void lost(unsigned peer, const std::string& why, bool left) = 0;
  // How logs name `peer` ("worker 'w1' (tile 3)").
  virtual std::string describe(unsigned peer, const HelloMessage& hello) const { (void)peer; return "worker '" + hello.name + "'"; }
};

struct PeerHubOptions {
  std::string log_name = "driver";  // how its log lines begin ("tile server")
  Role role = Role::kTile;          // the role it welcomes peers into...
  std::uint16_t version = 0;        // ...at this protocol version
  double heartbeat_timeout_s = 2;   // silence after which a peer is lost
  unsigned capacity = 0;            // peers welcomed in all, then refused; 0: no limit
  std::string full_reason;          // the REFUSED's reason when full
};

// What the hub counted (a run's stats and tests read them).
struct PeerHubCounts {
  std::uint64_t refused_messages = 0;  // malformed, out of place, from strangers
  std::uint64_t discarded_late = 0;    // from peers declared lost
  std::uint64_t refused_workers = 0;   // HELLOs answered REFUSED, peers refused later
};

class PeerHub {
 public:
  using Clock = HubClock;
  using Time = Clock::time_point;

  struct Peer {
    std::string routing_id;
    HelloMessage hello;
    std::string address;  // the IP it came from (ZeroMQ's Peer-Address; empty if unknown)
    Time heard{};
    bool lost = false;
  };
  // Something queued for one peer: the hub's notices and what the service sent, in order.
  struct Notice {
    std::string routing_id;
    EnvelopeKind kind = EnvelopeKind::kHeartbeat;
    std::uint64_t request = 0;
    std::vector<std::byte> body;
  };

  PeerHub(PeerHubOptions options, PeerService& service);
  ~PeerHub();  // logs the refusals and discards counted but not yet logged
  PeerHub(const PeerHub&) = delete;
  PeerHub& operator=(const PeerHub&) = delete;

  // How often the owner calls on_tick().
  std::chrono::milliseconds interval() const { return interval_; }
  const PeerHubOptions& options() const { return options_; }

  // ---- Events ----
  // A message from `routing_id`: `parts` after the routing id.
  void on_message(const std::string& routing_id, std::span<const std::span<const std::byte>> parts, const std::string& address, Time now,
                  zmq::message_t* body_part = nullptr);
  // The clock: silent peers lost, HEARTBEAT to the others. A tick that
  // comes more than half a heartbeat timeout late (this process did not
  // run: a loaded machine, a VM's stolen time, a debugger) judges no
  // silence: what the peers sent meanwhile may be unread still, in the
  // socket or in ZeroMQ's queues. The next tick, once the owner has read
  // it, judges; so a dead peer is found at most one interval later.
  void on_tick(Time now);
  // Declares `peer` lost for `why` (a message out of place: counted as
  // refused). False when it was lost already or is unknown.
  bool lose(unsigned peer, const std::string& why);
  // The same for the service's own reason (a missed deadline), not counted.
  bool drop(unsigned peer, const std::string& why);
  // Tells `peer` `why` in a REFUSED, and declares it lost.
  bool refuse(unsigned peer, const std::string& why);
  // The driver leaves: BYE to every peer not lost.
  void leave();
  // The driver gives up (its work failed): REFUSED with `why` to every peer
  // not lost, which ends each one's session with that error.
  void end(const std::string& why);
  // Queues `kind` for `peer` (nothing if it is lost or unknown), after what is queued.
  void send(unsigned peer, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body = {});

  // ---- Sending ----
  std::vector<Notice> take_notices() { return std::exchange(notices_, {}); }
  // `routing_id` could not be sent to: its connection dropped, so the peer is lost.
  void unreachable(const std::string& routing_id);
  // take_notices(), each sent through `out`, a peer that cannot be reached lost.
  void flush(HubSender& out);

  // ---- State ----
  unsigned size() const { return static_cast<unsigned>(peers_.size()); }
  bool lost(unsigned peer) const { return peer >= peers_.size() || peers_[peer].lost; }
  const Peer& peer(unsigned p) const { return peers_.at(p); }
  // The peer with `routing_id`; -1 if none.
  int find(const std::string& routing_id) const;
  const PeerHubCounts& counts() const { return counts_; }
  // Refusals of HELLOs, for a driver's "none came" error: the latest reason per worker.
  const std::vector<std::string>& refusals() const { return refusal_reasons_; }

 private:
  void on_hello(const std::string& routing_id, std::span<const std::byte> body, const std::string& address, Time now);
  void refuse_stranger(const std::string& who, std::string why, const std::string& routing_id);
  void declare_lost(unsigned peer, const std::string& why, bool left = false);
  void notice(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request = 0, std::vector<std::byte> body = {});
  std::string stranger(const std::string& routing_id, const std::string& address) const;

  PeerHubOptions options_;
  PeerService& service_;
  std::chrono::milliseconds interval_;
  Time last_tick_{};           // the last on_tick(); none before the first
  bool silence_deferred_ = false;  // the last tick came late and judged no silence
  std::vector<Peer> peers_;
  std::vector<Notice> notices_;
  std::uint64_t incarnations_ = 0;
  PeerHubCounts counts_;
  RefusalLog refusals_;  // what was refused, by peer: logged first, then counted (refusal_log.hpp)
  RefusalLog discards_;  // messages from peers declared lost, by peer: the same
  std::vector<std::string> refusal_reasons_;
};

}  // namespace redflow::net
