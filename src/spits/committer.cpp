// The Committer's rules (see committer.hpp).
#include "spits/committer.hpp"

#include <fmt/format.h>

namespace redflow::spits {

std::string hex_preview(const std::string& bytes, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < max_bytes; ++i) out += fmt::format("{:02x}", static_cast<unsigned char>(bytes[i]));
  if (bytes.size() > max_bytes) out += "...";
  return out;
}

Committer::Committer(JobPlugin& job, SubmittedQueue& queue, CommitLog* log, unsigned strike_limit, Report& report)
    : job_(job), queue_(queue), log_(log), strike_limit_(strike_limit), report_(report) {}

Status Committer::commit(SubmittedQueue::Task& task, const std::string& result) {
  if (log_) REDFLOW_RETURN_IF_ERROR(log_->begin(task.id, task.hash));
  REDFLOW_RETURN_IF_ERROR(job_.commit(task.bytes, result));
  if (log_) REDFLOW_RETURN_IF_ERROR(log_->committed(task.id, task.hash));
  ++report_.committed;
  queue_.remove(task.id);
  return Status::Ok();
}

Status Committer::strike(std::uint64_t id, const std::string& why) {
  SubmittedQueue::Task* task = queue_.find(id);
  if (!task) return Status::Ok();  // committed or set aside meanwhile
  ++report_.strikes;
  ++task->strikes;
  task->last_error = why;
  if (task->strikes < strike_limit_) return Status::Ok();
  if (log_) REDFLOW_RETURN_IF_ERROR(log_->poisoned(task->id, task->hash));
  report_.poisoned.push_back(PoisonedTask{task->id, task->strikes, why, hex_preview(task->bytes)});
  queue_.remove(id);
  return Status::Ok();
}

Status Committer::take(std::vector<ResultMessage>& results, std::size_t tm) {
  TaskManagerCounts& counts = report_.task_managers[tm];
  for (ResultMessage& r : results) {
    ++counts.results;
    SubmittedQueue::Task* task = queue_.find(r.id);
    if (task) task->release(static_cast<std::uint32_t>(tm));
    if (r.outcome == ResultMessage::Outcome::kReturned) continue;  // not a verdict on the task: the queue re-submits it
    if (r.outcome != ResultMessage::Outcome::kOk) {
      ++counts.failed;
      REDFLOW_RETURN_IF_ERROR(strike(r.id, r.outcome == ResultMessage::Outcome::kLost ? "lost with its Task Manager: " + r.bytes : r.bytes));
      continue;
    }
    if (!task) {  // committed already (or set aside): the paper's "later results are discarded"
      ++report_.duplicates;
      continue;
    }
    REDFLOW_RETURN_IF_ERROR(commit(*task, r.bytes));
    ++counts.committed;
  }
  results.clear();
  if (log_) REDFLOW_RETURN_IF_ERROR(log_->sync());
  return Status::Ok();
}

}  // namespace redflow::spits
