// The address file rendezvous (address_file.hpp).
#include "net/address_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "net/keys.hpp"

namespace redflow::net {

namespace {

constexpr std::string_view kAddressFileMagic = "redflow-address-file 1";
constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr auto kTornGrace = std::chrono::seconds(1);

// Field 22 of /proc/PID/stat (clock ticks after boot), or 0 when unknown.
std::uint64_t start_ticks_of(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

// Writes `text` to a fresh O_EXCL temporary beside `path` and links (claim)
// or renames (publish) it into place.
Status place(const std::string& path, const std::string& text, bool replace, bool* existed) {
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, host_name(), getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(fmt::format("address file {}: cannot create {}: {}", path, tmp, std::strerror(errno)));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("address file {}: cannot write {}", path, tmp));
  }
  const int r = replace ? ::rename(tmp.c_str(), path.c_str()) : ::link(tmp.c_str(), path.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (r != 0 && err == EEXIST && existed) {
    *existed = true;
    return Status::Ok();
  }
  if (r != 0) return Status::IOError(fmt::format("address file {}: cannot create: {}", path, std::strerror(err)));
  return Status::Ok();
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("address file {}: {}", path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string describe(const AddressRecord& r) { return fmt::format("pid {} on host {}", r.pid, r.host); }

}  // namespace

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

AddressRecord this_process_record() {
  AddressRecord r;
  r.pid = static_cast<long>(getpid());
  r.host = host_name();
  r.start_ticks = start_ticks_of(r.pid);
  return r;
}

std::string format_address_record(const AddressRecord& r) {
  std::string text = fmt::format("{}\npid {}\nhost {}\nstart-ticks {}\n", kAddressFileMagic, r.pid, r.host, r.start_ticks);
  if (!r.endpoint.empty()) text += fmt::format("endpoint {}\n", r.endpoint);
  if (!r.server_public_key.empty()) text += fmt::format("server-key {}\n", r.server_public_key);
  return text + "end\n";
}

Result<AddressRecord> parse_address_record(std::string_view text, const std::string& source) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != kAddressFileMagic)
    return Status::InvalidArgument(fmt::format("address file {}: line 1 is not '{}': not written by redflow", source, kAddressFileMagic));
  AddressRecord r;
  bool ended = false, has_pid = false, has_host = false;
  for (int number = 2; std::getline(in, line); ++number) {
    if (ended) return Status::InvalidArgument(fmt::format("address file {}:{}: text after 'end'", source, number));
    if (line == "end") {
      ended = true;
      continue;
    }
    const auto space = line.find(' ');
    const std::string field = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (value.empty()) return Status::InvalidArgument(fmt::format("address file {}:{}: '{}' has no value", source, number, field));
    if (field == "pid") {
      r.pid = std::strtol(value.c_str(), nullptr, 10);
      has_pid = r.pid > 0;
    } else if (field == "host") {
      r.host = value;
      has_host = true;
    } else if (field == "start-ticks") {
      r.start_ticks = std::strtoull(value.c_str(), nullptr, 10);
    } else if (field == "endpoint") {
      r.endpoint = value;
    } else if (field == "server-key") {
      if (Status s = check_z85_key(value); !s.ok())
        return Status::InvalidArgument(fmt::format("address file {}:{}: server-key: {}", source, number, s.message()));
      r.server_public_key = value;
    } else {
      return Status::InvalidArgument(fmt::format("address file {}:{}: unknown field '{}'", source, number, field));
    }
  }
  // The last line must be "end" and its newline: a cut inside "endpoint ..." would otherwise read as "end".
  if (!ended || !text.ends_with("\nend\n"))
    return Status::InvalidArgument(fmt::format("address file {}: torn: no 'end' line (cut short while written?)", source));
  if (!has_pid || !has_host) return Status::InvalidArgument(fmt::format("address file {}: no driver pid and host", source));
  return r;
}

bool driver_is_gone(const AddressRecord& r) {
  if (r.host != host_name()) return false;  // another machine's processes cannot be seen from here
  if (::kill(static_cast<pid_t>(r.pid), 0) != 0 && errno == ESRCH) return true;
  const std::uint64_t ticks = start_ticks_of(r.pid);
  return r.start_ticks != 0 && ticks != 0 && ticks != r.start_ticks;  // the pid now belongs to another process
}

Result<Claim> claim_address_file(const std::string& path) {
  bool existed = false;
  REDFLOW_RETURN_IF_ERROR(place(path, format_address_record(this_process_record()), false, &existed));
  return existed ? Claim::kWorker : Claim::kDriver;
}

Status publish_address(const std::string& path, AddressRecord record) {
  const AddressRecord me = this_process_record();
  auto text = read_text(path);
  if (!text.ok()) return text.status();
  auto current = parse_address_record(*text, path);
  if (!current.ok()) return current.status();
  if (current->pid != me.pid || current->host != me.host)
    return Status::InvalidArgument(fmt::format("address file {}: claimed by {}, not by this process", path, describe(*current)));
  record.pid = me.pid;
  record.host = me.host;
  record.start_ticks = me.start_ticks;
  return place(path, format_address_record(record), true, nullptr);
}

Result<AddressRecord> wait_for_address(const std::string& path, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now(), deadline = start + timeout;
  // When the file was first seen unreadable (a time_point and a flag: GCC's
  // sanitizer builds warn on an optional time_point here).
  Clock::time_point torn_since{};
  bool torn = false;
  Status last = Status::NotFound(fmt::format("address file {} never appeared: no driver started within {} ms", path, timeout.count()));
  for (;;) {
    if (auto text = read_text(path); text.ok()) {
      auto record = parse_address_record(*text, path);
      if (record.ok()) {
        torn = false;
        if (driver_is_gone(*record))
          return Status::NotFound(fmt::format("address file {} is stale: its driver ({}) is gone; remove the file to start a new job",
                                              path, describe(*record)));
        if (!record->endpoint.empty()) return record;
        last = Status::NotFound(fmt::format("address file {}: claimed by the driver ({}), which wrote no endpoint within {} ms",
                                            path, describe(*record), timeout.count()));
      } else {
        // Our own writes are whole; a file that stays unreadable was cut short or written by something else.
        if (!torn) torn_since = Clock::now(), torn = true;
        if (Clock::now() - torn_since >= kTornGrace) return record.status();
        last = record.status();
      }
    }
    if (Clock::now() >= deadline) return last;
    std::this_thread::sleep_for(kPoll);
  }
}

Status release_address_file(const std::string& path) {
  auto text = read_text(path);
  if (!text.ok()) return Status::Ok();  // already gone
  auto current = parse_address_record(*text, path);
  const AddressRecord me = this_process_record();
  if (!current.ok() || current->pid != me.pid || current->host != me.host)
    return Status::InvalidArgument(fmt::format("address file {}: not this process's; left in place", path));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return Status::IOError(fmt::format("address file {}: cannot remove: {}", path, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace redflow::net
