// The journal's records, replay_record and appends (journal.hpp).
#include "server/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "server/server_messages.hpp"

namespace redflow::server {

namespace {

constexpr std::uint32_t kJournalMagic = 0x4c4a5352;  // "RSJL": redflow server journal
constexpr std::size_t kJournalHeader = 9;            // magic, kind, length
constexpr std::size_t kJournalCheck = 4;
constexpr std::uint32_t kJournalMaxBody = 64u << 20;

std::uint32_t journal_checksum(const std::byte* p, std::size_t n) { return static_cast<std::uint32_t>(XXH3_64bits(p, n)); }

std::string journal_errno() { return std::strerror(errno); }

// Applies one record's body to the table; false if it does not decode.
bool replay_record(char kind, std::span<const std::byte> body, JobTable& table, std::string& endpoint) {
  wire::Reader r(body, "journal record");
  switch (kind) {
    case 'W':
      endpoint = r.str("endpoint", 4096);
      break;
    case 'S': {
      const std::uint64_t id = r.u64("job id");
      auto args = get_strings(r, "args");
      auto cwd = r.str("cwd", 1 << 20);
      SubmitOptions options;
      options.workers = r.u32("workers");
      options.time_limit_s = r.f64("time limit");
      if (!r.failed()) table.submit_as(id, std::move(args), std::move(cwd), options);
      break;
    }
    case 'R':
    case 'C': {
      const std::uint64_t id = r.u64("job id");
      if (r.failed() || table.find(id) == nullptr) return false;
      if (kind == 'R') {
        table.started(id, {});  // again, after a start with no end: the server died in between
      } else {
        (void)table.cancel(id);
      }
      break;
    }
    case 'E': {
      JobInfo j = get_job(r);
      if (r.failed() || table.find(j.id) == nullptr) return false;
      table.ended(j.id, j.exit_status, j.message, j.report_json, j.workers);
      break;
    }
    default:
      return false;
  }
  r.finish("a journal record");
  return !r.failed();
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::open(const std::string& dir, JobTable& table, std::string& workers_endpoint) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("journal directory '" + dir + "': cannot create it: " + ec.message());
  std::unique_ptr<Journal> j(new Journal());
  j->dir_ = dir;
  j->path_ = (std::filesystem::path(dir) / "journal").string();
  const std::string& path = j->path_;
  j->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (j->fd_ < 0) return Status::IOError("journal '" + path + "': cannot open: " + journal_errno());
  struct stat st;
  if (fstat(j->fd_, &st) != 0) return Status::IOError("journal '" + path + "': " + journal_errno());
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  if (!bytes.empty() && pread(j->fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    return Status::IOError("journal '" + path + "': cannot read: " + journal_errno());

  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t left = bytes.size() - at;
    std::uint32_t magic = 0, length = 0;
    bool whole = left >= kJournalHeader;
    if (whole) {
      std::memcpy(&magic, &bytes[at], 4);
      std::memcpy(&length, &bytes[at + 5], 4);
      whole = magic == kJournalMagic && length <= kJournalMaxBody && left >= kJournalHeader + length + kJournalCheck;
    }
    bool good = false;
    if (whole) {
      std::uint32_t check;
      std::memcpy(&check, &bytes[at + kJournalHeader + length], 4);
      good = check == journal_checksum(&bytes[at], kJournalHeader + length);
    }
    const std::size_t end = whole ? at + kJournalHeader + length + kJournalCheck : bytes.size();
    if (!good) {
      // A record cut short or garbled at the very end: what a crash mid-write leaves.
      if (end == bytes.size()) break;
      return Status::DataLoss("journal '" + path + "': record " + std::to_string(j->records_) + " (byte " + std::to_string(at) +
                              ") is damaged but bytes follow it; refusing to resume from it");
    }
    const char kind = static_cast<char>(bytes[at + 4]);
    if (!replay_record(kind, std::span<const std::byte>(bytes).subspan(at + kJournalHeader, length), table, workers_endpoint))
      return Status::DataLoss("journal '" + path + "': record " + std::to_string(j->records_) + " (byte " + std::to_string(at) +
                              ", kind '" + std::string(1, kind) + "') does not fit the jobs before it");
    ++j->records_;
    at = end;
  }
  j->torn_bytes_ = bytes.size() - at;
  if (j->torn_bytes_ && ftruncate(j->fd_, static_cast<off_t>(at)) != 0)
    return Status::IOError("journal '" + path + "': cannot cut its torn tail: " + journal_errno());
  if (lseek(j->fd_, 0, SEEK_END) < 0) return Status::IOError("journal '" + path + "': " + journal_errno());
  table.recover();
  return j;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::append(char kind, const std::vector<std::byte>& body) {
  std::vector<std::byte> record(kJournalHeader);
  std::memcpy(record.data(), &kJournalMagic, 4);
  record[4] = static_cast<std::byte>(kind);
  const auto length = static_cast<std::uint32_t>(body.size());
  std::memcpy(&record[5], &length, 4);
  record.insert(record.end(), body.begin(), body.end());
  const std::uint32_t check = journal_checksum(record.data(), record.size());
  record.resize(record.size() + kJournalCheck);
  std::memcpy(&record[record.size() - kJournalCheck], &check, 4);
  ssize_t n;
  do n = ::write(fd_, record.data(), record.size());
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(record.size()))
    return Status::IOError("journal '" + path_ + "': cannot append: " + (n < 0 ? journal_errno() : "short write"));
  if (fdatasync(fd_) != 0) return Status::IOError("journal '" + path_ + "': fdatasync: " + journal_errno());
  ++records_;
  return Status::Ok();
}

Status Journal::endpoint(const std::string& workers_endpoint) {
  std::vector<std::byte> body;
  wire::Writer w(body);
  w.str(workers_endpoint);
  return append('W', body);
}

Status Journal::submitted(const JobInfo& job) {
  std::vector<std::byte> body;
  wire::Writer w(body);
  w.u64(job.id);
  put_strings(w, job.args);
  w.str(job.cwd);
  w.u32(job.workers_asked);
  w.f64(job.time_limit_s);
  return append('S', body);
}

Status Journal::started(std::uint64_t id) {
  std::vector<std::byte> body;
  wire::Writer(body).u64(id);
  return append('R', body);
}

Status Journal::ended(const JobInfo& job) {
  std::vector<std::byte> body;
  wire::Writer w(body);
  put_job(w, job);
  return append('E', body);
}

Status Journal::cancelled(std::uint64_t id) {
  std::vector<std::byte> body;
  wire::Writer(body).u64(id);
  return append('C', body);
}

}  // namespace redflow::server
