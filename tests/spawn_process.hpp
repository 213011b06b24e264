// spawn_process: the one way the tests start a child program. Everything the
// child needs (argv) is built before fork, and the child only dups and
// execs: a child of a process with other threads running (a driver's I/O
// thread, ZeroMQ's) must not allocate, since a lock another thread held at
// the fork stays held in the child for good. Under ASan a child that
// allocated there hung now and then before its exec (seen in CI).
#pragma once

#include <unistd.h>

#include <string>
#include <vector>

namespace redflow::testing {

struct SpawnOptions {
  int out_fd = -1;           // the child's stdout, when >= 0 (open it O_CLOEXEC)
  int err_fd = -1;           // the child's stderr, when >= 0
  bool search_path = false;  // look argv[0] up in PATH (execvp)
  // The child leads a process group of its own (pgid = its pid), so that
  // kill(-pid, ...) reaches every process it started too.
  bool own_process_group = false;
};

// Starts argv[0] with `argv`; returns the child's pid (-1 if fork failed).
// A child whose exec fails exits with 127.
inline pid_t spawn_process(std::vector<std::string> argv, SpawnOptions options = {}) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (options.own_process_group) ::setpgid(0, 0);
    if (options.out_fd >= 0) ::dup2(options.out_fd, 1);
    if (options.err_fd >= 0) ::dup2(options.err_fd, 2);
    if (options.search_path) {
      ::execvp(args[0], args.data());
    } else {
      ::execv(args[0], args.data());
    }
    ::_exit(127);
  }
  return pid;
}

}  // namespace redflow::testing
