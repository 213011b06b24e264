// TaskManager: the seam between the Job Manager/Committer and whoever runs
// tasks. The Job Manager pushes tasks into a Task Manager's queue (never more
// than room() allows: its Workers plus a prefetch margin) and the Committer
// pulls whatever results are ready. The embedded LocalTaskManager runs W
// Worker threads in this process; RemoteTaskManager (task_manager_link.hpp)
// implements the same calls over src/net/'s transport, and hands back the
// tasks a lost Task Manager held as kLost (running: a strike) or kReturned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace redflow::spits {

struct TaskMessage {
  std::uint64_t id = 0;
  std::string bytes;
};

struct ResultMessage {
  enum class Outcome : std::uint8_t {
    kOk,      // `bytes` is the result
    kFailed,  // execute_task failed or threw: a strike; `bytes` says why
    kLost,    // the Task Manager died or was cut off while running the task: a strike
    kReturned,  // the Task Manager went away with the task still queued, not begun: no strike
  };
  std::uint64_t id = 0;
  Outcome outcome = Outcome::kOk;
  std::string bytes;
};

// Wakes the Job Manager when a Task Manager has results (or room) for it.
class Wakeup {
 public:
  virtual ~Wakeup() = default;
  virtual void notify() = 0;
};

class TaskManager {
 public:
  virtual ~TaskManager() = default;
  virtual const std::string& name() const = 0;
  virtual unsigned workers() const = 0;
  // How many more tasks its queue takes now.
  virtual std::size_t room() const = 0;
  // Takes the tasks (at most room()).
  virtual void push(std::vector<TaskMessage>& tasks) = 0;
  // Appends every result ready now to `out`; returns how many.
  virtual std::size_t pull(std::vector<ResultMessage>& out) = 0;
  // Its Workers' time inside execute_task per task, in seconds, over the
  // tasks executed so far (0 before the first): the T of SPITS's model.
  virtual double task_s() const = 0;
  // Times it was declared lost (silent, cut off, dead) so far.
  virtual std::uint64_t losses() const { return 0; }
  // Stops its Workers; tasks still queued are dropped (they stay in the
  // circular queue, so nothing is lost).
  virtual void stop() = 0;
};

}  // namespace redflow::spits
