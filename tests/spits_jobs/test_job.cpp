// A SPITS job for the tests (tests/spits_*_test.cpp): tasks "P:I" for phase P,
// task I; commit_task appends the task's bytes and a newline to out=FILE, so a
// test sees every commit. Args make it misbehave on purpose:
//   tasks=N phases=P out=FILE    N tasks in each of P phases (P > 1 uses main)
//   poison=I     execute_task of task I returns an error, every time
//   throw=I      execute_task of task I throws
//   crash=I      execute_task of task I kills its process (SIGKILL), after work_us
//   slow=I:MS[,J:MS]  execute_task of task I sleeps MS ms (forces re-submission)
//   work_us=U    every execute_task sleeps U microseconds
//   fail_generate_at=I, fail_commit_at=I, fail_setup=1
//   salt_file=F  task bytes end with F's first line (change F between runs
//                to make generate_task non-deterministic)
// Built three times: as is, with SPITS_TEST_ABI=2 (a wrong ABI version) and
// with SPITS_TEST_NO_ENTRY (no entry point).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "redflow/spits.hpp"

#ifndef SPITS_TEST_ABI
#define SPITS_TEST_ABI REDFLOW_SPITS_ABI_VERSION
#endif

namespace {

constexpr long kNone = -1;

struct TestJob {
  long tasks = 10, phases = 1, poison = kNone, throw_at = kNone, crash = kNone, work_us = 0;
  std::map<long, long> slow_ms;  // task -> sleep
  long fail_generate_at = kNone, fail_commit_at = kNone;
  long phase = 0, next = 0, committed = 0;
  std::string salt;
  std::string path;  // out=FILE, opened at the first commit: setup also runs in
                     // every Task Manager, whose directory is not the job's
  int fd = -1;
};

long number(const std::string& v) { return std::stol(v); }

void* setup(int argc, const char* const* argv, redflow_spits_out* out) {
  auto* job = new TestJob();
  for (int i = 0; i < argc; ++i) {
    std::string w = argv[i];
    auto eq = w.find('=');
    std::string k = w.substr(0, eq), v = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (k == "tasks") job->tasks = number(v);
    else if (k == "phases") job->phases = number(v);
    else if (k == "out") job->path = v;
    else if (k == "poison") job->poison = number(v);
    else if (k == "throw") job->throw_at = number(v);
    else if (k == "crash") job->crash = number(v);
    else if (k == "slow") {
      for (std::size_t at = 0; at < v.size();) {
        std::size_t comma = v.find(',', at);
        std::string item = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        job->slow_ms[number(item.substr(0, item.find(':')))] = number(item.substr(item.find(':') + 1));
        at = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else if (k == "work_us") job->work_us = number(v);
    else if (k == "fail_generate_at") job->fail_generate_at = number(v);
    else if (k == "fail_commit_at") job->fail_commit_at = number(v);
    else if (k == "salt_file") {
      char buf[64] = {};
      int fd = ::open(v.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        ssize_t n = ::read(fd, buf, sizeof buf - 1);
        job->salt = ":" + std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
        ::close(fd);
      }
    } else if (k == "fail_setup") {
      out->error(out, "asked to fail (fail_setup)");
      delete job;
      return nullptr;
    }
  }
  return job;
}

int generate_task(void* j, redflow_spits_out* task) {
  auto* job = static_cast<TestJob*>(j);
  if (job->next == job->tasks) return REDFLOW_SPITS_DONE;
  if (job->next == job->fail_generate_at) {
    task->error(task, "asked to fail (fail_generate_at)");
    return REDFLOW_SPITS_ERROR;
  }
  std::string t = std::to_string(job->phase) + ":" + std::to_string(job->next++) + job->salt;
  task->write(task, t.data(), t.size());
  return REDFLOW_SPITS_TASK;
}

int execute_task(void* j, const void* task, size_t size, redflow_spits_out* result) {
  auto* job = static_cast<const TestJob*>(j);
  std::string t(static_cast<const char*>(task), size);
  long i = std::stol(t.substr(t.find(':') + 1));
  if (job->work_us) std::this_thread::sleep_for(std::chrono::microseconds(job->work_us));
  if (auto it = job->slow_ms.find(i); it != job->slow_ms.end()) std::this_thread::sleep_for(std::chrono::milliseconds(it->second));
  if (i == job->poison) {
    result->error(result, "task is poisoned (poison=)");
    return 1;
  }
  if (i == job->throw_at) throw std::runtime_error("task threw (throw=)");
  if (i == job->crash) ::kill(::getpid(), SIGKILL);
  std::string r = "r" + t;
  result->write(result, r.data(), r.size());
  return 0;
}

int commit_task(void* j, const void* task, size_t size, const void* result, size_t result_size, redflow_spits_out* out) {
  auto* job = static_cast<TestJob*>(j);
  std::string t(static_cast<const char*>(task), size);
  if (std::string(static_cast<const char*>(result), result_size) != "r" + t) {
    out->error(out, "result does not match its task");
    return 1;
  }
  if (job->committed++ == job->fail_commit_at) {
    out->error(out, "asked to fail (fail_commit_at)");
    return 1;
  }
  t += '\n';
  if (job->fd < 0 && !job->path.empty()) job->fd = ::open(job->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (!job->path.empty() && ::write(job->fd, t.data(), t.size()) != static_cast<ssize_t>(t.size())) return 1;
  return 0;
}

int teardown(void* j, int, redflow_spits_out*) {
  auto* job = static_cast<TestJob*>(j);
  if (job->fd >= 0) ::close(job->fd);
  delete job;
  return 0;
}

int main_fn(void* j, const redflow_spits_runner* runner, redflow_spits_out*) {
  auto* job = static_cast<TestJob*>(j);
  for (job->phase = 0; job->phase < job->phases; ++job->phase) {
    job->next = 0;
    if (int rc = runner->run_phase(runner, "phase")) return rc;
  }
  return 0;
}

redflow_spits_job make_table() {
  redflow_spits_job t{};
  t.abi_version = SPITS_TEST_ABI;
  t.name = "test_job";
  t.setup = setup;
  t.generate_task = generate_task;
  t.execute_task = execute_task;
  t.commit_task = commit_task;
  t.teardown = teardown;
  t.main = main_fn;
  return t;
}

const redflow_spits_job kJob = make_table();

}  // namespace

#ifndef SPITS_TEST_NO_ENTRY
extern "C" const redflow_spits_job* redflow_spits_job_v1(void) { return &kJob; }
#else
extern "C" const redflow_spits_job* some_other_symbol(void) { return &kJob; }
#endif
