// The commit log's record format, recovery and appends (see commit_log.hpp).
#include "spits/commit_log.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace redflow::spits {

namespace {

constexpr std::uint32_t kMagic = 0x4c535352;  // "RSSL": redflow SPITS log
constexpr std::uint8_t kHeader = 'H', kBegin = 'B', kCommit = 'C', kPoison = 'P';

// magic(4) kind(1) pad(3) id(8) hash(8) check(4) pad(4); little-endian, as the host.
struct Record {
  std::uint32_t magic;
  std::uint8_t kind;
  std::uint8_t pad[3];
  std::uint64_t id;
  std::uint64_t hash;
  std::uint32_t check;
  std::uint32_t pad2;
};
static_assert(sizeof(Record) == CommitLog::kRecordBytes);

std::uint32_t checksum(const Record& r) { return static_cast<std::uint32_t>(XXH3_64bits(&r, offsetof(Record, check))); }

bool valid(const Record& r) {
  return r.magic == kMagic && r.check == checksum(r) &&
         (r.kind == kHeader || r.kind == kBegin || r.kind == kCommit || r.kind == kPoison);
}

std::string errno_text() { return std::strerror(errno); }

// The mapping grows by this much at least (doubling up to 64 MiB at a time).
constexpr std::size_t kGrowBytes = std::size_t{1} << 20;

}  // namespace

std::uint64_t task_hash(const void* data, std::size_t size) { return XXH3_64bits(data, size); }

Result<std::unique_ptr<CommitLog>> CommitLog::open(const std::string& path, std::uint64_t job_hash) {
  std::unique_ptr<CommitLog> log(new CommitLog());
  log->path_ = path;
  log->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (log->fd_ < 0) return Status::IOError("commit log '" + path + "': cannot open: " + errno_text());
  struct stat st;
  if (fstat(log->fd_, &st) != 0) return Status::IOError("commit log '" + path + "': " + errno_text());
  std::vector<Record> records(static_cast<std::size_t>(st.st_size) / sizeof(Record));
  std::size_t want = records.size() * sizeof(Record);
  if (want && pread(log->fd_, records.data(), want, 0) != static_cast<ssize_t>(want))
    return Status::IOError("commit log '" + path + "': cannot read: " + errno_text());
  // Records up to the first bad one are good; a bad one followed by good ones
  // is damage, not a torn tail, and resuming past it could commit twice.
  std::size_t good = 0;
  while (good < records.size() && valid(records[good])) ++good;
  // Zeros after the last record are the mapping's room to grow, left by a
  // process that ended without closing the log (killed): not a torn tail.
  std::vector<char> rest(static_cast<std::size_t>(st.st_size) - good * sizeof(Record));
  if (!rest.empty() && pread(log->fd_, rest.data(), rest.size(), static_cast<off_t>(good * sizeof(Record))) != static_cast<ssize_t>(rest.size()))
    return Status::IOError("commit log '" + path + "': cannot read: " + errno_text());
  const bool padding = std::all_of(rest.begin(), rest.end(), [](char c) { return c == 0; });
  for (std::size_t i = good + 1; i < records.size(); ++i)
    if (valid(records[i]))
      return Status::IOError("commit log '" + path + "': record " + std::to_string(good) + " (byte " +
                             std::to_string(good * sizeof(Record)) + ") is damaged but later records are intact; refusing to resume from it");
  if (good == 0 && records.size() > 1)
    return Status::IOError("commit log '" + path + "' is not a redflow SPITS commit log");
  log->torn_bytes_ = padding ? 0 : rest.size();
  if (good > 0) {
    if (records[0].kind != kHeader) return Status::IOError("commit log '" + path + "' does not start with a header record");
    if (records[0].id != job_hash)
      return Status::InvalidArgument("commit log '" + path + "' belongs to another job (its job args or plugin differ); use a new --log");
  }
  for (std::size_t i = 1; i < good; ++i) {
    const Record& r = records[i];
    State s = r.kind == kBegin ? State::kBegun : r.kind == kCommit ? State::kCommitted : State::kPoisoned;
    log->entries_[r.id] = Entry{s, r.hash};
  }
  if (!rest.empty() && ftruncate(log->fd_, static_cast<off_t>(good * sizeof(Record))) != 0)
    return Status::IOError("commit log '" + path + "': cannot cut its torn tail: " + errno_text());
  log->end_ = good * sizeof(Record);
  REDFLOW_RETURN_IF_ERROR(log->grow());
  if (good == 0) {
    REDFLOW_RETURN_IF_ERROR(log->append(kHeader, job_hash, 0));
    REDFLOW_RETURN_IF_ERROR(log->sync());
  }
  return log;
}

Status CommitLog::grow() {
  const std::size_t room = std::max(kGrowBytes, std::min(mapped_, std::size_t{64} << 20));
  const std::size_t size = (end_ + room) / kGrowBytes * kGrowBytes + kGrowBytes;
  if (map_ != nullptr) ::munmap(map_, mapped_);
  map_ = nullptr;
  mapped_ = 0;
  if (ftruncate(fd_, static_cast<off_t>(size)) != 0) return Status::IOError("commit log '" + path_ + "': cannot grow: " + errno_text());
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (m == MAP_FAILED) return Status::IOError("commit log '" + path_ + "': cannot map: " + errno_text());
  map_ = static_cast<char*>(m);
  mapped_ = size;
  return Status::Ok();
}

CommitLog::~CommitLog() {
  if (fd_ < 0) return;
  // Not mapped: open() refused the file, which stays as it was.
  if (map_ != nullptr) {
    (void)::msync(map_, end_, MS_SYNC);
    ::munmap(map_, mapped_);
    (void)!ftruncate(fd_, static_cast<off_t>(end_));  // the room to grow goes
    (void)fdatasync(fd_);
  }
  ::close(fd_);
}

Status CommitLog::append(std::uint8_t kind, std::uint64_t id, std::uint64_t hash) {
  Record r{};
  r.magic = kMagic;
  r.kind = kind;
  r.id = id;
  r.hash = hash;
  r.check = checksum(r);
  if (end_ + sizeof r > mapped_) REDFLOW_RETURN_IF_ERROR(grow());
  // In the file's pages once copied: a process killed after this line leaves the record in the file.
  std::memcpy(map_ + end_, &r, sizeof r);
  end_ += sizeof r;
  dirty_ = true;
  return Status::Ok();
}

Status CommitLog::begin(std::uint64_t id, std::uint64_t task_hash) { return append(kBegin, id, task_hash); }
Status CommitLog::committed(std::uint64_t id, std::uint64_t task_hash) { return append(kCommit, id, task_hash); }
Status CommitLog::poisoned(std::uint64_t id, std::uint64_t task_hash) { return append(kPoison, id, task_hash); }

Status CommitLog::sync() {
  if (!dirty_) return Status::Ok();
  dirty_ = false;
  if (::msync(map_, end_, MS_SYNC) != 0) return Status::IOError("commit log '" + path_ + "': msync: " + errno_text());
  if (fdatasync(fd_) != 0) return Status::IOError("commit log '" + path_ + "': fdatasync: " + errno_text());
  return Status::Ok();
}

}  // namespace redflow::spits
