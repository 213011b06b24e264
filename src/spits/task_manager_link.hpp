// TaskManagerLink: the Job Manager's end of the network. Task Managers reach
// it two ways, and from the WELCOME on both are the same to it:
//
//   - dial-in: a ROUTER bound at `listen`, where `redflow worker --connect`
//     processes say HELLO offering the task manager role; the link WELCOMEs
//     each with the job (a JobWelcome: plugin path, name, args);
//   - the announce list (PY-PITS's mode): Task Manager processes listen and
//     announce themselves in a directory; the link connects a DEALER to each
//     it finds and says HELLO, and the Task Manager WELCOMEs it.
//
// The dial-in side is a service on the driver's peer hub (net/peer_hub.hpp),
// as the tile and the stream node are: the hub admits each HELLO (the role
// and protocol version, then a name not already serving), WELCOMEs it, keeps
// its heartbeats and finds it silent, gone or unreadable, the same as in
// every model. The announce list is the other direction (this side says
// HELLO); it keeps its own sockets but the hub's heartbeat policy and
// silence rule. One I/O thread owns every socket: it keeps heartbeats both
// ways, sends the task batches the Job Manager pushed and acknowledges the
// result batches that come back; what a Task Manager says after its WELCOME
// is handled in one place whichever socket it came on (a Connection: its
// own DEALER, or its peer on the hub).
//
// The Job Manager's thread sees each welcomed Task Manager as a TaskManager
// (RemoteTaskManager) whose room, push and pull touch only shared state
// under the link's lock. A Task Manager silent past the heartbeat timeout,
// or whose heartbeat shows that a task batch never reached it, is lost: the tasks it
// held come back from pull() as kLost (the oldest, one per Worker: what it
// was running) or kReturned (queued behind them), and the link keeps saying
// HELLO, so one that comes back after a partition is taken again and
// delivers the results it buffered. A dial-in Task Manager that is lost is
// told BYE (in case it is only hung); a worker that comes back under the same
// name (`redflow worker --persist`) is that Task Manager again, starting afresh.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "net/doorbell.hpp"
#include "net/envelope.hpp"
#include "net/peer_hub.hpp"
#include "net/security.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/cluster.hpp"
#include "redflow/spits.hpp"
#include "spits/net_messages.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

// At least one of announce_dir and cluster.listen.
struct LinkOptions {
  // The job's spits::Options::cluster. Read here: listen (where Task Managers
  // dial in; anything but loopback needs keys), key_file (this Job Manager's
  // key pair: CURVE; announced Task Managers' keys come from the list),
  // authorized_keys_file (with listen and keys: the workers let in) and
  // heartbeat_timeout_s. Waiting for min_workers is the caller's (wait_for()).
  ClusterOptions cluster = {};
  std::string announce_dir;            // where listening Task Managers announce themselves
  std::string plugin;                  // the job's .so as dial-in Task Managers load it: a path on their machines
  std::string job;                     // the job's name (Task Managers check it)
  std::vector<std::string> args;       // Task Managers set the job up with them
};

class TaskManagerLink final : private net::PeerService {
 public:
  static Result<std::unique_ptr<TaskManagerLink>> start(const LinkOptions& options, Wakeup& wakeup);
  // A dial-in link with no socket and no thread: the caller (a unit test)
  // hands events to hub() and sends what it queued with flush(), as the I/O
  // thread does with the ROUTER socket.
  static std::unique_ptr<TaskManagerLink> without_sockets(const LinkOptions& options, Wakeup& wakeup);
  ~TaskManagerLink() override;  // BYE to every Task Manager, then stops the I/O thread
  TaskManagerLink(const TaskManagerLink&) = delete;
  TaskManagerLink& operator=(const TaskManagerLink&) = delete;

  // Where dial-in Task Managers connect (the bound endpoint; empty without listen).
  const std::string& endpoint() const { return endpoint_; }
  // Task Managers welcomed for the first time since the last call.
  std::vector<std::unique_ptr<TaskManager>> take_joined();
  // How many are welcomed and not lost now.
  unsigned live() const;
  // Waits until `n` are live; after `wait_s` an error saying how many came.
  Status wait_for(unsigned n, double wait_s) const;

  // The dial-in hub (null without listen) and what the I/O thread does after
  // each round of events: task batches queued, then the hub's queue sent.
  // I/O thread only (or the caller of a link without_sockets()).
  net::PeerHub* hub() { return hub_.get(); }
  void flush(net::HubSender& dialled_in);

  // Per Task Manager, shared by the I/O thread and its RemoteTaskManager.
  struct Peer {
    std::string name, endpoint, public_key;
    TaskManagerInfo info;
    bool welcomed_once = false, live = false, gone = false;
    std::uint64_t losses = 0;
    std::uint64_t late = 0;  // results of tasks taken back from it at a loss: computed while cut off, delivered on its return
    std::size_t capacity = 0;
    std::uint64_t ns_per_task = 0;  // its Workers' time per task, from its last result batch
    // Tasks it holds, by push order, so a loss can tell the running (oldest) from the queued.
    std::uint64_t next_order = 0;
    std::map<std::uint64_t, std::uint64_t> held_by_order;  // order -> task id
    std::unordered_map<std::uint64_t, std::uint64_t> held;  // task id -> order
    std::vector<TaskMessage> outbox;
    std::vector<ResultMessage> inbox;
  };

 private:
  struct Connection;  // the I/O thread's side of a Peer: its socket or hub peer, clocks, unacknowledged batches
  explicit TaskManagerLink(const LinkOptions& options, Wakeup& wakeup);
  Status listen();
  void make_hub();
  void io_main();
  void scan_announcements();
  void receive(Connection& c);
  void receive_dialled_in();
  void on_envelope(Connection& c, std::span<const std::span<const std::byte>> parts);
  // A message of a welcomed Task Manager's role, whichever way it came.
  // False when a Task Manager never sends it.
  bool on_role_message(Connection& c, const net::Envelope& e);
  // Whether a heartbeat naming task batch `request` shows one that never reached `c`, and which.
  std::string batch_never_reached(Connection& c, std::uint64_t request);

  // PeerService: the dial-in Task Managers' side of each session event.
  std::string admit(const net::HelloMessage& hello) override;
  void welcome(unsigned peer, net::WelcomeMessage& welcome) override;
  void welcomed(unsigned peer, Time now) override;
  bool message(unsigned peer, const net::Envelope& e, Time now, zmq::message_t* body_part) override;
  void heartbeat(unsigned peer, std::uint64_t request) override;
  std::uint64_t beat_request(unsigned peer) override;
  void lost(unsigned peer, const std::string& why, bool left) override;
  std::string describe(unsigned peer, const net::HelloMessage& hello) const override;
  Connection* dialled_in(const std::string& name);
  // Under mutex_: `c` serves the job from now on.
  void welcomed(Connection& c, TaskManagerInfo info);
  void tick(std::chrono::steady_clock::time_point now);
  void flush_outboxes();
  // Under mutex_. With `strikes`, the oldest held tasks (one per Worker: what
  // it was running) are kLost, a strike each; the rest come back kReturned.
  void declare_lost(Connection& c, const std::string& why, bool strikes = true);
  // A message from `c` that cannot be read or is out of place: lost, if live.
  void unreadable(Connection& c, const std::string& why);
  void say_hello(Connection& c);
  // False when it could not go; a dial-in Task Manager is then lost (its connection is gone).
  bool send(Connection& c, net::EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body);
  // The same without the loss: for what goes out while losing it, or at the end.
  bool send_only(Connection& c, net::EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body);
  unsigned live_locked() const;
  void ring();

  LinkOptions options_;
  Wakeup& wakeup_;
  JobHello hello_;
  std::chrono::milliseconds interval_;
  zmq::context_t context_;
  std::unique_ptr<net::ZapAuthenticator> zap_;  // with listen: lets in the authorized keys (before router_: outlives it)
  zmq::socket_t router_;                        // with listen: where Task Managers dial in
  std::string endpoint_;
  std::vector<std::byte> job_welcome_;          // a WELCOME's service bytes: the JobWelcome
  std::vector<std::unique_ptr<Connection>> connections_;  // changed on the I/O thread, under mutex_
  std::unique_ptr<net::PeerHub> hub_;  // with listen: the dial-in Task Managers' sessions (I/O thread only)
  std::vector<Connection*> by_peer_;   // the hub's peer -> its Connection (I/O thread only)
  std::unique_ptr<net::HubSender> router_sender_;  // the hub's sends on router_ (with listen)
  net::Doorbell doorbell_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;  // a Task Manager was welcomed
  std::vector<std::shared_ptr<Peer>> joined_;  // welcomed, not yet taken
  std::atomic<bool> stop_{false};
  std::thread thread_;

  friend class RemoteTaskManager;
};

// A Task Manager across the network, as the Job Manager sees it.
class RemoteTaskManager final : public TaskManager {
 public:
  RemoteTaskManager(TaskManagerLink& link, std::shared_ptr<TaskManagerLink::Peer> peer);
  const std::string& name() const override { return peer_->name; }
  unsigned workers() const override;
  std::size_t room() const override;
  void push(std::vector<TaskMessage>& tasks) override;
  std::size_t pull(std::vector<ResultMessage>& out) override;
  double task_s() const override;
  void stop() override {}  // the link says BYE to all at the end
  // Host and times lost, for the report.
  std::string host() const;
  std::uint64_t losses() const override;
  std::uint64_t late_results() const;

 private:
  TaskManagerLink& link_;
  std::shared_ptr<TaskManagerLink::Peer> peer_;
};

}  // namespace redflow::spits
