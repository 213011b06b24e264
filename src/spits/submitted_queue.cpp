// The circular queue of submitted tasks (see submitted_queue.hpp).
#include "spits/submitted_queue.hpp"

namespace redflow::spits {

SubmittedQueue::Task& SubmittedQueue::add(std::uint64_t id, std::string bytes, std::uint64_t hash) {
  tasks_.push_back(Task{id, hash, std::move(bytes), 0, 0, {}, {}});
  auto it = std::prev(tasks_.end());
  index_[id] = it;
  return *it;
}

bool SubmittedQueue::Task::held_by(std::uint32_t tm) const {
  for (std::uint32_t h : holders)
    if (h == tm) return true;
  return false;
}

void SubmittedQueue::Task::release(std::uint32_t tm) {
  for (auto it = holders.begin(); it != holders.end(); ++it)
    if (*it == tm) {
      holders.erase(it);
      return;
    }
}

SubmittedQueue::Task* SubmittedQueue::next_resubmission(std::uint32_t tm) {
  for (std::size_t step = 0; step < tasks_.size(); ++step) {
    if (cursor_ == tasks_.end()) cursor_ = tasks_.begin();
    Task* t = &*cursor_;
    ++cursor_;
    // At most kMaxCopies copies at once (the original and one speculative
    // copy, as MapReduce's backup tasks), and a task with strikes is a
    // suspect: one copy at a time. So a task that crashes whatever runs it
    // takes down one Task Manager per strike (two before its first loss is
    // noticed), not every Task Manager the wrap reaches at once.
    if (!t->held_by(tm) && t->holders.size() < (t->strikes == 0 ? kMaxCopies : 1)) return t;
  }
  return nullptr;
}

SubmittedQueue::Task* SubmittedQueue::find(std::uint64_t id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &*it->second;
}

void SubmittedQueue::remove(std::uint64_t id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  if (cursor_ == it->second) ++cursor_;
  tasks_.erase(it->second);
  index_.erase(it);
}

}  // namespace redflow::spits
