// JobManager: runs the phases of a job. It generates tasks on demand, appends
// them to the circular queue and pushes them round-robin into each Task
// Manager's queue until it is full; once generate_task says DONE it re-submits
// what is still in the queue as the queue wraps. Between pushes it hands the
// results the Task Managers have ready to the Committer. One thread plays both
// roles, embedded and over the network (so a slow commit_task delays pushes).
//
// With a commit log, generation replays from the first task and skips what
// the log says was committed or set aside, after checking each task's hash.
#pragma once

#include <condition_variable>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <vector>

#include "spits/commit_log.hpp"
#include "spits/committer.hpp"
#include "spits/job_plugin.hpp"
#include "spits/submitted_queue.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

// The Job Manager's sleep between events; Task Managers wake it.
class JobWakeup final : public Wakeup {
 public:
  void notify() override;
  // Sleeps until notify() or `ms` milliseconds pass.
  void wait(int ms);

 private:
  std::atomic<bool> pending_{false}, waiting_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

class JobManager {
 public:
  JobManager(JobPlugin& job, std::vector<std::unique_ptr<TaskManager>>& managers, JobWakeup& wakeup, CommitLog* log,
             const Options& options, Report& report);

  // One phase: until generate_task says DONE and the queue is empty.
  Status run_phase();

  // Called before each round: adds Task Managers that joined to the list
  // (and to the report), or fails the job (no Task Manager for too long).
  void set_discover(std::function<Status()> discover) { discover_ = std::move(discover); }

  // Each Task Manager's time per task and losses so far, into the report
  // (before each Options::on_progress, and once at the job's end).
  void count_task_managers();

 private:
  // The next task to push: a new one while generation lasts, else a re-submission.
  Result<SubmittedQueue::Task*> next_task(std::uint32_t tm);
  Result<bool> generate_one(SubmittedQueue::Task*& out);
  Status pull_and_commit(bool& progress);

  JobPlugin& job_;
  std::vector<std::unique_ptr<TaskManager>>& managers_;
  JobWakeup& wakeup_;
  CommitLog* log_;
  const Options& options_;
  Report& report_;
  SubmittedQueue queue_;
  Committer committer_;
  std::uint64_t next_id_ = 0;
  bool generation_over_ = false;
  std::size_t first_tm_ = 0;
  std::vector<TaskMessage> batch_;
  std::vector<ResultMessage> results_;
  std::function<Status()> discover_;
  // --trace: when each (task, Task Manager) stay began.
  void trace_push(std::uint64_t id, std::uint32_t tm);
  void trace_results(const std::vector<ResultMessage>& results, std::uint32_t tm);
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  std::unordered_map<std::uint64_t, double> stay_start_;  // key: id * 65536 + tm
};

}  // namespace redflow::spits
