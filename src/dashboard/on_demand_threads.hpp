// OnDemandThreads: the dashboard server's threads (an httplib TaskQueue).
// httplib's own ThreadPool starts all its threads up front; a dashboard
// nobody opens would hold them for the whole run, and each open page's event
// stream holds one as long as the page is open. This queue starts a thread
// only when a connection waits and every thread it has is busy, up to `max`;
// threads then stay for later connections until shutdown().
//
// Thread-safety: enqueue() and shutdown() may be called from any thread
// (httplib calls both from its listen loop); shutdown() runs the jobs
// already queued, then joins every thread.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace redflow::dashboard {

class OnDemandThreads final : public httplib::TaskQueue {
 public:
  explicit OnDemandThreads(std::size_t max) : max_(max) {}
  ~OnDemandThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < max_) threads_.emplace_back([this] { work(); });
    ready_.notify_one();
  }

  void shutdown() override {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      threads.swap(threads_);
    }
    ready_.notify_all();
    for (auto& t : threads) t.join();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left to run
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const std::size_t max_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace redflow::dashboard
