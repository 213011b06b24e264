// TaskManagerLink: the Job Manager's end of the network (PY-PITS's mode: the
// Task Managers listen, the Job Manager connects). One I/O thread owns every
// socket: it reads the announce list, connects a DEALER to each Task Manager
// it finds and says HELLO, keeps heartbeats both ways, sends the task batches
// the Job Manager pushed and acknowledges the result batches that come back.
//
// The Job Manager's thread sees each welcomed Task Manager as a TaskManager
// (RemoteTaskManager) whose room, push and pull touch only shared state
// under the link's lock. A Task Manager silent past the heartbeat timeout,
// or whose heartbeat shows that a task batch never reached it, is lost: the tasks it
// held come back from pull() as kLost (the oldest, one per Worker: what it
// was running) or kReturned (queued behind them), and the link keeps saying
// HELLO, so one that comes back after a partition is taken again and
// delivers the results it buffered.
#pragma once

#include <atomic>
#include <chrono>
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
#include "net/refusal_log.hpp"
#include "net/security.hpp"
#include "redflow/spits.hpp"
#include "spits/net_messages.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

struct LinkOptions {
  std::string announce_dir;
  std::string job;                     // the job's name (Task Managers check it)
  std::vector<std::string> args;       // sent in HELLO: Task Managers set the job up with them
  std::string key_file;                // this Job Manager's key pair (CURVE; Task Managers' keys come from the announce list)
  double heartbeat_timeout_s = 2;
};

class TaskManagerLink {
 public:
  static Result<std::unique_ptr<TaskManagerLink>> start(const LinkOptions& options, Wakeup& wakeup);
  ~TaskManagerLink();  // BYE to every Task Manager, then stops the I/O thread
  TaskManagerLink(const TaskManagerLink&) = delete;
  TaskManagerLink& operator=(const TaskManagerLink&) = delete;

  // Task Managers welcomed for the first time since the last call.
  std::vector<std::unique_ptr<TaskManager>> take_joined();
  // How many are welcomed and not lost now.
  unsigned live() const;

  // Per Task Manager, shared by the I/O thread and its RemoteTaskManager.
  struct Peer {
    std::string name, endpoint, public_key;
    TaskManagerInfo info;
    bool welcomed_once = false, live = false, gone = false;
    std::uint64_t losses = 0;
    std::uint64_t late = 0;  // results of tasks taken back from it at a loss: computed while cut off, delivered on its return
    std::size_t capacity = 0;
    // Tasks it holds, by push order, so a loss can tell the running (oldest) from the queued.
    std::uint64_t next_order = 0;
    std::map<std::uint64_t, std::uint64_t> held_by_order;  // order -> task id
    std::unordered_map<std::uint64_t, std::uint64_t> held;  // task id -> order
    std::vector<TaskMessage> outbox;
    std::vector<ResultMessage> inbox;
  };

 private:
  struct Connection;  // the I/O thread's side of a Peer: socket, clocks, unacknowledged batches
  explicit TaskManagerLink(const LinkOptions& options, Wakeup& wakeup);
  void io_main();
  void scan_announcements();
  void receive(Connection& c);
  void on_envelope(Connection& c, std::span<const std::span<const std::byte>> parts);
  void tick(std::chrono::steady_clock::time_point now);
  void flush_outboxes();
  // Under mutex_. With `strikes`, the oldest held tasks (one per Worker: what
  // it was running) are kLost, a strike each; the rest come back kReturned.
  void declare_lost(Connection& c, const std::string& why, bool strikes = true);
  // A message from `c` that cannot be read or is out of place: lost, if live.
  void unreadable(Connection& c, const std::string& why);
  void say_hello(Connection& c);
  bool send(Connection& c, net::EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body);
  void ring();

  LinkOptions options_;
  Wakeup& wakeup_;
  JobHello hello_;
  std::chrono::milliseconds interval_;
  zmq::context_t context_;
  std::vector<std::unique_ptr<Connection>> connections_;  // I/O thread only
  net::RefusalLog refusals_;  // I/O thread only: unreadable messages by Task Manager, logged first, then counted
  net::Doorbell doorbell_;

  mutable std::mutex mutex_;
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
  void stop() override {}  // the link says BYE to all at the end
  // Host and times lost, for the report.
  std::string host() const;
  std::uint64_t losses() const;
  std::uint64_t late_results() const;

 private:
  TaskManagerLink& link_;
  std::shared_ptr<TaskManagerLink::Peer> peer_;
};

}  // namespace redflow::spits
