// JobTable: the server's jobs as plain state, with no socket, process or
// file: what is queued, what runs, what ended and how. The server's loop
// (server.cpp) does the effects each call asks for (start a driver, stop
// one, answer a waiting client); the journal (journal.hpp) replays its
// records through the same calls, so a restarted server rebuilds the table
// the crashed one had. tests/server_job_table_test.cpp drives it directly.
//
// Policy: first come, first served, with backfilling. Each job asks for a
// number of workers (SubmitOptions::workers; 0 is the server's
// --min-workers; a REM job takes none). next_to_start(idle) is the oldest
// queued job that fits on the idle workers: the oldest one when it fits,
// else a younger, smaller one that does (it backfills) while the older
// waits for workers to come back. Several jobs run at once, on disjoint
// workers. A running job that was sent fewer workers than it asked for
// (one was gone when its REDIRECT went out) comes first for the next idle
// ones: next_short().
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "redflow/client.hpp"

namespace redflow::server {

class JobTable {
 public:
  // `workers_per_job`: what a job that asks for 0 workers runs on.
  explicit JobTable(std::uint32_t workers_per_job = 1) : workers_per_job_(workers_per_job) {}

  // A job with the next id (ids start at 1 and are never reused).
  std::uint64_t submit(std::vector<std::string> args, std::string cwd, const SubmitOptions& options = {});
  // The same, with the id a journal record gave it (replay).
  void submit_as(std::uint64_t id, std::vector<std::string> args, std::string cwd, const SubmitOptions& options = {});

  // The workers job `id` runs on: what it asked for, or the default; 0 for a REM job.
  std::uint32_t workers_for(std::uint64_t id) const;
  // The job to start now with `idle` workers free: the oldest queued one that fits.
  std::optional<std::uint64_t> next_to_start(std::size_t idle) const;
  // Its driver started on `workers` ("NAME on HOST"): queued -> running, one more start.
  void started(std::uint64_t id, std::vector<std::string> workers);
  // The oldest running job sent fewer workers than it asked for (a worker
  // that could not be reached when it started), which is not being stopped.
  std::optional<std::uint64_t> next_short() const;
  // How many more workers running job `id` asked for than it was sent.
  std::uint32_t short_of(std::uint64_t id) const;
  // More `workers` were sent to running job `id`.
  void joined(std::uint64_t id, const std::vector<std::string>& workers);
  // Worker `name` sent to running job `id` did not go: the job is short of one.
  void untaken(std::uint64_t id, const std::string& name);
  // Its driver ended with `exit_status`: running -> succeeded (0) or failed,
  // or cancelled when cancel() asked for it, or failed with exit status 124
  // and a message naming its time limit when timed_out() stopped it.
  // `report_json` may be ""; `workers` empty keeps the ones it started on.
  void ended(std::uint64_t id, int exit_status, std::string message, std::string report_json, std::vector<std::string> workers);

  enum class CancelEffect { kNone, kDequeued, kStopDriver };
  // Queued -> cancelled (kDequeued); running -> stays running until its
  // driver ends, then cancelled (kStopDriver: stop it); finished: kNone.
  // An unknown id is a NotFound error.
  Result<CancelEffect> cancel(std::uint64_t id);
  // A running job passed its time limit: its driver is to be stopped, and it
  // ends failed, saying so. False when it is not running or already stopping.
  bool timed_out(std::uint64_t id);

  // After a replay: the jobs whose drivers were running when the last server
  // ended run again (queued, ahead of the later ones since ids are in
  // submission order); one cancelled while running is cancelled.
  void recover();

  const JobInfo* find(std::uint64_t id) const;
  const std::set<std::uint64_t>& running() const { return running_; }
  std::vector<JobInfo> all() const;
  // The workers of the last finished job that named any.
  const std::vector<std::string>& last_workers() const { return last_workers_; }

 private:
  JobInfo& at(std::uint64_t id);
  std::uint32_t workers_per_job_;
  std::map<std::uint64_t, JobInfo> jobs_;  // by id: submission order
  std::set<std::uint64_t> cancel_asked_, timed_out_;
  std::set<std::uint64_t> running_;
  std::uint64_t next_id_ = 1;
  std::vector<std::string> last_workers_;
};

// "a job id N" errors: the message every command gives for an unknown id.
Status unknown_job(std::uint64_t id);
// "job N is over its time limit of S s": the message of a job timed_out() stopped.
std::string time_limit_message(const JobInfo& job);
// The exit status of a job stopped at its time limit (timeout(1)'s).
inline constexpr int kTimeLimitExitStatus = 124;

}  // namespace redflow::server
