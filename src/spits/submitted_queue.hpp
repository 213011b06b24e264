// SubmittedQueue: PY-PITS's circular queue of submitted tasks (section IV.B).
// A task joins at the back when generated and submitted, and leaves only when
// committed (or set aside as poisoned). Once generation is over the Job
// Manager walks the queue round and round, re-submitting what is still in it:
// one mechanism for dead Task Managers, silent ones and stragglers.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

namespace redflow::spits {

class SubmittedQueue {
 public:
  struct Task {
    std::uint64_t id = 0;
    std::uint64_t hash = 0;
    std::string bytes;
    unsigned submissions = 0;
    unsigned strikes = 0;
    std::string last_error;
  };

  Task& add(std::uint64_t id, std::string bytes, std::uint64_t hash);
  // The next task as the queue wraps around; nullptr when it is empty.
  Task* next_resubmission();
  Task* find(std::uint64_t id);
  void remove(std::uint64_t id);
  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }

 private:
  std::list<Task> tasks_;
  std::unordered_map<std::uint64_t, std::list<Task>::iterator> index_;
  std::list<Task>::iterator cursor_ = tasks_.end();
};

}  // namespace redflow::spits
