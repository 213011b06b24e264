// The embedded Task Manager's Workers (see local_task_manager.hpp).
#include "spits/local_task_manager.hpp"

#include <algorithm>
#include <chrono>

namespace redflow::spits {

LocalTaskManager::LocalTaskManager(std::string name, const JobPlugin& job, unsigned workers, unsigned prefetch, bool adaptive,
                                   Wakeup& wakeup)
    : name_(std::move(name)), job_(job), workers_(std::max(1u, workers)), prefetch_(prefetch), adaptive_(adaptive), wakeup_(wakeup) {
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

LocalTaskManager::~LocalTaskManager() { stop(); }

std::size_t LocalTaskManager::capacity() const {
  std::size_t margin = prefetch_;
  if (std::uint64_t ns = adaptive_ ? ns_per_task_.load(std::memory_order_relaxed) : 0)
    margin = std::clamp<std::size_t>(workers_ * kQueueMs * 1000000 / ns, prefetch_, std::max<std::size_t>(prefetch_, kMaxPrefetch));
  return workers_ + margin;
}

std::size_t LocalTaskManager::room() const {
  const std::size_t cap = capacity();
  const std::size_t held = held_.load(std::memory_order_acquire);
  return held >= cap ? 0 : cap - held;
}

void LocalTaskManager::push(std::vector<TaskMessage>& tasks) {
  if (tasks.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (auto& t : tasks) queue_.push_back(std::move(t));
    held_.fetch_add(tasks.size(), std::memory_order_acq_rel);
  }
  if (tasks.size() == 1) ready_.notify_one();
  else ready_.notify_all();
  tasks.clear();
}

std::size_t LocalTaskManager::pull(std::vector<ResultMessage>& out) {
  std::lock_guard lock(mutex_);
  std::size_t n = results_.size();
  if (out.empty()) out.swap(results_);
  else {
    for (auto& r : results_) out.push_back(std::move(r));
    results_.clear();
  }
  return n;
}

void LocalTaskManager::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

std::uint64_t LocalTaskManager::mean_ns_per_task() const {
  const std::uint64_t n = executed_.load(std::memory_order_relaxed);
  return n == 0 ? 0 : busy_ns_.load(std::memory_order_relaxed) / n;
}

void LocalTaskManager::work() {
  // A Worker takes its share of the queue at once and hands its results back
  // together: one lock and one wake-up per batch, not per task, which is what
  // keeps trivial tasks cheap.
  OutBuffer out;
  std::vector<TaskMessage> mine;
  std::vector<ResultMessage> done;
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    // Its share of the queue, but no more than ~kBatchUs of work, so a batch
    // of long tasks never sits behind one Worker while another idles.
    std::uint64_t ns = ns_per_task_.load(std::memory_order_relaxed);
    std::size_t take = std::max<std::size_t>(1, queue_.size() / workers_);
    take = std::min<std::size_t>(take, ns ? std::max<std::uint64_t>(1, kBatchUs * 1000 / ns) : 1);
    for (std::size_t i = 0; i < take; ++i) {
      mine.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    for (TaskMessage& task : mine) {
      if (stopping_.load(std::memory_order_relaxed)) break;  // the job is over: the rest is not needed
      Status s = job_.execute(task.bytes, out);
      ResultMessage& r = done.emplace_back();
      r.id = task.id;
      if (s.ok()) r.bytes.swap(out.bytes());
      else {
        r.outcome = ResultMessage::Outcome::kFailed;
        r.bytes = s.message();
      }
    }
    if (!done.empty()) {
      auto ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
      std::uint64_t per = std::max<std::uint64_t>(1, ns / done.size()), old = ns_per_task_.load(std::memory_order_relaxed);
      ns_per_task_.store(old ? (old * 7 + per) / 8 : per, std::memory_order_relaxed);
      busy_ns_.fetch_add(ns, std::memory_order_relaxed);
      executed_.fetch_add(done.size(), std::memory_order_relaxed);
    }
    lock.lock();
    for (ResultMessage& r : done) results_.push_back(std::move(r));
    held_.fetch_sub(mine.size(), std::memory_order_acq_rel);
    mine.clear();
    done.clear();
    lock.unlock();
    wakeup_.notify();
    lock.lock();
  }
}

}  // namespace redflow::spits
