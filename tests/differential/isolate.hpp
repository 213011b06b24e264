// ChildRun: one case running in a forked child process, watched by the
// parent. The child sends its Verdict back through a pipe; the parent kills
// it when it passes its time limit (a hang) and reports a death by signal or
// a non-zero exit (a crash, a sanitizer report) as a verdict of its own.
// Several ChildRuns may be in flight at once (redflow difftest --jobs).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "runner.hpp"

namespace redflow::difftest {

class ChildRun {
 public:
  // Forks; the child runs run_case(c, reg) and exits.
  ChildRun(const Case& c, const Registry& reg, double timeout_s);
  ~ChildRun();
  ChildRun(const ChildRun&) = delete;
  ChildRun& operator=(const ChildRun&) = delete;

  int fd() const { return fd_; }
  // Reads what the child wrote so far and checks the time limit; true once the verdict is known.
  bool poll();
  const Verdict& verdict() const { return verdict_; }

 private:
  void finish();
  pid_t pid_ = -1;
  int fd_ = -1;
  bool done_ = false;
  std::string buffer_;
  std::chrono::steady_clock::time_point deadline_;
  double timeout_s_;
  Verdict verdict_;
};

// Waits until at least one of `runs` can make progress (or `ms` pass).
void wait_for_any(const std::vector<ChildRun*>& runs, int ms);

}  // namespace redflow::difftest
