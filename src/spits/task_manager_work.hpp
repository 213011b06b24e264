// TaskManagerWork: a Task Manager's part of a job for one Job Manager,
// whichever way the two are linked: the Task Manager role of `redflow
// worker`, which dialled in (task_manager_role.hpp), or a Task Manager
// process found through the announce list (task_manager_process.hpp).
//
// W Workers (a LocalTaskManager) run the tasks and ring the link's doorbell
// when results are ready. A task batch (REQUEST) is queued and acknowledged
// at once (ACK with its id); results go out in REPLY batches, one per call of
// send_results(), each kept until the Job Manager acknowledges it, so
// results computed while the link was down can be sent again.
//
// Thread-safety: one thread (the link's) makes every call; the Workers are
// threads of its own that touch only the LocalTaskManager.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "net/doorbell.hpp"
#include "net/worker_session.hpp"
#include "spits/job_plugin.hpp"
#include "spits/local_task_manager.hpp"

namespace redflow::spits {

class TaskManagerWork {
 public:
  // `prefetch` 0: adaptive (LocalTaskManager). `job` is set up and outlives this.
  TaskManagerWork(std::string name, const JobPlugin& job, unsigned workers, unsigned prefetch, const net::Doorbell& doorbell);
  ~TaskManagerWork();
  TaskManagerWork(const TaskManagerWork&) = delete;
  TaskManagerWork& operator=(const TaskManagerWork&) = delete;

  // A task batch: its tasks queued and the batch acknowledged to `to`. An
  // error when it cannot be read: nothing is queued nor acknowledged (the
  // Job Manager's heartbeat check then finds the batch lost).
  Status take(net::Sender& to, std::uint64_t request, std::span<const std::byte> body);
  // The Job Manager has result batch `seq`.
  void acknowledged(std::uint64_t seq) { unacked_.erase(seq); }
  // The results ready now, as one REPLY batch to `to`, kept until acknowledged.
  void send_results(net::Sender& to);
  // Every batch kept, oldest first (the Job Manager came back after a partition).
  void resend(net::Sender& to) const;
  std::size_t kept() const { return unacked_.size(); }
  // The last task batch taken (request id): a dial-in Task Manager's
  // heartbeats carry it, so the Job Manager learns of a batch lost on the way.
  std::uint64_t last_taken() const { return last_taken_; }
  // Tasks it takes at once, as the Job Manager is told (kNetworkMargin).
  std::uint32_t capacity() const;
  // Stops the Workers: they finish the task in hand; queued ones are dropped.
  void stop() { local_.stop(); }

 private:
  class DoorbellWakeup final : public Wakeup {
   public:
    explicit DoorbellWakeup(const net::Doorbell& doorbell) : doorbell_(doorbell) {}
    void notify() override { doorbell_.ring(); }

   private:
    const net::Doorbell& doorbell_;
  };

  DoorbellWakeup wakeup_;
  LocalTaskManager local_;
  std::vector<TaskMessage> tasks_;
  std::vector<ResultMessage> results_;
  std::map<std::uint64_t, std::vector<std::byte>> unacked_;  // result batches by sequence number
  std::uint64_t next_seq_ = 1, last_taken_ = 0;
};

}  // namespace redflow::spits
