// TokenQueue: one stream's FIFO in one process. Exactly one producer (the
// operator whose output it is) and one consumer, fixed-size tokens. Writes
// never fail (a Kahn network's writes never block), but a queue has a
// capacity: the Runner does not fire a producer while one of its outputs is
// full (Parks' bounded scheduling; the producer marks itself waiting with
// wait_for_room(), the consumer wakes it when room_wanted() says so), and
// doubles a full queue's capacity when every operator waits (grow()). Tokens live in blocks of a few
// thousand; the producer publishes each token with one release store and the
// consumer takes it with one acquire load, so a token costs about what a
// bounded single-producer/single-consumer ring costs (bench/stream_throughput).
// In bulk, one store and one load per batch (push_many / pop_many), and
// without the copies (reserve / commit, look / skip): a producer fills
// tokens in the block itself, a consumer uses them there.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <new>

namespace redflow::stream {

class TokenQueue {
 public:
  explicit TokenQueue(std::size_t token_bytes)
      : bytes_(token_bytes == 0 ? 1 : token_bytes),
        per_block_(bytes_ >= kBlockBytes ? 1 : kBlockBytes / bytes_),
        tail_(new_block()),
        head_(tail_) {}
  ~TokenQueue() {
    while (head_) {
      Block* next = head_->next.load(std::memory_order_relaxed);
      free_block(head_);
      head_ = next;
    }
    if (Block* b = spare_.load()) free_block(b);
  }
  TokenQueue(const TokenQueue&) = delete;
  TokenQueue& operator=(const TokenQueue&) = delete;

  std::size_t token_bytes() const { return bytes_; }

  // Back-pressure. Capacity in tokens (the default: unbounded).
  void set_capacity(std::uint64_t tokens) { capacity_.store(std::max<std::uint64_t>(1, tokens), std::memory_order_relaxed); }
  std::uint64_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  void grow() {
    const std::uint64_t c = capacity();
    set_capacity(c > kUnbounded / 2 ? kUnbounded : c * 2);
  }
  void unbound() { capacity_.store(kUnbounded, std::memory_order_relaxed); }
  // Producer: whether its next firing must wait for room. Marks it waiting
  // first, then looks again (the consumer pops, then looks at the mark: one
  // of the two sees the other, so a producer never waits on a queue that has
  // room with nobody to wake it).
  bool wait_for_room() {
    if (produced_ - read_.load(std::memory_order_relaxed) < capacity()) return false;
    waiting_.store(true, std::memory_order_seq_cst);
    if (produced_ - read_.load(std::memory_order_seq_cst) < capacity()) {
      waiting_.store(false, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  // Consumer, after taking tokens: the producer waits and the queue has
  // drained to half its capacity (it is then no longer marked: wake it
  // once). Half, not the first free slot: a producer woken for one firing's
  // room would wait again after it, and the two would meet per firing.
  bool room_wanted() {
    if (!waiting_.load(std::memory_order_seq_cst) || size() > capacity() / 2) return false;
    return waiting_.exchange(false);
  }
  // Whether there is room now (the producer waits, the consumer may not wake it until half).
  bool has_room() const { return size() < capacity(); }
  // Whether the producer waits for room (for the deadlock check); clear_waiting() when it is woken otherwise.
  bool producer_waiting() const { return waiting_.load(); }
  void clear_waiting() { waiting_.store(false); }

  // Producer side.
  void push(const void* token) {
    next_tail_block();
    std::memcpy(tail_->data() + tail_used_ * bytes_, token, bytes_);
    ++tail_used_;
    written_.store(++produced_, std::memory_order_release);
  }
  // `n` tokens back to back, published with one release store: the consumer
  // sees them together, and the two cores meet once per batch, not per token.
  void push_many(const void* tokens, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(tokens);
    while (n > 0) {
      next_tail_block();
      const std::size_t k = std::min(n, per_block_ - tail_used_);
      std::memcpy(tail_->data() + tail_used_ * bytes_, p, k * bytes_);
      tail_used_ += k;
      produced_ += k;
      p += k * bytes_;
      n -= k;
    }
    written_.store(produced_, std::memory_order_release);
  }
  // In place, without a copy: room for up to `max` tokens at the end of the
  // queue, in one block (fewer when the current block has less; at least one
  // when max > 0), for the producer to fill; commit(n) then publishes the
  // first n of them, as push_many would. Nothing is visible before commit().
  unsigned char* reserve(std::size_t max, std::size_t& room) {
    next_tail_block();
    room = std::min(max, per_block_ - tail_used_);
    return tail_->data() + tail_used_ * bytes_;
  }
  void commit(std::size_t n) {
    tail_used_ += n;
    produced_ += n;
    written_.store(produced_, std::memory_order_release);
  }
  void close() { closed_.store(true, std::memory_order_release); }

  // Consumer side.
  bool pop(void* token) { return pop_many(token, 1) == 1; }
  // Up to `max` tokens into `tokens`; how many. The producer's count is read
  // only when what was seen of it does not cover `max` (the ring's trick: no
  // cache line crosses cores per token while tokens are waiting); so every
  // token size() counted is taken when asked for (an operator reads what
  // available() promised).
  std::size_t pop_many(void* tokens, std::size_t max) {
    if (visible_ - consumed_ < max) visible_ = written_.load(std::memory_order_acquire);
    std::size_t n = std::min<std::uint64_t>(max, visible_ - consumed_);
    if (n == 0) return 0;
    auto* p = static_cast<unsigned char*>(tokens);
    for (std::size_t left = n; left > 0;) {
      next_head_block();
      const std::size_t k = std::min(left, per_block_ - head_used_);
      std::memcpy(p, head_->data() + head_used_ * bytes_, k * bytes_);
      head_used_ += k;
      p += k * bytes_;
      left -= k;
    }
    consumed_ += n;
    read_.store(consumed_, std::memory_order_seq_cst);  // see wait_for_room()
    return n;
  }
  // Consumer side, in place: up to `max` waiting tokens where they lie, in
  // one block (fewer when they cross into the next: look again after
  // skip()); nullptr when none wait. They stay there until skip(n) takes the
  // first n of them, as pop_many would without the copy.
  const unsigned char* look(std::size_t max, std::size_t& n) {
    if (visible_ - consumed_ < max) visible_ = written_.load(std::memory_order_acquire);
    n = std::min<std::uint64_t>(max, visible_ - consumed_);
    if (n == 0) return nullptr;
    next_head_block();
    n = std::min(n, per_block_ - head_used_);
    return head_->data() + head_used_ * bytes_;
  }
  void skip(std::size_t n) {
    head_used_ += n;
    consumed_ += n;
    read_.store(consumed_, std::memory_order_seq_cst);  // see wait_for_room()
  }
  // Consumer side: the next `n` tokens copied, not taken (n <= size(): they
  // are visible). For a checkpoint's record of what is in flight.
  void peek(void* tokens, std::size_t n) const {
    auto* p = static_cast<unsigned char*>(tokens);
    const Block* b = head_;
    std::size_t used = head_used_;
    while (n > 0) {
      if (used == per_block_) {
        b = b->next.load(std::memory_order_acquire);
        used = 0;
      }
      const std::size_t k = std::min(n, per_block_ - used);
      std::memcpy(p, b->data() + used * bytes_, k * bytes_);
      used += k;
      p += k * bytes_;
      n -= k;
    }
  }
  // Tokens waiting (exact for the consumer; a lower bound for anyone else).
  std::size_t size() const { return written_.load(std::memory_order_acquire) - read_.load(std::memory_order_acquire); }
  // Closed and every token taken. Closed is read first: a token pushed
  // before close() is then seen by the size check.
  bool drained() const { return closed_.load(std::memory_order_acquire) && size() == 0; }
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  std::uint64_t pushed() const { return written_.load(std::memory_order_acquire); }
  // Tokens taken so far (read by anyone: pushed() read after it is at least as large).
  std::uint64_t popped() const { return read_.load(std::memory_order_acquire); }

 private:
  static constexpr std::size_t kBlockBytes = 32 << 10;
  static constexpr std::uint64_t kUnbounded = ~std::uint64_t{0};
  // 64-byte aligned, so tokens in place (reserve(), look()) are aligned for
  // every type whose size is the token size and alignment at most 64.
  struct alignas(64) Block {
    std::atomic<Block*> next{nullptr};
    unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
    const unsigned char* data() const { return reinterpret_cast<const unsigned char*>(this + 1); }
  };
  // Producer: a block with room at the tail (the last one, or a new one once it is full).
  void next_tail_block() {
    if (tail_used_ < per_block_) return;
    Block* b = new_block();
    tail_->next.store(b, std::memory_order_release);
    tail_ = b;
    tail_used_ = 0;
  }
  // Consumer: past the head block once it is read to its end (its tokens are then in the next).
  void next_head_block() {
    if (head_used_ < per_block_) return;
    Block* next = head_->next.load(std::memory_order_acquire);
    retire(head_);
    head_ = next;
    head_used_ = 0;
  }
  // The consumer hands its last emptied block back to the producer, which
  // takes it instead of a fresh one: a steady stream allocates nothing and
  // touches no new page (the allocator would hand back cold memory).
  Block* new_block() {
    if (Block* b = spare_.exchange(nullptr, std::memory_order_acquire)) {
      b->next.store(nullptr, std::memory_order_relaxed);
      return b;
    }
    return new (::operator new(sizeof(Block) + per_block_ * bytes_, std::align_val_t{alignof(Block)})) Block();
  }
  static void free_block(Block* b) { ::operator delete(b, std::align_val_t{alignof(Block)}); }
  void retire(Block* b) {
    if (Block* old = spare_.exchange(b, std::memory_order_acq_rel)) free_block(old);
  }

  const std::size_t bytes_, per_block_;
  std::atomic<Block*> spare_{nullptr};  // before tail_: the constructor's new_block() reads it
  // The producer's, then the consumer's, each on its own cache line.
  alignas(64) Block* tail_;
  std::size_t tail_used_ = 0;
  std::uint64_t produced_ = 0;
  alignas(64) std::atomic<std::uint64_t> written_{0};
  alignas(64) Block* head_;
  std::size_t head_used_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t visible_ = 0;  // the producer's count as last read
  alignas(64) std::atomic<std::uint64_t> read_{0};
  std::atomic<bool> closed_{false};
  alignas(64) std::atomic<std::uint64_t> capacity_{kUnbounded};
  std::atomic<bool> waiting_{false};  // the producer waits for room
};

}  // namespace redflow::stream
