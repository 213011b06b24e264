// LocalTaskManager: the embedded Task Manager, W Worker threads in this
// process running the job's execute_task. Its queue holds what the Job
// Manager pushed; results wait in a second queue until the Committer pulls
// them, as in PY-PITS's Task Manager (section IV.C), minus the network.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "spits/job_plugin.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

class LocalTaskManager final : public TaskManager {
 public:
  // It accepts `workers` + `prefetch` queued and running tasks. With
  // `adaptive`, the prefetch margin grows to cover about kQueueMs of work at
  // the measured task time (up to kMaxPrefetch), so trivial tasks do not
  // leave Workers waiting on the Job Manager while long tasks are not hoarded.
  LocalTaskManager(std::string name, const JobPlugin& job, unsigned workers, unsigned prefetch, bool adaptive, Wakeup& wakeup);
  static constexpr std::uint64_t kQueueMs = 10;
  static constexpr std::size_t kMaxPrefetch = 1024;
  // A Worker takes at most about this much work from the queue at once.
  static constexpr std::uint64_t kBatchUs = 1000;
  ~LocalTaskManager() override;

  const std::string& name() const override { return name_; }
  unsigned workers() const override { return workers_; }
  std::size_t room() const override;
  // Queued and running tasks it takes now: its Workers plus the prefetch margin.
  std::size_t capacity() const;
  void push(std::vector<TaskMessage>& tasks) override;
  std::size_t pull(std::vector<ResultMessage>& out) override;
  double task_s() const override { return static_cast<double>(mean_ns_per_task()) * 1e-9; }
  // task_s() in nanoseconds, as a result batch carries it: its Workers' time
  // inside execute_task over the tasks they executed, since the start.
  std::uint64_t mean_ns_per_task() const;
  void stop() override;

 private:
  void work();

  std::string name_;
  const JobPlugin& job_;
  unsigned workers_;
  unsigned prefetch_;
  bool adaptive_;
  std::atomic<std::uint64_t> ns_per_task_{0};  // moving mean of execute_task's time; 0: none yet
  std::atomic<std::uint64_t> busy_ns_{0}, executed_{0};  // execute_task's time and calls, summed over the Workers
  Wakeup& wakeup_;
  std::atomic<std::size_t> held_{0};  // queued + running
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TaskMessage> queue_;
  std::vector<ResultMessage> results_;
  std::atomic<bool> stopping_{false};  // written under mutex_, read between tasks too
  std::vector<std::thread> threads_;
};

}  // namespace redflow::spits
