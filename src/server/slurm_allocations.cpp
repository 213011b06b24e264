// SlurmAllocations (slurm_allocations.hpp): sbatch, squeue and scancel as
// child processes the server's loop polls.
#include "server/slurm_allocations.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "server/job_files.hpp"

namespace redflow::server {

namespace {

namespace fs = std::filesystem;

// `name` found on PATH, or "".
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// `s` as one word for sh, in single quotes.
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// The batch script of one allocation: one worker per task. The values go
// to the tasks' shell as its positional parameters ($0 ...), quoted once.
std::string batch_script(const std::string& exe, const std::string& endpoint, double idle_s, const std::string& key_dir,
                         const std::string& server_key_file) {
  std::string keys, key_args;
  if (!key_dir.empty()) {
    std::string pub = server_key_file;
    if (pub.size() >= 4 && pub.compare(pub.size() - 4, 4, ".key") == 0) pub.resize(pub.size() - 4);
    pub += ".pub";
    keys = R"( --key "$3/$(hostname).key" --server-key "$4")";
    key_args = " " + sh_quote(key_dir) + " " + sh_quote(pub);
  }
  return fmt::format(
      "#!/bin/sh\n"
      "# Written by `redflow server --slurm-workers`: the workers of one allocation,\n"
      "# one `redflow worker --persist` per task, each named HOST:PID/slurm-JOBID so\n"
      "# the server knows which allocation it came from. Each leaves after {:g} s\n"
      "# without a job; the allocation ends with the last.\n"
      "exec srun sh -c 'exec \"$0\" worker --connect \"$1\" --persist --idle-timeout \"$2\" "
      "--name \"$(hostname):$$/slurm-$SLURM_JOB_ID\"{}' {} {} {:g}{}\n",
      idle_s, keys, sh_quote(exe), sh_quote(endpoint), idle_s, key_args);
}

}  // namespace

std::string allocation_job_name(const std::string& workers_endpoint) {
  std::uint32_t h = 2166136261u;  // FNV-1a: stable across builds and restarts
  for (unsigned char c : workers_endpoint) h = (h ^ c) * 16777619u;
  return fmt::format("redflow-workers-{:08x}", h);
}

Result<std::unique_ptr<SlurmAllocations>> SlurmAllocations::open(const SlurmOptions& options, const std::string& dir, const std::string& exe,
                                                                 const std::string& endpoint, const std::string& server_key_file) {
  std::unique_ptr<SlurmAllocations> s(new SlurmAllocations(options, dir));
  for (auto [tool, path] : {std::pair{"sbatch", &s->sbatch_}, std::pair{"squeue", &s->squeue_}, std::pair{"scancel", &s->scancel_}}) {
    *path = on_path(tool);
    if (path->empty())
      return Status::InvalidArgument(fmt::format("--slurm-workers: {} is not on PATH (the server asks Slurm for workers with sbatch, "
                                                 "squeue and scancel; Debian: apt-get install slurm-client)",
                                                 tool));
  }
  if (!options.key_dir.empty() && server_key_file.empty())
    return Status::InvalidArgument("--slurm-worker-keys: the server has no --key; its workers' keys are for a server that has one");
  s->script_ = (fs::path(dir) / "slurm-workers.sh").string();
  {
    std::ofstream out(s->script_, std::ios::trunc);
    out << batch_script(exe, endpoint, options.worker_idle_s, options.key_dir, server_key_file);
    if (!out) return Status::IOError("cannot write the workers' batch script " + s->script_);
  }
  ::chmod(s->script_.c_str(), 0755);
  s->job_name_ = allocation_job_name(endpoint);
  spdlog::info("server: asking Slurm for workers when jobs wait: {} (allocations named {}, script {})", s->allocator_.summary(0),
               s->job_name_, s->script_);
  return s;
}

SlurmAllocations::~SlurmAllocations() {
  if (command_) command_->process.stop(0);
}

void SlurmAllocations::stop(double now_s) {
  // Each step waits for its command (at most the command timeout) and takes
  // its result: an sbatch in flight may already have made an allocation.
  auto finish_now = [&] {
    int exit_status = 0;
    std::string message;
    while (command_ && !command_->process.ended(exit_status, message)) {
      if (now_s >= command_->deadline_s) command_->process.stop(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      now_s += 0.01;
    }
    if (command_) finish(exit_status, message, now_s);
  };
  finish_now();
  // What Slurm has of this server's now, whether or not this server heard of it.
  start(Kind::kList, {squeue_, "--noheader", "--name=" + job_name_, "--format=%i %T"}, now_s);
  finish_now();
  std::vector<std::string> argv = {scancel_};
  for (const auto& a : allocator_.allocations(now_s))
    if (a.state == "queued" && a.why.empty()) argv.push_back(a.id);
  if (argv.size() == 1) return;
  spdlog::info("server: stopping: cancelling the Slurm allocation(s) still queued: {}", fmt::join(argv.begin() + 1, argv.end(), " "));
  start(Kind::kCancel, argv, now_s);
  finish_now();
}

void SlurmAllocations::start(Kind kind, std::vector<std::string> argv, double now_s) {
  const std::string out = (fs::path(dir_) / "slurm-command.out").string();
  std::error_code ignored;
  fs::remove(out, ignored);
  auto p = JobDriver::start(argv, dir_, out);
  if (!p.ok()) {
    spdlog::warn("server: cannot run {}: {}", argv[0], p.status().message());
    if (kind == Kind::kAsk) allocator_.ask_failed(p.status().message(), now_s);
    return;
  }
  command_ = Command{kind, std::move(*p), out, now_s + o_.command_timeout_s, {}};
}

void SlurmAllocations::finish(int exit_status, const std::string& message, double now_s) {
  const Command c = std::move(*command_);
  command_.reset();
  const std::string text = read_text(c.output);
  const char* tool = c.kind == Kind::kList ? "squeue" : c.kind == Kind::kAsk ? "sbatch" : "scancel";
  if (exit_status != 0) {
    const std::string why = fmt::format("{} exited with status {}: {}", tool, exit_status, message.empty() ? text : message);
    spdlog::warn("server: {}", why);
    if (c.kind == Kind::kAsk) allocator_.ask_failed(why, now_s);
    return;
  }
  std::istringstream lines(text);
  std::string line;
  switch (c.kind) {
    case Kind::kList: {
      std::map<std::string, std::string> states;
      while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string id, state;
        if (words >> id >> state && all_digits(id)) states[id] = state;
      }
      allocator_.listed(states, now_s);
      break;
    }
    case Kind::kAsk: {
      std::string id;
      while (std::getline(lines, line) && id.empty()) {
        const std::string first = line.substr(0, line.find(';'));  // --parsable: ID or ID;CLUSTER
        if (all_digits(first)) id = first;
      }
      if (id.empty()) {
        allocator_.ask_failed("sbatch gave no job id: " + text, now_s);
        return;
      }
      allocator_.asked(id, now_s);
      spdlog::info("server: asked Slurm for {} worker(s): allocation {} ({})", o_.allocator.workers_per_allocation, id,
                   allocator_.summary(now_s));
      break;
    }
    case Kind::kCancel:
      break;
  }
}

void SlurmAllocations::tick(std::size_t wanted, const std::vector<std::string>& workers, double now_s) {
  std::map<std::string, std::uint32_t> joined;
  for (const auto& name : workers)
    if (std::string id = allocation_of(name); !id.empty()) ++joined[id];
  allocator_.joined(joined);
  if (command_) {
    int exit_status = 0;
    std::string message;
    if (command_->process.ended(exit_status, message)) {
      finish(exit_status, message, now_s);
    } else {
      if (now_s >= command_->deadline_s) {
        spdlog::warn("server: a Slurm command took over {:g} s; stopped (is slurmctld up?)", o_.command_timeout_s);
        command_->process.stop(0);
        command_->deadline_s = now_s + 3600;  // reaped by the next ended()
      }
      return;
    }
  }
  if (now_s >= next_list_s_) {
    next_list_s_ = now_s + o_.poll_s;
    start(Kind::kList, {squeue_, "--noheader", "--name=" + job_name_, "--format=%i %T"}, now_s);
    return;
  }
  Allocator::Plan plan = allocator_.plan(wanted, now_s);
  if (!plan.cancel.empty()) {
    for (const auto& id : plan.cancel)
      for (const auto& a : allocator_.allocations(now_s))
        if (a.id == id) spdlog::info("server: cancelling Slurm allocation {}: {}", id, a.why);
    std::vector<std::string> argv = {scancel_};
    argv.insert(argv.end(), plan.cancel.begin(), plan.cancel.end());
    start(Kind::kCancel, std::move(argv), now_s);
    next_list_s_ = 0;  // see the result at once
    return;
  }
  if (plan.ask > 0) {
    std::vector<std::string> argv = {sbatch_, "--parsable", "--job-name=" + job_name_,
                                     "--ntasks=" + std::to_string(o_.allocator.workers_per_allocation),
                                     "--output=" + (fs::path(dir_) / "slurm-%j.out").string()};
    argv.insert(argv.end(), o_.sbatch_args.begin(), o_.sbatch_args.end());
    argv.push_back(script_);
    start(Kind::kAsk, std::move(argv), now_s);
  }
}

}  // namespace redflow::server
