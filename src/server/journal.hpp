// Journal: what `redflow server --journal DIR` writes so that a server killed
// at any moment (kill -9) and started again on the same DIR resumes
// (docs/server.md, "The journal"). DIR/journal is append-only; each record
// is one write(2) followed by fdatasync, so a record is on disk once the
// call returns:
//
//   magic u32 "RSJL", kind u8, length u32 (of the body), body, check u32
//   (XXH3-64 of everything before it, low 32 bits)
//
//   'W' the workers' endpoint (string): a restart listens where workers redial
//   'S' a job submitted: id u64, its words (u32 count, strings), its cwd,
//       the workers it asked for u32, its time limit f64
//   'R' its driver started: id u64
//   'E' its driver ended: id u64, exit status u32, message, report JSON, workers
//   'C' a cancel that took effect: id u64
//
// The rules on open are the SPITS commit log's (src/spits/commit_log.*): the
// records up to the first bad one count; a bad last record is a torn tail
// (the crash came mid-write), cut off and reported; a bad record with more
// bytes after it is damage, and open refuses to resume from it, naming its
// offset. DIR also holds each job's files: job-N.log (its driver's stderr
// and stdout), job-N.report.json, and for a SPITS job job-N.commit.log, the
// commit log the job resumes from when it runs again.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "redflow/status.hpp"
#include "server/job_table.hpp"

namespace redflow::server {

class Journal {
 public:
  // Opens (creating DIR and the journal if absent) and replays every record
  // into `table` (then table.recover()), and the last 'W' into
  // `workers_endpoint` (left as is when there is none).
  static Result<std::unique_ptr<Journal>> open(const std::string& dir, JobTable& table, std::string& workers_endpoint);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  Status endpoint(const std::string& workers_endpoint);
  Status submitted(const JobInfo& job);
  Status started(std::uint64_t id);
  Status ended(const JobInfo& job);
  Status cancelled(std::uint64_t id);

  const std::string& dir() const { return dir_; }
  std::uint64_t torn_bytes() const { return torn_bytes_; }
  std::uint64_t records() const { return records_; }

 private:
  Journal() = default;
  Status append(char kind, const std::vector<std::byte>& body);
  int fd_ = -1;
  std::string dir_, path_;
  std::uint64_t torn_bytes_ = 0;
  std::uint64_t records_ = 0;
};

}  // namespace redflow::server
