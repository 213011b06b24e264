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
#include <vector>

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
    // Task Managers holding a copy now (one entry per copy pushed, removed
    // when its result or loss comes back). A Task Manager is not sent a task
    // it already holds: another copy there would only queue behind the first.
    std::vector<std::uint32_t> holders;
    bool held_by(std::uint32_t tm) const;
    void release(std::uint32_t tm);
  };

  Task& add(std::uint64_t id, std::string bytes, std::uint64_t hash);
  // The next task as the queue wraps around that Task Manager `tm` does not
  // hold and that runs in fewer than kMaxCopies places (a task with strikes:
  // in none); nullptr when there is none (one lap at most).
  static constexpr std::size_t kMaxCopies = 2;
  Task* next_resubmission(std::uint32_t tm);
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
