// CommitLog: the Job Manager's append-only record of what it committed, so a
// Job Manager killed and restarted with the same log resumes without
// committing anything twice (docs/spits.md, "The commit log").
//
// The file is a sequence of 32-byte records, each with its own checksum:
//   header    (once, first): the job's hash, so a log is never reused for another job
//   begin     task id + task hash, written just before commit_task
//   committed task id + task hash, written just after commit_task returns
//   poisoned  task id + task hash, when a task is set aside
// The file is mapped (MAP_SHARED) and each record copied into it: once
// copied, a record is in the file's pages, so it survives SIGKILL of the
// process with no system call per record. A begin record is appended before
// commit_task runs and a committed record after it returns, so a process
// killed inside commit_task leaves its task begun: in doubt on the next open
// (the job's was_committed decides, docs/spits.md). sync() (msync and
// fdatasync) after each batch of commits makes the records survive a power
// loss too. The file grows in steps of at least 1 MiB, zero-filled; closing
// cuts it to its records, and zeros after the last record on open (a killed
// process's room to grow) are dropped. On open, a torn tail (a short or bad
// record, what a crash in the middle of a write leaves) is reported, cut off
// and ignored.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "redflow/status.hpp"

namespace redflow::spits {

class CommitLog {
 public:
  enum class State : std::uint8_t { kBegun, kCommitted, kPoisoned };
  struct Entry {
    State state;
    std::uint64_t task_hash;
  };

  // Opens (creating if absent) the log at `path` for job `job_hash`, reads
  // what it holds and positions for appending. A log of another job, or
  // records in the middle that fail their checksum, are named errors.
  static Result<std::unique_ptr<CommitLog>> open(const std::string& path, std::uint64_t job_hash);
  ~CommitLog();
  CommitLog(const CommitLog&) = delete;
  CommitLog& operator=(const CommitLog&) = delete;

  // What the log said about each task when it was opened (appends since are
  // not in it: the Job Manager asks only about tasks of earlier runs).
  const std::unordered_map<std::uint64_t, Entry>& entries() const { return entries_; }
  std::uint64_t torn_bytes() const { return torn_bytes_; }

  Status begin(std::uint64_t id, std::uint64_t task_hash);
  Status committed(std::uint64_t id, std::uint64_t task_hash);
  Status poisoned(std::uint64_t id, std::uint64_t task_hash);
  // msync and fdatasync, if anything was appended since the last one.
  Status sync();

  static constexpr std::size_t kRecordBytes = 32;

 private:
  CommitLog() = default;
  Status append(std::uint8_t kind, std::uint64_t id, std::uint64_t hash);
  // Maps the file with room for at least 1 MiB more of records.
  Status grow();
  int fd_ = -1;
  char* map_ = nullptr;     // the file, mapped
  std::size_t mapped_ = 0;  // bytes mapped (the file's size while open)
  std::size_t end_ = 0;     // bytes of records
  bool dirty_ = false;  // appended since the last sync
  std::string path_;
  std::uint64_t torn_bytes_ = 0;
  std::unordered_map<std::uint64_t, Entry> entries_;
};

// The hash the log keeps of a task's bytes (XXH3-64).
std::uint64_t task_hash(const void* data, std::size_t size);

}  // namespace redflow::spits
