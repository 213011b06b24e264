// A TCP relay for tests: listens on 127.0.0.1 (ephemeral port), forwards
// every connection to a target port and keeps a copy of all bytes that
// passed, so a test can look at exactly what went over the wire; on request
// it changes one byte on its way to the target, as someone on the path could.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace redflow::testing {

class TcpRelay {
 public:
  explicit TcpRelay(int target_port) : target_port_(target_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 8) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~TcpRelay() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto [a, b] : pairs_) ::close(a), ::close(b);
    if (listener_ >= 0) ::close(listener_);
  }
  int port() const { return port_; }  // 0: the relay could not start
  std::string seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }
  // Bytes relayed so far towards the target (all connections).
  std::size_t to_target() const { return to_target_.load(); }
  // Inverts the byte at offset `at` of the stream towards the target (as
  // counted by to_target()), once.
  void flip_to_target_at(std::size_t at) { flip_at_ = at; }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  void run() {
    while (!stop_) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (auto [a, b] : pairs_) fds.push_back({a, POLLIN, 0}), fds.push_back({b, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int in = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        const int out = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in t = loopback(target_port_);
        if (in >= 0 && out >= 0 && ::connect(out, reinterpret_cast<sockaddr*>(&t), sizeof t) == 0) {
          pairs_.emplace_back(in, out);
        } else {
          if (in >= 0) ::close(in);
          if (out >= 0) ::close(out);
        }
        continue;  // the pair list changed: poll again
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto& [a, b] = pairs_[(i - 1) / 2];
        const int from = fds[i].fd, to = from == a ? b : a;
        char buf[65536];
        const ssize_t n = ::read(from, buf, sizeof buf);
        if (n > 0) {
          std::lock_guard lock(mu_);
          seen_.append(buf, static_cast<std::size_t>(n));
        }
        if (n > 0 && to == b) {
          const std::size_t before = to_target_.fetch_add(static_cast<std::size_t>(n)), at = flip_at_.load();
          if (at >= before && at < before + static_cast<std::size_t>(n)) {
            buf[at - before] = static_cast<char>(~buf[at - before]);
            flip_at_ = SIZE_MAX;
          }
        }
        if (n <= 0 || ::write(to, buf, static_cast<std::size_t>(n)) != n) ::shutdown(to, SHUT_WR);
      }
    }
  }
  int target_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> to_target_{0}, flip_at_{SIZE_MAX};
  std::thread thread_;
  std::vector<std::pair<int, int>> pairs_;  // (accepted, to target); the relay thread's alone until it ends
  mutable std::mutex mu_;
  std::string seen_;
};

}  // namespace redflow::testing
