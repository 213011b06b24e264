// Trivial-task throughput of the embedded SPITS runtime (docs/spits.md):
// redflow::spits::run_job with one Task Manager of W Workers, beside a plain
// thread pool doing the same generate / execute / commit calls on the same
// job plugin (a locked task queue as deep as the deepest the runtime's
// adaptive prefetch uses, W + 1024, a locked result list, no circular queue,
// no de-duplication), measured in the same run, alternating, median of R.
//
//   spits_throughput [PLUGIN.so] [--tasks N] [--workers W] [--prefetch P] [--rounds R]
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redflow/spits.hpp"

namespace {

struct Out {
  redflow_spits_out out;
  std::string bytes;
  Out() {
    out.runtime = this;
    out.write = [](redflow_spits_out* o, const void* d, size_t n) { static_cast<Out*>(o->runtime)->bytes.append(static_cast<const char*>(d), n); };
    out.error = [](redflow_spits_out*, const char*) {};
  }
};

// The baseline: what a user would write by hand around the same three calls.
double plain_pool(const redflow_spits_job* t, std::uint64_t tasks, unsigned workers) {
  std::string arg = "tasks=" + std::to_string(tasks), quiet = "quiet=1";
  const char* argv[] = {arg.c_str(), quiet.c_str(), nullptr};
  Out setup_out;
  void* job = t->setup(2, argv, &setup_out.out);
  auto start = std::chrono::steady_clock::now();
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::string> queue;
  std::vector<std::pair<std::string, std::string>> results;
  bool done = false;
  const std::size_t bound = workers + 1024;
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      Out out;
      std::unique_lock lock(m);
      for (;;) {
        cv.wait(lock, [&] { return done || !queue.empty(); });
        if (queue.empty()) return;
        std::string task = std::move(queue.front());
        queue.pop_front();
        lock.unlock();
        out.bytes.clear();
        t->execute_task(job, task.data(), task.size(), &out.out);
        lock.lock();
        results.emplace_back(std::move(task), out.bytes);
        cv.notify_all();
      }
    });
  Out gen, commit;
  std::vector<std::pair<std::string, std::string>> ready;
  std::uint64_t committed = 0;
  bool generating = true;
  std::unique_lock lock(m);
  while (committed < tasks) {
    while (generating && queue.size() < bound) {
      gen.bytes.clear();
      lock.unlock();
      int rc = t->generate_task(job, &gen.out);
      lock.lock();
      if (rc != REDFLOW_SPITS_TASK) {
        generating = false;
        break;
      }
      queue.push_back(gen.bytes);
      cv.notify_one();
    }
    if (results.empty()) cv.wait(lock, [&] { return !results.empty(); });
    ready.swap(results);
    lock.unlock();
    for (auto& [task, result] : ready) t->commit_task(job, task.data(), task.size(), result.data(), result.size(), &commit.out);
    committed += ready.size();
    ready.clear();
    lock.lock();
  }
  done = true;
  cv.notify_all();
  lock.unlock();
  for (auto& th : pool) th.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Out down;
  if (t->teardown(job, 1, &down.out) != 0) fmt::print(stderr, "baseline: teardown failed (a lost or doubled commit)\n");
  return static_cast<double>(tasks) / s;
}

double embedded(const std::string& plugin, std::uint64_t tasks, unsigned workers, unsigned prefetch) {
  redflow::spits::Options o;
  o.workers = workers;
  o.prefetch = prefetch;
  auto r = redflow::spits::run_job(plugin, {"tasks=" + std::to_string(tasks), "quiet=1"}, o);
  if (!r.ok()) {
    fmt::print(stderr, "{}\n", r.status().ToString());
    std::exit(1);
  }
  return static_cast<double>(r->committed) / r->seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string plugin = REDFLOW_SPITS_TRIVIAL;
  std::uint64_t tasks = 1000000;
  unsigned workers = 2, rounds = 5, prefetch = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) tasks = std::stoull(argv[++i]);
    else if (a == "--workers" && i + 1 < argc) workers = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--prefetch" && i + 1 < argc) prefetch = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc) rounds = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a.rfind("--", 0) != 0) plugin = a;
    else {
      fmt::print(stderr, "usage: spits_throughput [PLUGIN.so] [--tasks N] [--workers W] [--prefetch P] [--rounds R]\n");
      return 2;
    }
  }
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto entry = h ? reinterpret_cast<redflow_spits_entry_point>(dlsym(h, REDFLOW_SPITS_ENTRY_POINT)) : nullptr;
  if (!entry) {
    fmt::print(stderr, "cannot load {}: {}\n", plugin, h ? "no entry point" : dlerror());
    return 1;
  }
  std::vector<double> ours, base;
  for (unsigned r = 0; r < rounds; ++r) {
    base.push_back(plain_pool(entry(), tasks, workers));
    ours.push_back(embedded(plugin, tasks, workers, prefetch));
  }
  double o = median(ours), b = median(base);
  fmt::print("spits trivial tasks, {} tasks, {} workers, median of {} rounds:\n", tasks, workers, rounds);
  fmt::print("  redflow spits (embedded, 1 Task Manager): {:>12.0f} tasks/s\n", o);
  fmt::print("  plain thread pool, same plugin calls:     {:>12.0f} tasks/s\n", b);
  fmt::print("  ratio redflow / plain pool: {:.2f}\n", o / b);
  return 0;
}
