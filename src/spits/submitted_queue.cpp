// The circular queue of submitted tasks (see submitted_queue.hpp).
#include "spits/submitted_queue.hpp"

namespace redflow::spits {

SubmittedQueue::Task& SubmittedQueue::add(std::uint64_t id, std::string bytes, std::uint64_t hash) {
  tasks_.push_back(Task{id, hash, std::move(bytes), 0, 0, {}});
  auto it = std::prev(tasks_.end());
  index_[id] = it;
  return *it;
}

SubmittedQueue::Task* SubmittedQueue::next_resubmission() {
  if (tasks_.empty()) return nullptr;
  if (cursor_ == tasks_.end()) cursor_ = tasks_.begin();
  Task* t = &*cursor_;
  ++cursor_;
  return t;
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
