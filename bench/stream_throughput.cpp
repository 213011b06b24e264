// Local stream throughput (docs/streams.md): 8-byte tokens from one operator
// to another, redflow::stream::run in both local modes, against a plain
// single-producer/single-consumer ring (boost::lockfree::spsc_queue) between
// two threads moving the same tokens, measured in the same run, alternating,
// median of R. The plain ring pushes and pops a token at a time, as a
// hand-written pipeline does; the same ring moving batches of 4,096 (its
// bulk push/pop, which copy a batch in and out) is the anchor redflow's
// built-in operators are held to: >= 0.9 of it. They move batches of up to
// 4,096 too, made and read where they lie in the stream (reserve / peek). Ratios are the
// median of each round's ratio (the machine is shared and noisy). The
// streams hold RunOptions::stream_buffer_bytes (512 KiB: 65,536 tokens, the
// ring's capacity); the pool with unbounded streams is printed beside, to
// see what the bound does.
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

// The same ring, moved in batches (its bulk push and pop).
double ring_bulk(std::uint64_t n, std::uint64_t& sum) {
  constexpr std::size_t kBatch = 4096;
  boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<65536>> q;
  const auto t0 = Clock::now();
  std::thread producer([&] {
    std::vector<std::uint64_t> batch(kBatch);
    for (std::uint64_t i = 0; i < n;) {
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, n - i));
      for (std::size_t j = 0; j < k; ++j) batch[j] = i + j;
      for (std::size_t done = 0; done < k;) {
        const std::size_t pushed = q.push(batch.data() + done, k - done);
        if (pushed == 0) std::this_thread::yield();
        done += pushed;
      }
      i += k;
    }
  });
  std::vector<std::uint64_t> buf(kBatch);
  std::uint64_t s = 0, got = 0;
  while (got < n) {
    const std::size_t k = q.pop(buf.data(), kBatch);
    if (k == 0) std::this_thread::yield();
    for (std::size_t j = 0; j < k; ++j) s += buf[j];
    got += k;
  }
  producer.join();
  sum = s;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double streams(std::uint64_t n, redflow::stream::Mode mode, std::uint64_t& sum, bool bounded = true) {
  auto reg = redflow::stream::OperatorRegistry::with_builtins();
  redflow::stream::Program p;
  (void)p.add(reg, "source", "counter", {{"n", std::to_string(n)}});
  (void)p.add(reg, "sink", "sum");
  (void)p.add(reg, "out", "collect");
  (void)p.connect("source", 0, "sink", 0, 8);
  (void)p.connect("sink", 0, "out", 0, 8);
  redflow::stream::RunOptions o{.mode = mode, .threads = 2};
  if (!bounded) o.stream_buffer_bytes = 0;
  auto r = redflow::stream::run(p, o);
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
  std::vector<double> base, bulk, threads, pool, loose;
  std::vector<double> t_ring, p_ring, t_bulk, p_bulk, l_bulk;  // per round: redflow's rate / the ring's
  for (int r = 0; r < rounds; ++r) {
    std::uint64_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
    base.push_back(ring(n, s1));
    threads.push_back(streams(n, redflow::stream::Mode::kThreadPerOperator, s2));
    bulk.push_back(ring_bulk(n, s4));
    pool.push_back(streams(n, redflow::stream::Mode::kPool, s3));
    loose.push_back(streams(n, redflow::stream::Mode::kPool, s5, false));
    if (s1 != want || s2 != want || s3 != want || s4 != want || s5 != want) {
      fmt::print(stderr, "stream_throughput: a sum is wrong ({} {} {} {} {}, want {})\n", s1, s2, s3, s4, s5, want);
      return 1;
    }
    t_ring.push_back(base.back() / threads.back());
    p_ring.push_back(base.back() / pool.back());
    t_bulk.push_back(bulk.back() / threads.back());
    p_bulk.push_back(bulk.back() / pool.back());
    l_bulk.push_back(bulk.back() / loose.back());
  }
  auto rate = [&](const std::vector<double>& secs) { return n / median(secs) / 1e6; };
  fmt::print("8-byte tokens, {} per run, median of {} rounds:\n", n, rounds);
  fmt::print("  spsc_queue ring, a token at a time:   {:8.1f} M tokens/s\n", rate(base));
  fmt::print("  spsc_queue ring, batches of 4096:     {:8.1f} M tokens/s\n", rate(bulk));
  fmt::print("  redflow stream, thread per operator:  {:8.1f} M tokens/s  ratio {:.2f} to the ring, {:.2f} to the batched ring\n", rate(threads),
             median(t_ring), median(t_bulk));
  fmt::print("  redflow stream, pool of 2 workers:    {:8.1f} M tokens/s  ratio {:.2f} to the ring, {:.2f} to the batched ring\n", rate(pool),
             median(p_ring), median(p_bulk));
  fmt::print("  the pool, streams unbounded:          {:8.1f} M tokens/s  ratio {:.2f} to the batched ring\n", rate(loose), median(l_bulk));
  return 0;
}
