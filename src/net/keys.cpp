// Key pairs, key files and authorized keys (keys.hpp).
#include "net/keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace redflow::net {

namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

// One meaningful line of a key file: its number, first word and the rest.
struct KeyLine {
  int number = 0;
  std::string first, rest;
};

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// Skips blank lines and comments; see keys.hpp for why no key starts with '#'.
std::vector<KeyLine> key_lines(std::string_view text) {
  std::vector<KeyLine> lines;
  std::istringstream in{std::string(text)};
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    const std::string line = trim(raw);
    if (line.empty()) continue;
    if (line[0] == '#') continue;
    const auto space = line.find_first_of(" \t");
    KeyLine k{number, line.substr(0, space), space == std::string::npos ? "" : trim(line.substr(space))};
    lines.push_back(std::move(k));
  }
  return lines;
}

Result<std::string> slurp(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(fmt::format("{} {}: cannot open: {}", what, path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > (1u << 20)) return Status::InvalidArgument(fmt::format("{} {}: larger than 1 MiB; not a key file", what, path));
  return s.str();
}

// Writes `text` to a fresh temporary beside `path` (O_EXCL, `mode`) and
// moves it into place: link() fails if `path` exists, rename() replaces it.
Status install_file(const std::string& path, const std::string& text, mode_t mode, bool replace) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return Status::IOError(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
  bool ok = ::fchmod(fd, mode) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int write_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status::IOError(fmt::format("{}: cannot write: {}", tmp, std::strerror(write_errno)));
  }
  const int r = replace ? ::rename(tmp.c_str(), path.c_str()) : ::link(tmp.c_str(), path.c_str());
  const int place_errno = errno;
  ::unlink(tmp.c_str());  // after link(): the key lives on under `path` only; after rename(): already gone
  if (r != 0 && place_errno == EEXIST)
    return Status::InvalidArgument(fmt::format("{} exists: not overwriting a key (give --force to replace it)", path));
  if (r != 0) return Status::IOError(fmt::format("{}: cannot create: {}", path, std::strerror(place_errno)));
  return Status::Ok();
}

}  // namespace

Status check_z85_key(std::string_view key) {
  if (key.size() != kZ85KeyLength)
    return Status::InvalidArgument(fmt::format("a CURVE key has {} Z85 characters, this one {}", kZ85KeyLength, key.size()));
  for (char c : key)
    if (kZ85Alphabet.find(c) == std::string_view::npos)
      return Status::InvalidArgument(fmt::format("'{}' is not a Z85 character", c));
  std::array<std::uint8_t, 32> raw{};
  const std::string z(key);
  if (zmq_z85_decode(raw.data(), z.c_str()) == nullptr) return Status::InvalidArgument("not a valid Z85 key");
  return Status::Ok();
}

std::string key_prefix(std::string_view key) { return std::string(key.substr(0, 8)) + "..."; }

Result<KeyPair> generate_key_pair() {
  std::array<char, 41> pub{}, sec{};
  if (zmq_curve_keypair(pub.data(), sec.data()) != 0)
    return Status::Internal(fmt::format("zmq_curve_keypair: {} (libzmq built without CURVE?)", zmq_strerror(zmq_errno())));
  return KeyPair{pub.data(), sec.data()};
}

Status write_key_pair(const std::string& prefix, const KeyPair& keys, bool force) {
  const std::string key_path = prefix + ".key", pub_path = prefix + ".pub";
  if (!force)  // checked up front so that a refusal leaves neither file written
    for (const auto& p : {key_path, pub_path})
      if (::access(p.c_str(), F_OK) == 0)
        return Status::InvalidArgument(fmt::format("{} exists: not overwriting a key (give --force to replace it)", p));
  REDFLOW_RETURN_IF_ERROR(install_file(
      key_path, fmt::format("# redflow CURVE secret key: keep it private (public half in {})\n{}\n", pub_path, keys.secret_key), 0600, force));
  return install_file(pub_path, keys.public_key + "\n", 0644, force);
}

Result<KeyPair> read_secret_key_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return Status::IOError(fmt::format("secret key {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(fmt::format("secret key {}: not a regular file", path));
  if ((st.st_mode & 077) != 0)
    return Status::InvalidArgument(fmt::format("secret key {} may be read by others (mode {:03o}): run chmod 600 {}",
                                               path, st.st_mode & 0777, path));
  auto text = slurp(path, "secret key");
  if (!text.ok()) return text.status();
  const auto lines = key_lines(*text);
  if (lines.size() != 1 || !lines[0].rest.empty())
    return Status::InvalidArgument(fmt::format("secret key {}: expected one key line, found {} (make one with redflow keygen)", path,
                                               lines.size() == 1 ? "extra words after the key" : std::to_string(lines.size()) + " lines"));
  if (Status s = check_z85_key(lines[0].first); !s.ok())
    return Status::InvalidArgument(fmt::format("secret key {}:{}: {}", path, lines[0].number, s.message()));
  std::array<char, 41> pub{};
  if (zmq_curve_public(pub.data(), lines[0].first.c_str()) != 0)
    return Status::InvalidArgument(fmt::format("secret key {}: cannot derive its public key: {}", path, zmq_strerror(zmq_errno())));
  return KeyPair{pub.data(), lines[0].first};
}

Result<std::string> read_public_key_file(const std::string& path) {
  auto text = slurp(path, "public key");
  if (!text.ok()) return text.status();
  const auto lines = key_lines(*text);
  if (lines.size() != 1)
    return Status::InvalidArgument(fmt::format("public key {}: expected one key line, found {}", path, lines.size()));
  if (Status s = check_z85_key(lines[0].first); !s.ok())
    return Status::InvalidArgument(fmt::format("public key {}:{}: {}", path, lines[0].number, s.message()));
  return lines[0].first;
}

Result<std::vector<AuthorizedKey>> parse_authorized_keys(std::string_view text, const std::string& source) {
  std::vector<AuthorizedKey> keys;
  std::set<std::string> seen;
  for (const auto& line : key_lines(text)) {
    if (Status s = check_z85_key(line.first); !s.ok())
      return Status::InvalidArgument(fmt::format("authorized keys {}:{}: {}", source, line.number, s.message()));
    if (!seen.insert(line.first).second)
      return Status::InvalidArgument(fmt::format("authorized keys {}:{}: key {} listed twice", source, line.number, key_prefix(line.first)));
    keys.push_back({line.first, line.rest.empty() ? key_prefix(line.first) : line.rest, line.number});
  }
  return keys;
}

Result<std::vector<AuthorizedKey>> read_authorized_keys(const std::string& path) {
  auto text = slurp(path, "authorized keys");
  if (!text.ok()) return text.status();
  return parse_authorized_keys(*text, path);
}

}  // namespace redflow::net
