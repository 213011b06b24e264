// TileLoop (tile_loop.hpp): chunks claimed by whoever is running.
#include "runtime/tile_loop.hpp"

#include <algorithm>

namespace redflow::runtime {

TileLoop::TileLoop(unsigned cores, Helpers helpers) : cores_(cores == 0 ? 1 : cores) {
  held_.store(helpers == Helpers::kHeld, std::memory_order_relaxed);
  for (unsigned i = 1; i < cores_; ++i) helpers_.emplace_back([this] { helper(); });
}

TileLoop::~TileLoop() {
  stop_.store(true);
  release_helpers();  // wakes every helper, held or not, to see stop_
  for (auto& t : helpers_) t.join();
}

void TileLoop::release_helpers() {
  held_.store(false);
  epoch_.fetch_add(1);
  epoch_.notify_all();
}

void TileLoop::run(std::size_t begin, std::size_t end, void (*chunk)(void*, std::size_t, std::size_t), void* closure) {
  const std::size_t n = end - begin;
  const auto parts = static_cast<std::uint32_t>(std::min<std::size_t>(cores_, n));
  if (parts <= 1) {
    chunk(closure, begin, end);
    return;
  }
  begin_ = begin;
  end_ = end;
  parts_ = parts;
  chunk_ = chunk;
  closure_ = closure;
  done_.store(0, std::memory_order_relaxed);
  unclaimed_.store(parts, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_release);
  epoch_.notify_all();
  for (std::int64_t part; (part = claim()) >= 0;) run_part(static_cast<std::size_t>(part));
  // Only chunks a helper claimed are left: it is running them. Chunks are
  // even, so it finishes about when this thread did: spin briefly, then sleep.
  std::uint32_t d = done_.load(std::memory_order_acquire);
  for (int spin = 0; spin < 4096 && d != parts; ++spin) d = done_.load(std::memory_order_acquire);
  while (d != parts) {
    done_.wait(d, std::memory_order_acquire);
    d = done_.load(std::memory_order_acquire);
  }
}

std::int64_t TileLoop::claim() {
  std::uint32_t c = unclaimed_.load(std::memory_order_acquire);
  while (c != 0) {
    if (unclaimed_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel, std::memory_order_acquire)) return static_cast<std::int64_t>(c) - 1;
  }
  return -1;
}

void TileLoop::run_part(std::size_t part) {
  // Read before the chunk is counted: once every chunk is, run() returns and
  // the next loop may overwrite these.
  const std::size_t n = end_ - begin_, b = begin_ + n * part / parts_, e = begin_ + n * (part + 1) / parts_;
  const std::uint32_t parts = parts_;
  chunk_(closure_, b, e);
  if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) done_.notify_one();
}

void TileLoop::helper() {
  std::uint32_t seen = 0;
  for (;;) {
    epoch_.wait(seen, std::memory_order_acquire);
    seen = epoch_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    if (held_.load(std::memory_order_acquire)) continue;
    for (std::int64_t part; (part = claim()) >= 0;) run_part(static_cast<std::size_t>(part));
  }
}

}  // namespace redflow::runtime
