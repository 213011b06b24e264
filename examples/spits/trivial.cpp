// A SPITS example job of trivial tasks, for measuring the runtime's own cost
// per task (bench/spits_throughput.cpp, docs/spits.md):
//
//   redflow spits libspits_trivial.so tasks=1000000 --local-workers 2
//   redflow spits libspits_trivial.so tasks=2000 sleep_us=50000 bytes=65536 --announce-dir DIR   (bench/spits_net.sh)
//
// sleep_us=U makes each execute_task sleep U microseconds and bytes=S pads
// each task to S bytes: tasks of a duration and a size, for the paper's
// Fig. 1 and Fig. 2 experiments.
// Task i is its 8-byte number; execute_task returns i * i; commit_task adds
// the result to a sum that teardown prints, so a lost or doubled commit shows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "job_args.hpp"
#include "redflow/spits.hpp"

namespace {

struct TrivialJob {
  std::uint64_t tasks = 0, next = 0, sum = 0, commits = 0, sleep_us = 0, bytes = 8;
  bool quiet = false;
};

void* setup(int argc, const char* const* argv, redflow_spits_out* out) {
  spits_example::JobArgs args;
  std::string error;
  auto* job = new TrivialJob();
  if (args.parse(argc, argv, error)) {
    job->tasks = args.number("tasks", 1000, error);
    job->quiet = args.number("quiet", 0, error) != 0;
    job->sleep_us = args.number("sleep_us", 0, error);
    job->bytes = std::max<std::uint64_t>(8, args.number("bytes", 8, error));
    if (error.empty() && !args.unknown().empty()) error = "unknown arg '" + args.unknown() + "' (known: tasks, quiet, sleep_us, bytes)";
  }
  if (!error.empty()) {
    out->error(out, error.c_str());
    delete job;
    return nullptr;
  }
  return job;
}

int generate_task(void* j, redflow_spits_out* task) {
  auto* job = static_cast<TrivialJob*>(j);
  if (job->next == job->tasks) return REDFLOW_SPITS_DONE;
  std::uint64_t i = job->next++;
  task->write(task, &i, sizeof i);
  if (job->bytes > sizeof i) {
    static const std::string padding(1 << 20, '\0');
    for (std::uint64_t left = job->bytes - sizeof i; left > 0;) {
      const std::uint64_t n = std::min<std::uint64_t>(left, padding.size());
      task->write(task, padding.data(), n);
      left -= n;
    }
  }
  return REDFLOW_SPITS_TASK;
}

int execute_task(void* j, const void* task, size_t size, redflow_spits_out* result) {
  if (const std::uint64_t us = static_cast<const TrivialJob*>(j)->sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(us));
  std::uint64_t i = 0;
  std::memcpy(&i, task, size < sizeof i ? size : sizeof i);
  i *= i;
  result->write(result, &i, sizeof i);
  return 0;
}

int commit_task(void* j, const void*, size_t, const void* result, size_t, redflow_spits_out*) {
  auto* job = static_cast<TrivialJob*>(j);
  std::uint64_t r;
  std::memcpy(&r, result, sizeof r);
  job->sum += r;
  ++job->commits;
  return 0;
}

int teardown(void* j, int completed, redflow_spits_out* out) {
  auto* job = static_cast<TrivialJob*>(j);
  // sum of i*i for i < n, modulo 2^64, as a check on exactly-once commits.
  std::uint64_t want = 0;
  for (std::uint64_t i = 0; i < job->tasks; ++i) want += i * i;
  int rc = 0;
  if (completed && (job->sum != want || job->commits != job->tasks)) {
    out->error(out, "sum of results is wrong: a task was lost or committed twice");
    rc = 1;
  } else if (completed && !job->quiet) {
    std::printf("trivial: %llu commits, sum %llu (expected)\n", static_cast<unsigned long long>(job->commits),
                static_cast<unsigned long long>(job->sum));
  }
  delete job;
  return rc;
}

const redflow_spits_job kJob = {REDFLOW_SPITS_ABI_VERSION, "trivial", setup, generate_task, execute_task, commit_task, teardown, nullptr,
                                nullptr};

}  // namespace

extern "C" const redflow_spits_job* redflow_spits_job_v1(void) { return &kJob; }
