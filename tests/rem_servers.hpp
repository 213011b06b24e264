// Real memcached and redis-server processes for the REM tests: started on
// 127.0.0.1 at a free port, UDP off, evictions off (memcached -M), no
// persistence (redis), killed when the test ends. A missing binary fails the
// test with a message; nothing is skipped.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "spawn_process.hpp"

namespace redflow::testing {

inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

inline bool port_open(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

inline std::string find_binary(const std::string& name) {
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/usr/sbin/"}) {
    std::string p = std::string(dir) + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// One server process, killed (SIGKILL) and reaped on destruction.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ~ServerProcess() { stop(); }

  // Starts `binary args...`, waits up to 5 s for the port to accept connections.
  // Returns an error message, empty on success.
  std::string start(const std::string& binary, std::vector<std::string> args, int port) {
    std::string path = find_binary(binary);
    if (path.empty()) return binary + " not found in /usr/bin, /usr/local/bin or /usr/sbin: install it (scripts/bootstrap does)";
    args.insert(args.begin(), path);
    // Quiet: the servers' own logs would drown the test output.
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_ = spawn_process(std::move(args), {.out_fd = null, .err_fd = null});
    if (null >= 0) ::close(null);
    port_ = port;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (port_open(port)) return "";
      int st;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return binary + " exited at start (port " + std::to_string(port) + ")";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop();
    return binary + " did not accept connections on 127.0.0.1:" + std::to_string(port) + " within 5 s";
  }
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// memcached as REM wants it: loopback, UDP off, no evictions, `megabytes` of
// memory, items up to `item_kib` KiB (memcached wants its slab chunk limit at most half of it).
inline std::string start_memcached(ServerProcess& s, int megabytes = 64, int item_kib = 1024) {
  int port = free_port();
  std::vector<std::string> args = {"-l", "127.0.0.1", "-p", std::to_string(port), "-U", "0", "-M", "-m", std::to_string(megabytes),
                                   "-I", std::to_string(item_kib) + "k", "-o", "slab_chunk_max=" + std::to_string(item_kib * 512), "-t", "1"};
  if (getuid() == 0) args.insert(args.begin(), {"-u", "root"});  // memcached refuses to run as root without it
  return s.start("memcached", args, port);
}

inline std::string start_redis(ServerProcess& s, const std::string& maxmemory = "0") {
  int port = free_port();
  return s.start("redis-server", {"--bind", "127.0.0.1", "--port", std::to_string(port), "--save", "", "--appendonly", "no",
                                  "--maxmemory", maxmemory, "--maxmemory-policy", "noeviction", "--protected-mode", "yes"},
                 port);
}

// The keys the server at 127.0.0.1:`port` holds, asked in its own words:
// Redis's `KEYS *` (all of them), or memcached's `lru_crawler metadump all`
// (keys URL-encoded there, decoded here), which lists only the items its
// crawler has reached: a sample, never proof that a key is absent. Empty
// with `error` set when it could not ask.
inline std::vector<std::string> server_keys(int port, bool redis, std::string& error) {
  std::vector<std::string> keys;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error = "cannot connect to port " + std::to_string(port);
    ::close(fd);
    return keys;
  }
  const std::string ask = redis ? "KEYS *\r\n" : "lru_crawler metadump all\r\n";
  if (::write(fd, ask.data(), ask.size()) != static_cast<ssize_t>(ask.size())) error = "cannot send";
  std::string in;
  char buf[65536];
  // memcached ends with "END"; Redis answers one array, read until it is whole.
  auto whole = [&] {
    if (!redis) return in.ends_with("END\r\n") || in.starts_with("ERROR") || in.starts_with("CLIENT_ERROR");
    if (!in.starts_with("*")) return !in.empty() && in.ends_with("\r\n");
    const std::size_t n = std::stoul(in.substr(1));
    std::size_t lines = 0;
    for (char c : in) lines += c == '\n';
    return lines >= 1 + 2 * n;
  };
  while (error.empty() && !whole()) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got <= 0) error = "the server stopped answering";
    else in.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (!error.empty()) return keys;
  std::size_t at = 0;
  for (std::size_t nl; (nl = in.find("\r\n", at)) != std::string::npos; at = nl + 2) {
    const std::string line = in.substr(at, nl - at);
    if (redis) {
      if (!line.starts_with("*") && !line.starts_with("$")) keys.push_back(line);
    } else if (line.starts_with("key=")) {
      const std::string enc = line.substr(4, line.find(' ') - 4);
      std::string key;
      for (std::size_t i = 0; i < enc.size(); ++i) {
        if (enc[i] == '%' && i + 2 < enc.size()) {
          key += static_cast<char>(std::stoi(enc.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          key += enc[i];
        }
      }
      keys.push_back(key);
    } else if (line.starts_with("ERROR") || line.starts_with("CLIENT_ERROR")) {
      error = "the server refused to list its keys: " + line;
    }
  }
  return keys;
}

}  // namespace redflow::testing
