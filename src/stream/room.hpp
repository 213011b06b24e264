// Room: Parks' bounded scheduling over the streams one process writes
// ("Bounded Scheduling of Process Networks"; docs/streams.md,
// "Back-pressure"). The Runner asks it what to do when no operator of its
// own can fire: grow the full stream with the smallest bound (or wake a
// producer whose stream has room again), leave things be while a producer
// waits for the I/O thread, or, on a node fed from elsewhere, wait until
// the network has been quiet a while.
//
// Thread-safety: add() before the run; the rest from any thread (it reads
// the queues' atomics; heard() is the I/O thread's, the rest the Runner's).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "stream/token_queue.hpp"

namespace redflow::stream {

class Room {
 public:
  using Clock = std::chrono::steady_clock;
  // How long nothing may have come from other nodes before a node fed from
  // there grows a stream between its own operators (a token may be on its way).
  static constexpr std::chrono::milliseconds kQuietNetwork{100};

  // A stream written here: read here, or by the I/O thread (bound elsewhere).
  void add(TokenQueue* queue, std::size_t producer, bool read_elsewhere) { streams_.push_back({queue, producer, read_elsewhere}); }

  // Tokens or a barrier came from another node.
  void heard() { last_heard_.store(Clock::now().time_since_epoch().count()); }
  // A producer here waits for the I/O thread to take tokens bound elsewhere.
  bool waits_on_network() const {
    for (const Stream& s : streams_)
      if (s.read_elsewhere && s.queue->producer_waiting()) return true;
    return false;
  }
  // Parks' rule, for when no operator here can fire: of the streams whose
  // producer waits for room, one that has room again (its consumer stopped
  // reading above half its bound) or else the one with the smallest bound,
  // which doubles it. Returns the producer to wake, or none: no producer
  // waits for room here (`done` says which producers finished), one waits
  // for the I/O thread (it will take tokens), or, with `fed_from_elsewhere`,
  // something came from there within kQuietNetwork.
  std::optional<std::size_t> make_room(bool fed_from_elsewhere, const std::function<bool(std::size_t)>& done) {
    if (waits_on_network()) return std::nullopt;
    if (fed_from_elsewhere && Clock::now().time_since_epoch().count() - last_heard_.load() < std::chrono::nanoseconds(kQuietNetwork).count())
      return std::nullopt;
    const Stream* best = nullptr;
    for (const Stream& s : streams_) {
      if (s.read_elsewhere || !s.queue->producer_waiting() || done(s.producer)) continue;
      if (!best || s.queue->has_room() > best->queue->has_room() ||
          (s.queue->has_room() == best->queue->has_room() && s.queue->capacity() < best->queue->capacity()))
        best = &s;
    }
    if (!best) return std::nullopt;
    if (!best->queue->has_room()) best->queue->grow();
    best->queue->clear_waiting();
    return best->producer;
  }

 private:
  struct Stream {
    TokenQueue* queue;
    std::size_t producer;
    bool read_elsewhere;
  };
  std::vector<Stream> streams_;
  std::atomic<Clock::rep> last_heard_{Clock::now().time_since_epoch().count()};
};

}  // namespace redflow::stream
