// One operator instance of a stream program at run time (OpState, its
// FiringContext) and what it reads and rings: InPort, Doorbell. Shared by the
// Runner (runner.cpp), which fires it, and the Checkpointer
// (checkpointer.cpp), which snapshots it between firings.
//
// Thread-safety: an OpState is used by the one thread that fires it at a
// time (the Runner hands it over with the acquire/release of its schedule
// state); the atomics below are the exceptions, read by other threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "redflow/stream.hpp"
#include "stream/inbox.hpp"
#include "stream/runner.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {

// A spin-wait's breath: tells the core it spins (x86's pause).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Wakes a sleeping operator thread; free when nobody sleeps.
class Doorbell {
 public:
  std::uint64_t ticket() const { return rings_.load(); }
  void ring() {
    rings_.fetch_add(1);
    if (sleepers_.load() > 0) {
      std::lock_guard lock(mutex_);
      cv_.notify_all();
    }
  }
  // Sleeps until ring() after `ticket` was taken, or `stop` holds.
  template <typename Stop>
  void wait(std::uint64_t ticket, Stop stop) {
    sleepers_.fetch_add(1);
    std::unique_lock lock(mutex_);
    asleep_at_.store(ticket + 1);
    cv_.wait(lock, [&] { return rings_.load() != ticket || stop(); });
    asleep_at_.store(0);
    sleepers_.fetch_sub(1);
  }
  // Whether a ring after `ticket` comes within a few microseconds: a fast
  // producer's next batch usually does, and catching it awake saves a
  // sleep and a wake-up (two system calls) per batch.
  bool rung_soon(std::uint64_t ticket) const {
    for (int i = 0; i < 2000; ++i) {
      if (rings_.load(std::memory_order_relaxed) != ticket) return true;
      spin_pause();
    }
    return false;
  }
  // Asleep, and nobody rang since it went to sleep: it stays asleep until
  // someone does. `rings` is what it has seen, to compare between looks.
  bool blocked(std::uint64_t& rings) const {
    const std::uint64_t at = asleep_at_.load();
    rings = rings_.load();
    return at != 0 && rings == at - 1;
  }

 private:
  std::atomic<std::uint64_t> rings_{0};
  std::atomic<std::uint64_t> asleep_at_{0};  // the ticket it sleeps on, plus 1; 0 while awake
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
};

enum Sched : int { kIdle = 0, kQueued = 1, kRunning = 2, kDirty = 3 };

// Where an operator reads one input: a queue from an operator in this
// process, or an inbox the I/O thread fills. One branch, not a virtual call:
// the local path stays as cheap as the queue.
struct InPort {
  TokenQueue* queue = nullptr;
  Inbox* inbox = nullptr;
  const void* looked = nullptr;  // where the last look() found its tokens
  // Up to `max` waiting tokens in place (see FiringContext::peek), and skip(n) to take them.
  const void* look(std::size_t max, std::size_t& n) { return looked = queue ? static_cast<const void*>(queue->look(max, n)) : inbox->look(max, n); }
  void skip(std::size_t n) { queue ? queue->skip(n) : inbox->skip(n); }
  std::size_t token_bytes() const { return queue ? queue->token_bytes() : inbox->token_bytes(); }
  std::size_t size() const { return queue ? queue->size() : inbox->size(); }
  bool drained() const { return queue ? queue->drained() : inbox->drained(); }
  bool closed() const { return queue ? queue->closed() : inbox->closed(); }
  // Tokens put in so far (read after closed(): then the stream's total).
  std::uint64_t total() const { return queue ? queue->pushed() : inbox->delivered(); }
  bool pop(void* token) { return queue ? queue->pop(token) : inbox->pop(token); }
  std::size_t pop_many(void* tokens, std::size_t max) { return queue ? queue->pop_many(tokens, max) : inbox->pop_many(tokens, max); }
  // The next `n` tokens, copied without taking them (n <= size()).
  void peek(void* tokens, std::size_t n) { queue ? queue->peek(tokens, n) : inbox->peek(tokens, n); }
};

// A checkpoint barrier on a stream, in one atomic word (the stream's
// barrier slot): the epoch in the top 24 bits, the position (tokens before
// it) in the low 40. 0: none yet.
inline constexpr int kBarrierShift = 40;
inline constexpr std::uint64_t kPositionMask = (std::uint64_t{1} << kBarrierShift) - 1;
inline constexpr std::uint64_t kNoBarrier = std::numeric_limits<std::uint64_t>::max();
inline std::uint64_t pack_barrier(std::uint32_t epoch, std::uint64_t position) {
  return (std::uint64_t{epoch & 0xFFFFFF} << kBarrierShift) | (position & kPositionMask);
}
// The position of `epoch`'s barrier in `slot`, or kNoBarrier.
inline std::uint64_t barrier_position(std::uint64_t slot, std::uint32_t epoch) {
  return slot != 0 && (slot >> kBarrierShift) == (epoch & 0xFFFFFF) ? slot & kPositionMask : kNoBarrier;
}

// The consumer of an output whose reader is on another node: the I/O thread.
constexpr std::size_t kRemote = static_cast<std::size_t>(-1);

// One operator instance at run time, and its FiringContext.
struct OpState final : FiringContext {
  std::string op_name;
  std::size_t index = 0;  // in the program
  std::unique_ptr<Operator> op;
  std::vector<InPort> in;
  std::vector<std::size_t> producer;    // per input: the operator that writes it, or kRemote
  std::vector<TokenQueue*> out;
  std::vector<std::size_t> consumer;    // per output: the operator that reads it, or kRemote
  std::vector<std::size_t> out_stream;  // per output: its stream
  std::vector<char> wrote;              // per output: written during this firing
  bool source = false;
  bool restored = false;  // from a checkpoint: start() is not called
  std::atomic<bool> done{false};  // read by the thread that looks for a deadlock
  std::uint64_t firings = 0;
  double busy_s = 0;
  std::vector<FiringSpan> spans;  // with RunOptions::trace
  Doorbell bell;
  std::atomic<int> sched{kIdle};

  // Checkpoints (checkpointer.hpp); off unless the run takes them.
  struct Recording {
    bool active = false;
    std::uint64_t start = 0, until = kNoBarrier;  // positions on the input: tokens recorded from start to until
    std::vector<std::byte> bytes;
  };
  bool checkpoints = false;
  std::vector<const std::atomic<std::uint64_t>*> barrier;  // per input: its stream's barrier slot
  std::vector<std::uint64_t> consumed;                     // per input: tokens read
  mutable std::vector<std::uint64_t> safe;                 // per input: readable up to here without a look (readable())
  std::uint32_t snapped = 0;                               // the last epoch it snapshotted
  std::vector<Recording> recording;                        // per input, while a channel is recorded
  bool recording_any = false;
  OperatorCheckpoint pending;                              // its part of `snapped`, until the channels are whole

  // Tokens input `i` may give before the barrier of the next epoch, which
  // it must not read past until it has snapshotted. The producer's count is
  // read before the barrier slot: a token beyond a barrier is put in after
  // the barrier, so whoever sees the token then sees the barrier too. So
  // every token seen before a look that found no barrier is before any
  // barrier to come: up to `safe`, reads need no look (one per batch).
  std::size_t readable(std::size_t i) const {
    if (!checkpoints) return std::numeric_limits<std::size_t>::max();
    const std::uint64_t visible = consumed[i] + in[i].size();
    const std::uint64_t b = barrier_position(barrier[i]->load(std::memory_order_acquire), snapped + 1);
    safe[i] = b == kNoBarrier ? visible : std::min(visible, b);
    return static_cast<std::size_t>(safe[i] - consumed[i]);
  }
  void took(std::size_t i, const void* tokens, std::size_t n) {
    if (!checkpoints || n == 0) return;
    if (recording_any && recording[i].active) record(i, tokens, n);
    consumed[i] += n;
  }
  void record(std::size_t i, const void* tokens, std::size_t n) {
    Recording& r = recording[i];
    const std::size_t size = in[i].token_bytes();
    std::size_t keep = n;
    if (r.until != kNoBarrier) keep = consumed[i] >= r.until ? 0 : std::min<std::uint64_t>(n, r.until - consumed[i]);
    const auto* p = static_cast<const std::byte*>(tokens);
    r.bytes.insert(r.bytes.end(), p, p + keep * size);
  }

  std::size_t inputs() const override { return in.size(); }
  std::size_t outputs() const override { return out.size(); }
  std::size_t token_bytes(std::size_t i) const override { return in.at(i).token_bytes(); }
  // What available() says stays readable until the operator snapshots (an
  // operator may count on it): see readable().
  std::size_t available(std::size_t i) const override {
    const std::size_t size = in.at(i).size();
    if (!checkpoints || consumed[i] + size <= safe[i]) return size;
    return std::min(size, readable(i));
  }
  bool drained(std::size_t i) const override { return in.at(i).drained(); }
  bool try_read(std::size_t i, void* token) override {
    if (checkpoints && consumed[i] >= safe[i] && readable(i) == 0) return false;
    if (!in.at(i).pop(token)) return false;
    took(i, token, 1);
    return true;
  }
  void write(std::size_t o, const void* token) override {
    out.at(o)->push(token);
    wrote[o] = 1;
  }
  std::size_t read_many(std::size_t i, void* tokens, std::size_t max) override {
    if (checkpoints && safe[i] - consumed[i] < max) max = std::min(max, readable(i));
    const std::size_t n = in.at(i).pop_many(tokens, max);
    took(i, tokens, n);
    return n;
  }
  void write_many(std::size_t o, const void* tokens, std::size_t n) override {
    if (n == 0) return;
    out.at(o)->push_many(tokens, n);
    wrote[o] = 1;
  }
  void* reserve(std::size_t o, std::size_t max, std::size_t& room) override { return out.at(o)->reserve(max, room); }
  void commit(std::size_t o, std::size_t n) override {
    if (n == 0) return;
    out.at(o)->commit(n);
    wrote[o] = 1;
  }
  const void* peek(std::size_t i, std::size_t max, std::size_t& n) override {
    if (checkpoints && safe[i] - consumed[i] < max) max = std::min(max, readable(i));
    n = 0;
    return max == 0 ? nullptr : in.at(i).look(max, n);
  }
  void consume(std::size_t i, std::size_t n) override {
    if (n == 0) return;
    took(i, in.at(i).looked, n);
    in[i].skip(n);
  }
  const std::string& name() const override { return op_name; }
};

}  // namespace redflow::stream
