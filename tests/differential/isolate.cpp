// Child processes for cases (isolate.hpp). The verdict crosses the pipe as
// text: one field per line, the detail last.
#include "isolate.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

namespace redflow::difftest {

namespace {

std::string encode(const Verdict& v) {
  std::string detail = v.detail.substr(0, 4000);
  for (char& ch : detail)
    if (ch == '\n') ch = ' ';
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", static_cast<int>(v.outcome), v.step, v.steps, v.silent_none, v.gave_up,
                     v.double_faults, v.failed_on_purpose, v.skipped, v.stopped, detail);
}

bool decode(const std::string& text, Verdict& v) {
  std::istringstream in(text);
  int outcome = 0;
  if (!(in >> outcome >> v.step >> v.steps >> v.silent_none >> v.gave_up >> v.double_faults >> v.failed_on_purpose >> v.skipped >> v.stopped)) return false;
  v.outcome = static_cast<Outcome>(outcome);
  in.get();
  std::getline(in, v.detail);
  return true;
}

void write_all(int fd, const std::string& s) {
  std::size_t at = 0;
  while (at < s.size()) {
    const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

}  // namespace

ChildRun::ChildRun(const Case& c, const Registry& reg, double timeout_s) : timeout_s_(timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) {
    verdict_ = {Outcome::kCrash, -1, std::string("cannot create a pipe: ") + std::strerror(errno)};
    done_ = true;
    return;
  }
  deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[0]);
    const Verdict v = run_case(c, reg);
    write_all(fds[1], encode(v));
    ::close(fds[1]);
    ::_exit(0);  // no destructors or atexit handlers of the parent's state
  }
  ::close(fds[1]);
  fd_ = fds[0];
  if (pid_ < 0) {
    verdict_ = {Outcome::kCrash, -1, std::string("cannot fork: ") + std::strerror(errno)};
    done_ = true;
  }
}

ChildRun::~ChildRun() {
  if (!done_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool ChildRun::poll() {
  if (done_) return true;
  char buf[4096];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) {  // end of file: the child has exited or is exiting
      finish();
      return true;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
  if (std::chrono::steady_clock::now() >= deadline_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    done_ = true;
    verdict_ = {Outcome::kHang, -1, fmt::format("the case did not finish within {} s (execute() never returned)", timeout_s_)};
  }
  return done_;
}

void ChildRun::finish() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  done_ = true;
  if (WIFSIGNALED(status)) {
    verdict_ = {Outcome::kCrash, -1, fmt::format("the child died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))};
  } else if (WEXITSTATUS(status) != 0 || !decode(buffer_, verdict_)) {
    verdict_ = {Outcome::kCrash, -1, fmt::format("the child exited with code {} without a verdict (a sanitizer report?)", WEXITSTATUS(status))};
  }
}

void wait_for_any(const std::vector<ChildRun*>& runs, int ms) {
  std::vector<pollfd> fds;
  for (ChildRun* r : runs)
    if (r->fd() >= 0) fds.push_back({r->fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), ms);
}

Verdict run_isolated(const Case& c, const Registry& reg, double timeout_s) {
  ChildRun run(c, reg, timeout_s);
  while (!run.poll()) wait_for_any({&run}, 100);
  return run.verdict();
}

}  // namespace redflow::difftest
