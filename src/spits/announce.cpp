// The announce list (announce.hpp).
#include "spits/announce.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace redflow::spits {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kSuffix = ".tm";

Result<net::AddressRecord> read_record(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path);
  std::stringstream text;
  text << in.rdbuf();
  return net::parse_address_record(text.str(), path);
}
}  // namespace

std::string announcement_path(const std::string& dir, const std::string& name) { return (fs::path(dir) / (name + std::string(kSuffix))).string(); }

Status announce(const std::string& dir, const std::string& name, const std::string& endpoint, const std::string& public_key) {
  if (name.empty() || name.find('/') != std::string::npos || name.front() == '.')
    return Status::InvalidArgument(fmt::format("Task Manager name '{}': not a file name (no '/', not empty, not starting with '.')", name));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError(fmt::format("announce list {}: cannot create it: {}", dir, ec.message()));
  const std::string path = announcement_path(dir, name);
  if (auto old = read_record(path); old.ok()) {
    const net::AddressRecord me = net::this_process_record();
    if (!net::driver_is_gone(*old) && !(old->pid == me.pid && old->host == me.host))
      return Status::InvalidArgument(fmt::format("announce list {}: a Task Manager named '{}' is already there (pid {} on {}); give another --name",
                                               dir, name, old->pid, old->host));
  }
  net::AddressRecord record = net::this_process_record();
  record.endpoint = endpoint;
  record.server_public_key = public_key;
  const std::string text = net::format_address_record(record);
  const std::string tmp = fmt::format("{}/.{}.tmp-{}", dir, name, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(fmt::format("announce list {}: cannot create {}: {}", dir, tmp, std::strerror(errno)));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("announce list {}: cannot write {}", dir, path));
  }
  return Status::Ok();
}

void withdraw(const std::string& dir, const std::string& name) {
  const std::string path = announcement_path(dir, name);
  auto record = read_record(path);
  const net::AddressRecord me = net::this_process_record();
  if (record.ok() && record->pid == me.pid && record->host == me.host) ::unlink(path.c_str());
}

std::vector<Announcement> read_announcements(const std::string& dir) {
  std::vector<Announcement> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() <= kSuffix.size() || file.front() == '.' || !file.ends_with(kSuffix)) continue;
    auto record = read_record(it->path().string());
    if (!record.ok() || record->endpoint.empty() || net::driver_is_gone(*record)) continue;
    out.push_back(Announcement{file.substr(0, file.size() - kSuffix.size()), it->path().string(), std::move(*record)});
  }
  return out;
}

}  // namespace redflow::spits
