// Load time and resident memory of a large graph (docs/performance.md): builds
// the overhead benchmark's chain of N empty actors with 0-byte data nodes,
// loads it (steal scheduler, 2 tiles, the default configuration), executes it
// once, and prints one JSON line: the graph build, load and execute times and
// the process's resident memory (VmRSS before, VmHWM = peak after) in bytes
// and per actor. load_cpu_s is load's CPU time on the calling thread (the
// wall time on a shared machine includes waiting for a core). One size per process, since the peak is the process's.
//   load_scale --n 1000000 [--eager] [--tiles 2] [--scheduler steal|heft]
// bench/load.sh runs it at 10^4, 10^5 and 10^6 actors.
#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "redflow/runtime.hpp"

using namespace redflow;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds of the calling thread: load runs on it, so this is load's time
// without the waits for a core that a shared machine adds to the wall time.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), 0 if absent.
std::size_t proc_status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') return std::stoull(line.substr(n + 1)) * 1024;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000000;
  RuntimeOptions o;
  o.tiles = 2;
  o.scheduler = Scheduler::kSteal;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) {
      n = std::stoull(argv[++i]);
    } else if (a == "--tiles" && i + 1 < argc) {
      o.tiles = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (a == "--scheduler" && i + 1 < argc) {
      o.scheduler = std::string(argv[++i]) == "heft" ? Scheduler::kHeft : Scheduler::kSteal;
    } else if (a == "--eager") {
      o.eager_schedules = true;
    } else {
      std::fprintf(stderr, "usage: load_scale [--n N] [--tiles T] [--scheduler steal|heft] [--eager]\n");
      return 2;
    }
  }
  const std::size_t rss0 = proc_status_bytes("VmRSS");
  const auto t0 = Clock::now();
  Graph g("chain");
  DataId prev = g.input("X", 0);
  for (std::size_t i = 0; i < n; ++i) {
    const DataId next = i + 1 == n ? g.output("Y", 0) : g.inner("d" + std::to_string(i), 0);
    g.actor("a" + std::to_string(i), "noop", {prev}, next);
    prev = next;
  }
  const double build_s = seconds_since(t0);
  const std::size_t rss_graph = proc_status_bytes("VmRSS");
  Registry reg;
  reg.add("noop", [](ActorContext&) {});
  Runtime rt(o);
  const auto t1 = Clock::now();
  const double c1 = thread_cpu_s();
  auto loaded = rt.load(std::move(g), reg);
  const double load_s = seconds_since(t1);
  const double load_cpu_s = thread_cpu_s() - c1;
  if (!loaded.ok()) {
    std::fprintf(stderr, "load_scale: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  const std::size_t rss_loaded = proc_status_bytes("VmRSS");
  std::vector<std::byte> x;
  const auto t2 = Clock::now();
  auto out = loaded->execute({{"X", std::span<const std::byte>(x)}});
  const double execute_s = seconds_since(t2);
  if (!out.ok() || loaded->last_stats().actors_executed != n) {
    std::fprintf(stderr, "load_scale: execution failed or incomplete\n");
    return 1;
  }
  const std::size_t peak = proc_status_bytes("VmHWM");
  const double per = static_cast<double>(n);
  // glibc's malloc asks for transparent huge pages when started so
  // (GLIBC_TUNABLES=glibc.malloc.hugetlb=1; docs/performance.md): say which.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool hugetlb = tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb=1") != nullptr;
  std::printf("%s\n", fmt::format("{{\"actors\": {}, \"scheduler\": \"{}\", \"eager\": {}, \"build_s\": {:.4f}, \"load_s\": {:.4f}, \"load_cpu_s\": {:.4f}, "
                                  "\"execute_s\": {:.4f}, \"rss_start_bytes\": {}, \"rss_graph_bytes\": {}, \"rss_loaded_bytes\": {}, "
                                  "\"peak_rss_bytes\": {}, \"peak_rss_per_actor\": {:.1f}, \"load_rss_per_actor\": {:.1f}, \"malloc_hugetlb\": {}}}",
                                  n, to_string(o.scheduler), o.eager_schedules, build_s, load_s, load_cpu_s, execute_s, rss0, rss_graph,
                                  rss_loaded, peak, static_cast<double>(peak) / per,
                                  static_cast<double>(rss_loaded - rss_graph) / per, hugetlb)
                          .c_str());
  return 0;
}
