// Room: Parks' bounded scheduling over the streams one process writes and
// the streams with credits it reads from other nodes ("Bounded Scheduling
// of Process Networks"; docs/streams.md, "Back-pressure"). The Runner asks
// it what to do when no operator of its own can fire: grow the full stream
// with the smallest bound (or wake a producer whose stream has room again),
// leave things be while a producer waits for the I/O thread, or, on a node
// fed from elsewhere, wait until the network has been quiet a while; then,
// if a stream from another node has used up its credit, double its window.
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

#include "stream/inbox.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {

class Room {
 public:
  using Clock = std::chrono::steady_clock;
  // How long nothing may have come from other nodes before a node fed from
  // there grows a stream between its own operators (a token may be on its way).
  static constexpr std::chrono::milliseconds kQuietNetwork{100};
  // The same before it grows the windows of streams from other nodes whose
  // producers used up their credit: shorter, since such a producer has no
  // token of that stream on its way, and a program that needs a window many
  // times its bound waits one of these per doubling.
  static constexpr std::chrono::milliseconds kQuietCredit{20};

  // What make_room() returns when it granted a stream from another node
  // more credit: the I/O thread is to send it.
  static constexpr std::size_t kCreditGrown = static_cast<std::size_t>(-1);

  // A stream written here: read here, or by the I/O thread (bound elsewhere).
  void add(TokenQueue* queue, std::size_t producer, bool read_elsewhere) { streams_.push_back({queue, producer, read_elsewhere}); }
  // A stream from another node read here (one without a credit window is
  // never out of credit: it never grows).
  void add(Inbox* inbox) { inboxes_.push_back(inbox); }

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
  // something came from there within kQuietNetwork. Failing those, every
  // stream from another node whose producer has used up its credit while no
  // operator here can fire (so nothing here reads it) doubles its window,
  // and kCreditGrown says so; at most once per kQuietCredit of silence.
  // Every one of them, not the smallest alone as in one process: a node
  // cannot see which of them the program waits for, and a program that
  // needs many would wait a quiet period for each.
  std::optional<std::size_t> make_room(bool fed_from_elsewhere, const std::function<bool(std::size_t)>& done) {
    const auto quiet = Clock::now().time_since_epoch().count() - last_heard_.load();
    if (fed_from_elsewhere && quiet < std::chrono::nanoseconds(kQuietCredit).count()) return std::nullopt;
    if (!fed_from_elsewhere || quiet >= std::chrono::nanoseconds(kQuietNetwork).count())
      if (!waits_on_network())
        if (auto producer = grow_local(done)) return producer;
    if (!fed_from_elsewhere) return std::nullopt;
    bool grown = false;
    for (Inbox* in : inboxes_) {
      if (!in->out_of_credit()) continue;
      in->grow();
      grown = true;
    }
    if (!grown) return std::nullopt;
    heard();  // the grants go out: look again only after another quiet period
    return kCreditGrown;
  }

 private:
  std::optional<std::size_t> grow_local(const std::function<bool(std::size_t)>& done) {
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

  struct Stream {
    TokenQueue* queue;
    std::size_t producer;
    bool read_elsewhere;
  };
  std::vector<Stream> streams_;
  std::vector<Inbox*> inboxes_;
  std::atomic<Clock::rep> last_heard_{Clock::now().time_since_epoch().count()};
};

}  // namespace redflow::stream
