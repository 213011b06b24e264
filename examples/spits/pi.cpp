// A SPITS example job: Monte Carlo estimate of pi (docs/spits.md).
//
//   redflow spits libspits_pi.so tasks=1000 samples=100000 out=pi.txt [seed=1]
//
// Task i throws `samples` darts with its own seed; its result is how many fell
// inside the quarter circle. commit_task appends "i hits samples" to the out
// file (non-idempotent on purpose: a task committed twice shows as a repeated
// line), and teardown reads that file back to print the estimate, so a job
// resumed from a commit log still counts every task once. A job run again
// without its log commits every task again: at the first task the file
// already holds, the file is started over with this run's lines, so a rerun
// prints the same estimate from the same number of tasks.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "job_args.hpp"
#include "redflow/spits.hpp"

namespace {

struct PiJob {
  std::uint64_t tasks = 0, samples = 0, seed = 1, next = 0;
  std::string out_path;
  int out_fd = -1;
  std::set<std::uint64_t> on_file;  // was_committed's view of the out file, read once
  bool on_file_read = false;
  // The Job Manager's commits: the tasks the file held before the first one,
  // and the lines this process wrote since.
  std::set<std::uint64_t> earlier;
  bool earlier_read = false;
  std::string written;
};

std::set<std::uint64_t> tasks_on_file(const std::string& path) {
  std::set<std::uint64_t> tasks;
  std::ifstream in(path);
  std::uint64_t i, h, s;
  while (in >> i >> h >> s) tasks.insert(i);
  return tasks;
}

bool write_whole(int fd, const char* text, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, text, n);
    if (w <= 0) return false;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void* setup(int argc, const char* const* argv, redflow_spits_out* out) {
  spits_example::JobArgs args;
  std::string error;
  auto* job = new PiJob();
  if (args.parse(argc, argv, error)) {
    job->tasks = args.number("tasks", 100, error);
    job->samples = args.number("samples", 100000, error);
    job->seed = args.number("seed", 1, error);
    job->out_path = args.text("out");
    if (error.empty() && job->out_path.empty()) error = "needs out=FILE (one line per committed task)";
    if (error.empty() && !args.unknown().empty()) error = "unknown arg '" + args.unknown() + "' (known: tasks, samples, seed, out)";
  }
  if (error.empty()) {
    // O_APPEND, never truncated: a resumed job keeps the lines of earlier runs.
    job->out_fd = ::open(job->out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (job->out_fd < 0) error = "cannot open '" + job->out_path + "': " + std::strerror(errno);
  }
  if (!error.empty()) {
    out->error(out, error.c_str());
    delete job;
    return nullptr;
  }
  return job;
}

int generate_task(void* j, redflow_spits_out* task) {
  auto* job = static_cast<PiJob*>(j);
  if (job->next == job->tasks) return REDFLOW_SPITS_DONE;
  std::uint64_t i = job->next++;
  task->write(task, &i, sizeof i);
  return REDFLOW_SPITS_TASK;
}

int execute_task(void* j, const void* task, size_t size, redflow_spits_out* result) {
  auto* job = static_cast<const PiJob*>(j);
  if (size != sizeof(std::uint64_t)) {
    result->error(result, "task is not 8 bytes");
    return 1;
  }
  std::uint64_t i;
  std::memcpy(&i, task, sizeof i);
  std::uint64_t state = job->seed * 0x100000001b3ull + i, hits = 0;
  for (std::uint64_t s = 0; s < job->samples; ++s) {
    double x = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    double y = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    hits += x * x + y * y <= 1.0;
  }
  result->write(result, &hits, sizeof hits);
  return 0;
}

int commit_task(void* j, const void* task, size_t, const void* result, size_t, redflow_spits_out* out) {
  auto* job = static_cast<PiJob*>(j);
  std::uint64_t i, hits;
  std::memcpy(&i, task, sizeof i);
  std::memcpy(&hits, result, sizeof hits);
  char line[80];
  int n = std::snprintf(line, sizeof line, "%llu %llu %llu\n", static_cast<unsigned long long>(i), static_cast<unsigned long long>(hits),
                        static_cast<unsigned long long>(job->samples));
  if (!job->earlier_read) {
    job->earlier = tasks_on_file(job->out_path);
    job->earlier_read = true;
  }
  if (job->earlier.count(i)) {
    // An earlier run's lines (a resumed job never commits a task the file
    // holds: its log skips it, or was_committed finds it): start over.
    job->earlier.clear();
    if (::ftruncate(job->out_fd, 0) != 0 || !write_whole(job->out_fd, job->written.data(), job->written.size())) {
      out->error(out, (job->out_path + ": cannot start it over: " + std::strerror(errno)).c_str());
      return 1;
    }
  }
  // One write(2) per line: a kill leaves the line whole or absent.
  if (::write(job->out_fd, line, static_cast<size_t>(n)) != n) {
    out->error(out, (job->out_path + ": write failed").c_str());
    return 1;
  }
  job->written.append(line, static_cast<std::size_t>(n));
  return 0;
}

int was_committed(void* j, const void* task, size_t) {
  auto* job = static_cast<PiJob*>(j);
  if (!job->on_file_read) {
    job->on_file = tasks_on_file(job->out_path);
    job->on_file_read = true;
  }
  std::uint64_t i;
  std::memcpy(&i, task, sizeof i);
  return job->on_file.count(i) ? 1 : 0;
}

int teardown(void* j, int completed, redflow_spits_out*) {
  auto* job = static_cast<PiJob*>(j);
  if (completed) {
    std::ifstream in(job->out_path);
    std::uint64_t i, h, s, hits = 0, samples = 0, lines = 0;
    while (in >> i >> h >> s) {
      hits += h;
      samples += s;
      ++lines;
    }
    if (samples) std::printf("pi ~= %.6f from %llu tasks, %llu samples\n", 4.0 * static_cast<double>(hits) / static_cast<double>(samples),
                             static_cast<unsigned long long>(lines), static_cast<unsigned long long>(samples));
  }
  ::close(job->out_fd);
  delete job;
  return 0;
}

const redflow_spits_job kJob = {REDFLOW_SPITS_ABI_VERSION, "pi", setup, generate_task, execute_task, commit_task, teardown, nullptr,
                                was_committed};

}  // namespace

extern "C" const redflow_spits_job* redflow_spits_job_v1(void) { return &kJob; }
