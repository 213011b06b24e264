// Committer: takes the results the Task Managers hand back and consolidates
// them. The first result of a task still in the circular queue is committed
// (log "begun", commit_task, log "committed") and the task leaves the queue;
// a later result of the same task is discarded and counted. A failed or lost
// execution is a strike; at `strike_limit` strikes the task is set aside as
// poisoned, logged and named in the report, so it cannot loop forever.
#pragma once

#include <vector>

#include "redflow/spits.hpp"
#include "spits/commit_log.hpp"
#include "spits/job_plugin.hpp"
#include "spits/submitted_queue.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

class Committer {
 public:
  Committer(JobPlugin& job, SubmittedQueue& queue, CommitLog* log, unsigned strike_limit, Report& report);

  // Consolidates `results` from Task Manager `tm` (an index into
  // report.task_managers) and syncs the log once for the batch.
  Status take(std::vector<ResultMessage>& results, std::size_t tm);
  // A strike from outside a result (e.g. a Task Manager found dead later).
  Status strike(std::uint64_t id, const std::string& why);

 private:
  Status commit(SubmittedQueue::Task& task, const std::string& result);

  JobPlugin& job_;
  SubmittedQueue& queue_;
  CommitLog* log_;
  unsigned strike_limit_;
  Report& report_;
};

// "0a1b2c..." of a task's first bytes, for naming it in reports.
std::string hex_preview(const std::string& bytes, std::size_t max_bytes = 16);

}  // namespace redflow::spits
