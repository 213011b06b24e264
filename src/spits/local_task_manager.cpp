// The embedded Task Manager's Workers (see local_task_manager.hpp).
#include "spits/local_task_manager.hpp"

namespace redflow::spits {

LocalTaskManager::LocalTaskManager(std::string name, const JobPlugin& job, unsigned workers, unsigned capacity, Wakeup& wakeup)
    : name_(std::move(name)), job_(job), capacity_(capacity), wakeup_(wakeup) {
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

LocalTaskManager::~LocalTaskManager() { stop(); }

std::size_t LocalTaskManager::room() const {
  std::size_t held = held_.load(std::memory_order_acquire);
  return held >= capacity_ ? 0 : capacity_ - held;
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

void LocalTaskManager::work() {
  OutBuffer out;
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    TaskMessage task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status s = job_.execute(task.bytes, out);
    ResultMessage r;
    r.id = task.id;
    if (s.ok()) r.bytes.swap(out.bytes());
    else {
      r.outcome = ResultMessage::Outcome::kFailed;
      r.bytes = s.message();
    }
    lock.lock();
    results_.push_back(std::move(r));
    held_.fetch_sub(1, std::memory_order_acq_rel);
    lock.unlock();
    wakeup_.notify();
    lock.lock();
  }
}

}  // namespace redflow::spits
