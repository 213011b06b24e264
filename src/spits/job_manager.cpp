// The Job Manager's loop (see job_manager.hpp).
#include "spits/job_manager.hpp"

#include <chrono>

namespace redflow::spits {

void JobWakeup::notify() {
  pending_.store(true);
  if (waiting_.load()) {
    std::lock_guard lock(mutex_);
    cv_.notify_one();
  }
}

void JobWakeup::wait(int ms) {
  std::unique_lock lock(mutex_);
  waiting_.store(true);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return pending_.load(); });
  waiting_.store(false);
  pending_.store(false);
}

JobManager::JobManager(JobPlugin& job, std::vector<std::unique_ptr<TaskManager>>& managers, JobWakeup& wakeup, CommitLog* log,
                       const Options& options, Report& report)
    : job_(job), managers_(managers), wakeup_(wakeup), log_(log), options_(options), report_(report),
      committer_(job, queue_, log, options.strikes, report) {}

Result<bool> JobManager::generate_one(SubmittedQueue::Task*& out) {
  for (;;) {
    std::string bytes;
    auto more = job_.generate(bytes);
    if (!more.ok()) return Status::ActorFailed(more.status().message() + " (generating task " + std::to_string(next_id_) + ")");
    if (!*more) return false;
    std::uint64_t id = next_id_++;
    std::uint64_t hash = log_ ? task_hash(bytes.data(), bytes.size()) : 0;  // only the log needs it
    ++report_.generated;
    if (log_) {
      auto it = log_->entries().find(id);
      if (it != log_->entries().end()) {
        if (it->second.task_hash != hash)
          return Status::InvalidArgument("SPITS job '" + job_.name() + "': task " + std::to_string(id) +
                                         " differs from the one in the commit log: generate_task must be deterministic to resume from a log");
        if (it->second.state == CommitLog::State::kCommitted) {
          ++report_.from_log;
          continue;
        }
        if (it->second.state == CommitLog::State::kPoisoned) {
          ++report_.from_log;
          report_.poisoned.push_back(PoisonedTask{id, options_.strikes, "set aside in an earlier run (commit log)", hex_preview(bytes)});
          continue;
        }
        // Begun, never finished: the Job Manager died inside commit_task.
        ++report_.in_doubt;
        if (job_.has_was_committed() && job_.was_committed(bytes)) {
          REDFLOW_RETURN_IF_ERROR(log_->committed(id, hash));
          ++report_.from_log;
          continue;
        }
        ++report_.in_doubt_recommitted;
      }
    }
    out = &queue_.add(id, std::move(bytes), hash);
    return true;
  }
}

Result<SubmittedQueue::Task*> JobManager::next_task(std::uint32_t tm) {
  if (!generation_over_) {
    SubmittedQueue::Task* t = nullptr;
    auto more = generate_one(t);
    if (!more.ok()) return more.status();
    if (*more) return t;
    generation_over_ = true;
  }
  SubmittedQueue::Task* t = queue_.next_resubmission(tm);
  if (t) ++report_.resubmissions;
  return t;
}

void JobManager::trace_push(std::uint64_t id, std::uint32_t tm) {
  if (report_.trace.size() + stay_start_.size() >= Report::kMaxTracedTasks) {
    report_.trace_truncated = true;
    return;
  }
  stay_start_[id * 65536 + tm] = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

void JobManager::trace_results(const std::vector<ResultMessage>& results, std::uint32_t tm) {
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
  for (const ResultMessage& r : results) {
    auto it = stay_start_.find(r.id * 65536 + tm);
    if (it == stay_start_.end()) continue;  // not traced (truncated), or a late result after a loss
    TracedTask t{r.id, tm, it->second, now, TracedTask::Outcome::kCommitted};
    stay_start_.erase(it);
    switch (r.outcome) {
      case ResultMessage::Outcome::kOk: t.outcome = queue_.find(r.id) ? TracedTask::Outcome::kCommitted : TracedTask::Outcome::kDuplicate; break;
      case ResultMessage::Outcome::kFailed: t.outcome = TracedTask::Outcome::kFailed; break;
      case ResultMessage::Outcome::kLost: t.outcome = TracedTask::Outcome::kLost; break;
      case ResultMessage::Outcome::kReturned: t.outcome = TracedTask::Outcome::kReturned; break;
    }
    report_.trace.push_back(t);
  }
}

Status JobManager::pull_and_commit(bool& progress) {
  for (std::size_t i = 0; i < managers_.size(); ++i) {
    if (managers_[i]->pull(results_) == 0) continue;
    progress = true;
    if (options_.trace) trace_results(results_, static_cast<std::uint32_t>(i));
    REDFLOW_RETURN_IF_ERROR(committer_.take(results_, i));
  }
  return Status::Ok();
}

void JobManager::count_task_managers() {
  for (std::size_t i = 0; i < managers_.size() && i < report_.task_managers.size(); ++i) {
    report_.task_managers[i].task_s = managers_[i]->task_s();
    report_.task_managers[i].lost = managers_[i]->losses();
  }
}

Status JobManager::run_phase() {
  generation_over_ = false;
  ++report_.phases;
  for (;;) {
    bool progress = false;
    if (discover_) REDFLOW_RETURN_IF_ERROR(discover_());
    REDFLOW_RETURN_IF_ERROR(pull_and_commit(progress));
    if (progress && options_.on_progress) {
      count_task_managers();
      options_.on_progress(report_);
    }
    if (generation_over_ && queue_.empty()) return Status::Ok();
    // Round-robin over the Task Managers, each filled up to its room,
    // starting one further along each time so none is always served first.
    for (std::size_t k = 0; k < managers_.size(); ++k) {
      std::size_t i = (first_tm_ + k) % managers_.size();
      TaskManager& tm = *managers_[i];
      for (std::size_t room = tm.room(); room > 0; --room) {
        auto t = next_task(static_cast<std::uint32_t>(i));
        if (!t.ok()) return t.status();
        if (!*t) break;
        ++(*t)->submissions;
        (*t)->holders.push_back(static_cast<std::uint32_t>(i));
        if (options_.trace) trace_push((*t)->id, static_cast<std::uint32_t>(i));
        batch_.push_back(TaskMessage{(*t)->id, (*t)->bytes});
      }
      if (!batch_.empty()) {
        report_.task_managers[i].pushed += batch_.size();
        tm.push(batch_);
        progress = true;
      }
      if (generation_over_ && queue_.empty()) break;
    }
    if (!managers_.empty()) first_tm_ = (first_tm_ + 1) % managers_.size();
    if (!progress) wakeup_.wait(100);
  }
}

}  // namespace redflow::spits
