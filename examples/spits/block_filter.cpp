// A SPITS example job: a per-block moving-average filter of a file read as an
// 8-bit signal (docs/spits.md).
//
//   redflow spits libspits_block_filter.so in=SIGNAL out=FILTERED [block=4096] [radius=2]
//
// Task = a block number. execute_task reads its block plus `radius` samples
// either side from the input (pread: idempotent), filters it, and returns the
// filtered block; commit_task writes it at its place in the output file. The
// output is byte for byte the sequential filter of the whole file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "block_filter.hpp"
#include "job_args.hpp"
#include "redflow/spits.hpp"

namespace {

struct FilterJob {
  std::string in_path, out_path;
  std::uint64_t n = 0, block = 4096, radius = 2, next = 0;
  int out_fd = -1;
};

std::string errno_text() { return std::strerror(errno); }

void* setup(int argc, const char* const* argv, redflow_spits_out* out) {
  spits_example::JobArgs args;
  std::string error;
  auto* job = new FilterJob();
  if (args.parse(argc, argv, error)) {
    job->in_path = args.text("in");
    job->out_path = args.text("out");
    job->block = args.number("block", 4096, error);
    job->radius = args.number("radius", 2, error);
    if (error.empty() && (job->in_path.empty() || job->out_path.empty())) error = "needs in=FILE and out=FILE";
    if (error.empty() && job->block == 0) error = "block must be at least 1";
    if (error.empty() && job->radius > 1000) error = "radius must be at most 1000";
    if (error.empty() && !args.unknown().empty()) error = "unknown arg '" + args.unknown() + "' (known: in, out, block, radius)";
  }
  struct stat st;
  if (error.empty() && stat(job->in_path.c_str(), &st) != 0) error = "cannot read '" + job->in_path + "': " + errno_text();
  if (error.empty()) {
    job->n = static_cast<std::uint64_t>(st.st_size);
    // Not truncated to zero: a job resumed from its log keeps the blocks committed before.
    job->out_fd = ::open(job->out_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (job->out_fd < 0 || ftruncate(job->out_fd, static_cast<off_t>(job->n)) != 0)
      error = "cannot write '" + job->out_path + "': " + errno_text();
  }
  if (!error.empty()) {
    out->error(out, error.c_str());
    if (job->out_fd >= 0) ::close(job->out_fd);
    delete job;
    return nullptr;
  }
  return job;
}

int generate_task(void* j, redflow_spits_out* task) {
  auto* job = static_cast<FilterJob*>(j);
  if (job->next * job->block >= job->n) return REDFLOW_SPITS_DONE;
  std::uint64_t b = job->next++;
  task->write(task, &b, sizeof b);
  return REDFLOW_SPITS_TASK;
}

int execute_task(void* j, const void* task, size_t size, redflow_spits_out* result) {
  auto* job = static_cast<const FilterJob*>(j);
  std::uint64_t b;
  if (size != sizeof b) {
    result->error(result, "task is not 8 bytes");
    return 1;
  }
  std::memcpy(&b, task, sizeof b);
  std::uint64_t begin = b * job->block, end = std::min(job->n, begin + job->block);
  std::uint64_t wb = begin >= job->radius ? begin - job->radius : 0, we = std::min(job->n, end + job->radius);
  std::vector<std::uint8_t> window(we - wb), y(end - begin);
  int fd = ::open(job->in_path.c_str(), O_RDONLY | O_CLOEXEC);
  ssize_t got = fd < 0 ? -1 : pread(fd, window.data(), window.size(), static_cast<off_t>(wb));
  if (fd >= 0) ::close(fd);
  if (got != static_cast<ssize_t>(window.size())) {
    result->error(result, ("cannot read '" + job->in_path + "'").c_str());
    return 1;
  }
  spits_example::smooth(window.data(), wb, job->n, begin, end, static_cast<unsigned>(job->radius), y.data());
  result->write(result, y.data(), y.size());
  return 0;
}

int commit_task(void* j, const void* task, size_t, const void* result, size_t result_size, redflow_spits_out* out) {
  auto* job = static_cast<FilterJob*>(j);
  std::uint64_t b;
  std::memcpy(&b, task, sizeof b);
  if (pwrite(job->out_fd, result, result_size, static_cast<off_t>(b * job->block)) != static_cast<ssize_t>(result_size)) {
    out->error(out, ("cannot write '" + job->out_path + "': " + errno_text()).c_str());
    return 1;
  }
  return 0;
}

int teardown(void* j, int completed, redflow_spits_out* out) {
  auto* job = static_cast<FilterJob*>(j);
  int rc = 0;
  if (completed && fsync(job->out_fd) != 0) {
    out->error(out, ("fsync '" + job->out_path + "': " + errno_text()).c_str());
    rc = 1;
  }
  ::close(job->out_fd);
  delete job;
  return rc;
}

const redflow_spits_job kJob = {REDFLOW_SPITS_ABI_VERSION, "block_filter", setup, generate_task, execute_task, commit_task, teardown,
                                nullptr, nullptr};

}  // namespace

extern "C" const redflow_spits_job* redflow_spits_job_v1(void) { return &kJob; }
