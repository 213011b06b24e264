// Doorbell: how another thread wakes an I/O thread that sleeps in zmq::poll.
// An eventfd, polled beside the I/O thread's sockets: ring() from any thread
// (an executor with a reply ready, an operator with tokens for another node),
// drain() on the I/O thread once poll says it rang. Rings coalesce, so a
// burst of them costs one wake-up, and only the first ring after a drain
// writes to the eventfd: a reply or request per actor rang it (a system call
// each, about 5 % of a dispatch run's time) while the I/O thread was awake.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
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
  // Whoever rings must have published what the I/O thread is to find (under
  // a lock, or with a release) before ringing.
  void ring() const {
    if (rung_.exchange(true)) return;  // rung since the last drain: the I/O thread is bound to look
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
  }
  // Before the I/O thread looks for work: a ring after this writes again.
  // Read, then clear: cleared first, a ring in between would set the flag
  // and write, the read would take that write, and every later ring would
  // find the flag set and the eventfd empty (a lost wake-up).
  // Returns how many rings wrote since the last drain (0 if none).
  std::uint64_t drain() const {
    std::uint64_t n = 0;
    if (::read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) n = 0;
    rung_.store(false);
    return n;
  }

 private:
  int fd_;
  // Set by the first ring after a drain. Sequentially consistent with the
  // ringer's exchange: a ring that finds it set came before the drain's
  // store, so the look for work that follows the drain sees what it rang for.
  mutable std::atomic<bool> rung_{false};
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
