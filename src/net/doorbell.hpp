// Doorbell: how another thread wakes an I/O thread that sleeps in zmq::poll.
// An eventfd, polled beside the I/O thread's sockets: ring() from any thread
// (an executor with a reply ready, an operator with tokens for another node),
// drain() on the I/O thread once poll says it rang. Rings coalesce, so a
// burst of them costs one wake-up.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <zmq.hpp>

#include "redflow/status.hpp"

namespace redflow::net {

class Doorbell {
 public:
  Doorbell() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~Doorbell() {
    if (fd_ >= 0) ::close(fd_);
  }
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  // False when the process is out of file descriptors.
  bool ok() const { return fd_ >= 0; }
  // For a zmq::pollitem_t {nullptr, fd(), ZMQ_POLLIN, 0}.
  int fd() const { return fd_; }
  void ring() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
  }
  void drain() const {
    std::uint64_t n;
    [[maybe_unused]] const ssize_t got = ::read(fd_, &n, sizeof n);
  }

 private:
  int fd_;
};

// zmq::poll for at most `timeout` (never negative); a signal's EINTR is a
// plain wake-up, any other failure a named error.
inline Status poll_for(std::span<zmq::pollitem_t> items, std::chrono::steady_clock::duration timeout) {
  try {
    zmq::poll(items.data(), items.size(),
              std::chrono::duration_cast<std::chrono::milliseconds>(std::max(std::chrono::steady_clock::duration(0), timeout)));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) return Status::IOError(std::string("poll failed: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace redflow::net
