// JobTable: the server's jobs as plain state, with no socket, process or
// file: what is queued, what runs, what ended and how. The server's loop
// (server.cpp) does the effects each call asks for (start a driver, stop
// one, answer a waiting client); the journal (journal.hpp) replays its
// records through the same calls, so a restarted server rebuilds the table
// the crashed one had. tests/server_job_table_test.cpp drives it directly.
//
// Policy: first come, first served, one job at a time on all the workers.
// next_to_start() is the oldest queued job when none runs.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "redflow/client.hpp"

namespace redflow::server {

class JobTable {
 public:
  // A job with the next id (ids start at 1 and are never reused).
  std::uint64_t submit(std::vector<std::string> args, std::string cwd);
  // The same, with the id a journal record gave it (replay).
  void submit_as(std::uint64_t id, std::vector<std::string> args, std::string cwd);

  // The job to start now: the oldest queued one, when none runs.
  std::optional<std::uint64_t> next_to_start() const;
  // Its driver started: queued -> running, one more start.
  void started(std::uint64_t id);
  // Its driver ended with `exit_status`: running -> succeeded (0) or failed,
  // or cancelled when cancel() asked for it. `report_json` may be "".
  void ended(std::uint64_t id, int exit_status, std::string message, std::string report_json, std::vector<std::string> workers);

  enum class CancelEffect { kNone, kDequeued, kStopDriver };
  // Queued -> cancelled (kDequeued); running -> stays running until its
  // driver ends, then cancelled (kStopDriver: stop it); finished: kNone.
  // An unknown id is a NotFound error.
  Result<CancelEffect> cancel(std::uint64_t id);

  // After a replay: a job whose driver was running when the last server
  // ended runs again (queued, ahead of the later ones since ids are in
  // submission order); one cancelled while running is cancelled.
  void recover();

  const JobInfo* find(std::uint64_t id) const;
  std::optional<std::uint64_t> running() const { return running_; }
  std::vector<JobInfo> all() const;
  // The workers of the last finished job that named any.
  const std::vector<std::string>& last_workers() const { return last_workers_; }

 private:
  JobInfo& at(std::uint64_t id);
  std::map<std::uint64_t, JobInfo> jobs_;  // by id: submission order
  std::map<std::uint64_t, bool> cancel_asked_;
  std::optional<std::uint64_t> running_;
  std::uint64_t next_id_ = 1;
  std::vector<std::string> last_workers_;
};

// "a job id N" errors: the message every command gives for an unknown id.
Status unknown_job(std::uint64_t id);

}  // namespace redflow::server
