// JobTable (job_table.hpp): the state changes, each checked.
#include "server/job_table.hpp"

#include <cassert>

namespace redflow::server {

Status unknown_job(std::uint64_t id) { return Status::NotFound("no job " + std::to_string(id) + " on this server (`redflow jobs` lists them)"); }

std::uint64_t JobTable::submit(std::vector<std::string> args, std::string cwd) {
  const std::uint64_t id = next_id_;
  submit_as(id, std::move(args), std::move(cwd));
  return id;
}

void JobTable::submit_as(std::uint64_t id, std::vector<std::string> args, std::string cwd) {
  JobInfo& j = jobs_[id];
  j.id = id;
  j.args = std::move(args);
  j.cwd = std::move(cwd);
  j.state = JobState::kQueued;
  if (id >= next_id_) next_id_ = id + 1;
}

std::optional<std::uint64_t> JobTable::next_to_start() const {
  if (running_) return std::nullopt;
  for (const auto& [id, j] : jobs_)
    if (j.state == JobState::kQueued) return id;
  return std::nullopt;
}

JobInfo& JobTable::at(std::uint64_t id) {
  auto it = jobs_.find(id);
  assert(it != jobs_.end());
  return it->second;
}

void JobTable::started(std::uint64_t id) {
  JobInfo& j = at(id);
  j.state = JobState::kRunning;
  ++j.starts;
  running_ = id;
}

void JobTable::ended(std::uint64_t id, int exit_status, std::string message, std::string report_json, std::vector<std::string> workers) {
  JobInfo& j = at(id);
  j.exit_status = exit_status;
  j.report_json = std::move(report_json);
  if (cancel_asked_.count(id)) {
    j.state = JobState::kCancelled;
    j.message = "cancelled while running";
  } else {
    j.state = exit_status == 0 ? JobState::kSucceeded : JobState::kFailed;
    j.message = std::move(message);
  }
  if (!workers.empty()) last_workers_ = workers;
  j.workers = std::move(workers);
  if (running_ == id) running_.reset();
}

Result<JobTable::CancelEffect> JobTable::cancel(std::uint64_t id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return unknown_job(id);
  JobInfo& j = it->second;
  switch (j.state) {
    case JobState::kQueued:
      j.state = JobState::kCancelled;
      j.message = "cancelled before it started";
      return CancelEffect::kDequeued;
    case JobState::kRunning:
      cancel_asked_[id] = true;
      return CancelEffect::kStopDriver;
    default:
      return CancelEffect::kNone;
  }
}

void JobTable::recover() {
  if (!running_) return;
  JobInfo& j = at(*running_);
  if (cancel_asked_.count(*running_)) {
    j.state = JobState::kCancelled;
    j.message = "cancelled while running";
  } else {
    j.state = JobState::kQueued;
  }
  running_.reset();
}

const JobInfo* JobTable::find(std::uint64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::vector<JobInfo> JobTable::all() const {
  std::vector<JobInfo> out;
  out.reserve(jobs_.size());
  for (const auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

}  // namespace redflow::server
