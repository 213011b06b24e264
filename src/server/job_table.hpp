// JobTable: the server's jobs as plain state, with no socket, process or
// file: what is queued, what runs, what ended and how. The server's loop
// (server.cpp) does the effects each call asks for (start a driver, stop
// one, answer a waiting client); the journal (journal.hpp) replays its
// records through the same calls, so a restarted server rebuilds the table
// the crashed one had. tests/server_job_table_test.cpp drives it directly.
//
// Policy: first come, first served, with backfilling that never delays the
// oldest queued job (EASY backfilling, as batch schedulers do it). Each job
// asks for a number of workers (SubmitOptions::workers; 0 is the server's
// --min-workers; a REM job takes none). next_to_start(idle, now) starts the
// oldest queued job when it fits on the idle workers. When it does not, it
// has a reservation: the time its workers are sure to be free, from the
// running jobs' time limits (a job without one may run for ever). A younger
// job that fits on the idle workers backfills only if it cannot delay that
// reservation: its own time limit ends it before then, or it takes only
// workers the oldest job will not need at its reservation. An oldest job
// that asks for more workers than the server has (idle and running) has no
// reservation, and younger ones backfill freely until workers join. Several
// jobs run at once, on disjoint workers. A running job that was sent fewer
// workers than it asked for (one was gone when its REDIRECT went out) comes
// first for the next idle ones: next_short().
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
  // `stop_grace_s`: how long a driver stopped at its time limit may take to
  // end (ServerOptions::stop_grace_s), added to every time limit.
  explicit JobTable(std::uint32_t workers_per_job = 1, double stop_grace_s = 0)
      : workers_per_job_(workers_per_job), stop_grace_s_(stop_grace_s) {}

  // A job with the next id (ids start at 1 and are never reused).
  std::uint64_t submit(std::vector<std::string> args, std::string cwd, const SubmitOptions& options = {});
  // The same, with the id a journal record gave it (replay).
  void submit_as(std::uint64_t id, std::vector<std::string> args, std::string cwd, const SubmitOptions& options = {});

  // The workers job `id` runs on: what it asked for, or the default; 0 for a REM job.
  std::uint32_t workers_for(std::uint64_t id) const;
  // The job to start now, `now_s` seconds into the server's life, with
  // `idle` workers free: the oldest queued one if it fits, else a younger one
  // that fits and cannot delay the oldest's reservation (see Policy above).
  // `returning`: workers of jobs that have ended, not back at the server yet
  // (they will be idle within seconds): they count for the reservation, not
  // as idle.
  std::optional<std::uint64_t> next_to_start(std::size_t idle, double now_s = 0, std::size_t returning = 0) const;
  // When the oldest queued job is sure to have its workers, in the same
  // seconds (infinity: not while a job without a time limit holds some;
  // nullopt: it fits now, there is no queued job, or it has no reservation).
  std::optional<double> reservation(std::size_t idle, double now_s = 0, std::size_t returning = 0) const;
  // Its driver started on `workers` ("NAME on HOST") at `now_s`: queued -> running, one more start.
  void started(std::uint64_t id, std::vector<std::string> workers, double now_s = 0);
  // The oldest running job sent fewer workers than it asked for (a worker
  // that could not be reached when it started), which is not being stopped.
  std::optional<std::uint64_t> next_short() const;
  // How many more workers running job `id` asked for than it was sent.
  std::uint32_t short_of(std::uint64_t id) const;
  // The workers the jobs wait for: what every queued job asks for, and what
  // running ones are short of. What the server asks a batch system for
  // (allocator.hpp) is this less its idle and returning workers.
  std::size_t workers_wanted() const;
  // More `workers` were sent to running job `id`.
  void joined(std::uint64_t id, const std::vector<std::string>& workers);
  // Worker `name` sent to running job `id` did not go: the job is short of one.
  void untaken(std::uint64_t id, const std::string& name);
  // A worker that served running job `id` is idle again (its driver is
  // ending): the job no longer holds it, when reservations count workers.
  void returned(std::uint64_t id);
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
  // The oldest queued job's reservation and the workers it leaves spare then.
  struct Reservation {
    std::uint64_t oldest = 0;
    double at_s = 0;
    std::size_t spare = 0;
  };
  std::optional<Reservation> reserve(std::size_t idle, double now_s, std::size_t returning) const;
  // When running job `id` is sure to have ended (infinity without a time limit).
  double ends_by(std::uint64_t id) const;

  std::uint32_t workers_per_job_;
  double stop_grace_s_;
  std::map<std::uint64_t, JobInfo> jobs_;  // by id: submission order
  std::map<std::uint64_t, double> started_at_;  // running jobs: when their drivers started
  std::map<std::uint64_t, std::size_t> returned_;  // running jobs: workers already back at the server
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
