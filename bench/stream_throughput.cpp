// Local stream throughput (docs/streams.md): 8-byte tokens from one operator
// to another, redflow::stream::run in both local modes, against a plain
// single-producer/single-consumer ring (boost::lockfree::spsc_queue) between
// two threads moving the same tokens, measured in the same run, alternating,
// median of R. The goal: redflow / ring >= 0.8.
//
//   stream_throughput [--tokens N] [--rounds R]
#include <fmt/format.h>

#include <algorithm>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "redflow/stream.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The baseline: what a user would write by hand between two threads.
double ring(std::uint64_t n, std::uint64_t& sum) {
  boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<65536>> q;
  const auto t0 = Clock::now();
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i)
      while (!q.push(i)) std::this_thread::yield();
  });
  std::uint64_t s = 0, got = 0, v;
  while (got < n) {
    if (q.pop(v)) {
      s += v;
      ++got;
    } else {
      std::this_thread::yield();
    }
  }
  producer.join();
  sum = s;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double streams(std::uint64_t n, redflow::stream::Mode mode, std::uint64_t& sum) {
  auto reg = redflow::stream::OperatorRegistry::with_builtins();
  redflow::stream::Program p;
  (void)p.add(reg, "source", "counter", {{"n", std::to_string(n)}});
  (void)p.add(reg, "sink", "sum");
  (void)p.add(reg, "out", "collect");
  (void)p.connect("source", 0, "sink", 0, 8);
  (void)p.connect("sink", 0, "out", 0, 8);
  auto r = redflow::stream::run(p, {.mode = mode, .threads = 2});
  if (!r.ok()) {
    fmt::print(stderr, "stream_throughput: {}\n", r.status().ToString());
    std::exit(1);
  }
  std::memcpy(&sum, r->outputs["out"].data(), 8);
  return r->seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t n = 50'000'000;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--tokens") n = std::stoull(argv[i + 1]);
    else if (std::string(argv[i]) == "--rounds") rounds = std::stoi(argv[i + 1]);
  }
  const std::uint64_t want = n * (n - 1) / 2;
  std::vector<double> base, threads, pool;
  for (int r = 0; r < rounds; ++r) {
    std::uint64_t s1 = 0, s2 = 0, s3 = 0;
    base.push_back(ring(n, s1));
    threads.push_back(streams(n, redflow::stream::Mode::kThreadPerOperator, s2));
    pool.push_back(streams(n, redflow::stream::Mode::kPool, s3));
    if (s1 != want || s2 != want || s3 != want) {
      fmt::print(stderr, "stream_throughput: a sum is wrong ({} {} {}, want {})\n", s1, s2, s3, want);
      return 1;
    }
  }
  const double b = median(base), t = median(threads), p = median(pool);
  fmt::print("8-byte tokens, {} per run, median of {}:\n", n, rounds);
  fmt::print("  spsc_queue ring, 2 threads:            {:8.1f} M tokens/s\n", n / b / 1e6);
  fmt::print("  redflow stream, thread per operator:   {:8.1f} M tokens/s  ratio {:.2f}\n", n / t / 1e6, b / t);
  fmt::print("  redflow stream, pool of 2 workers:     {:8.1f} M tokens/s  ratio {:.2f}\n", n / p / 1e6, b / p);
  return 0;
}
