// JobTable (job_table.hpp): the state changes, each checked.
#include "server/job_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <limits>

namespace redflow::server {

Status unknown_job(std::uint64_t id) { return Status::NotFound("no job " + std::to_string(id) + " on this server (`redflow jobs` lists them)"); }

std::string time_limit_message(const JobInfo& job) {
  return fmt::format("job {} is over its time limit of {:g} s (submit --time-limit): its driver was stopped", job.id, job.time_limit_s);
}

std::uint64_t JobTable::submit(std::vector<std::string> args, std::string cwd, const SubmitOptions& options) {
  const std::uint64_t id = next_id_;
  submit_as(id, std::move(args), std::move(cwd), options);
  return id;
}

void JobTable::submit_as(std::uint64_t id, std::vector<std::string> args, std::string cwd, const SubmitOptions& options) {
  JobInfo& j = jobs_[id];
  j.id = id;
  j.args = std::move(args);
  j.cwd = std::move(cwd);
  j.state = JobState::kQueued;
  j.workers_asked = options.workers;
  j.time_limit_s = options.time_limit_s;
  if (id >= next_id_) next_id_ = id + 1;
}

std::uint32_t JobTable::workers_for(std::uint64_t id) const {
  const JobInfo* j = find(id);
  if (j == nullptr || (!j->args.empty() && j->args[0] == "rem")) return 0;
  return j->workers_asked != 0 ? j->workers_asked : workers_per_job_;
}

double JobTable::ends_by(std::uint64_t id) const {
  const JobInfo* j = find(id);
  auto at = started_at_.find(id);
  if (j == nullptr || j->time_limit_s <= 0 || at == started_at_.end()) return std::numeric_limits<double>::infinity();
  return at->second + j->time_limit_s + stop_grace_s_;
}

std::optional<JobTable::Reservation> JobTable::reserve(std::size_t idle, double now_s, std::size_t returning) const {
  auto oldest = std::find_if(jobs_.begin(), jobs_.end(), [](const auto& e) { return e.second.state == JobState::kQueued; });
  if (oldest == jobs_.end()) return std::nullopt;
  const std::size_t need = workers_for(oldest->first);
  if (need <= idle) return std::nullopt;
  // The running jobs by when they are sure to have ended, with the workers each gives back.
  std::vector<std::pair<double, std::size_t>> ends;
  if (returning > 0) ends.emplace_back(now_s, returning);
  for (std::uint64_t id : running_) {
    // Those already back at the server are among the idle ones.
    const std::size_t held = workers_for(id), back = returned_.count(id) ? returned_.at(id) : 0;
    ends.emplace_back(ends_by(id), held > back ? held - back : 0);
  }
  std::sort(ends.begin(), ends.end());
  std::size_t free = idle;
  for (const auto& [at, workers] : ends) {
    free += workers;
    if (free >= need) return Reservation{oldest->first, at, free - need};
  }
  return std::nullopt;  // more than the server has: it waits for workers to join, and reserves none
}

std::optional<double> JobTable::reservation(std::size_t idle, double now_s, std::size_t returning) const {
  auto r = reserve(idle, now_s, returning);
  return r ? std::optional<double>(r->at_s) : std::nullopt;
}

std::optional<std::uint64_t> JobTable::next_to_start(std::size_t idle, double now_s, std::size_t returning) const {
  const auto r = reserve(idle, now_s, returning);
  for (const auto& [id, j] : jobs_) {
    if (j.state != JobState::kQueued) continue;
    const std::size_t need = workers_for(id);
    if (need > idle) continue;
    if (!r || id == r->oldest) return id;
    // A younger job: it backfills if it ends before the reservation, or leaves the oldest job's workers alone.
    if (j.time_limit_s > 0 && now_s + j.time_limit_s + stop_grace_s_ <= r->at_s) return id;
    if (need <= r->spare) return id;
  }
  return std::nullopt;
}

JobInfo& JobTable::at(std::uint64_t id) {
  auto it = jobs_.find(id);
  assert(it != jobs_.end());
  return it->second;
}

void JobTable::started(std::uint64_t id, std::vector<std::string> workers, double now_s) {
  JobInfo& j = at(id);
  started_at_[id] = now_s;
  j.state = JobState::kRunning;
  ++j.starts;
  j.workers = std::move(workers);
  running_.insert(id);
}

std::uint32_t JobTable::short_of(std::uint64_t id) const {
  const JobInfo* j = find(id);
  if (j == nullptr || j->state != JobState::kRunning) return 0;
  const std::uint32_t asked = workers_for(id);
  return j->workers.size() < asked ? asked - static_cast<std::uint32_t>(j->workers.size()) : 0;
}

std::optional<std::uint64_t> JobTable::next_short() const {
  for (std::uint64_t id : running_)
    if (!cancel_asked_.count(id) && !timed_out_.count(id) && short_of(id) > 0) return id;
  return std::nullopt;
}

std::size_t JobTable::workers_wanted() const {
  std::size_t wanted = 0;
  for (const auto& [id, j] : jobs_)
    if (j.state == JobState::kQueued) wanted += workers_for(id);
  for (std::uint64_t id : running_)
    if (!cancel_asked_.count(id) && !timed_out_.count(id)) wanted += short_of(id);
  return wanted;
}

void JobTable::joined(std::uint64_t id, const std::vector<std::string>& workers) {
  JobInfo& j = at(id);
  j.workers.insert(j.workers.end(), workers.begin(), workers.end());
}

void JobTable::untaken(std::uint64_t id, const std::string& name) {
  if (!running_.count(id)) return;
  auto& workers = at(id).workers;
  if (auto it = std::find(workers.begin(), workers.end(), name); it != workers.end()) workers.erase(it);
}

void JobTable::returned(std::uint64_t id) {
  if (running_.count(id)) ++returned_[id];
}

void JobTable::ended(std::uint64_t id, int exit_status, std::string message, std::string report_json, std::vector<std::string> workers) {
  JobInfo& j = at(id);
  j.exit_status = exit_status;
  j.report_json = std::move(report_json);
  if (cancel_asked_.count(id)) {
    j.state = JobState::kCancelled;
    j.message = "cancelled while running";
  } else if (timed_out_.count(id)) {
    j.state = JobState::kFailed;
    j.exit_status = kTimeLimitExitStatus;
    j.message = time_limit_message(j);
  } else {
    j.state = exit_status == 0 ? JobState::kSucceeded : JobState::kFailed;
    j.message = std::move(message);
  }
  if (!workers.empty()) j.workers = std::move(workers);
  if (!j.workers.empty()) last_workers_ = j.workers;
  running_.erase(id);
  started_at_.erase(id);
  returned_.erase(id);
  timed_out_.erase(id);
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
      cancel_asked_.insert(id);
      return CancelEffect::kStopDriver;
    default:
      return CancelEffect::kNone;
  }
}

bool JobTable::timed_out(std::uint64_t id) {
  if (!running_.count(id) || cancel_asked_.count(id)) return false;
  return timed_out_.insert(id).second;
}

void JobTable::recover() {
  for (std::uint64_t id : running_) {
    JobInfo& j = at(id);
    if (cancel_asked_.count(id)) {
      j.state = JobState::kCancelled;
      j.message = "cancelled while running";
    } else {
      j.state = JobState::kQueued;
    }
  }
  running_.clear();
  started_at_.clear();
  returned_.clear();
  timed_out_.clear();
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
