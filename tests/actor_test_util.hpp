// Helpers for tests that run actors directly, without a runtime: bytes in
// and out, seeded random data, a ParallelLoop over real threads, and a
// runner that poisons the output so unwritten bytes show.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redflow/actor_context.hpp"
#include "redflow/registry.hpp"
#include "test_graphs.hpp"  // from_bytes

namespace redflow::testing {

using Bytes = std::vector<std::byte>;

// A ParallelLoop over real threads: [begin, end) is cut into min(cores, n)
// contiguous parts, the first run by the caller and the rest by new threads.
class ThreadLoop : public ParallelLoop {
 public:
  explicit ThreadLoop(unsigned cores) : cores_(cores) {}
  unsigned cores() const override { return cores_; }
  void run(std::size_t begin, std::size_t end, void (*chunk)(void*, std::size_t, std::size_t),
           void* closure) override {
    const std::size_t len = end - begin;
    const std::size_t parts = std::min<std::size_t>(cores_, len);
    std::vector<std::thread> threads;
    for (std::size_t p = 1; p < parts; ++p) {
      threads.emplace_back(chunk, closure, begin + p * len / parts, begin + (p + 1) * len / parts);
    }
    chunk(closure, begin, begin + len / parts);
    for (auto& t : threads) t.join();
    if (parts > 1) parallel_runs_.fetch_add(1);
  }
  // How many run() calls used more than one thread.
  int parallel_runs() const { return parallel_runs_.load(); }

 private:
  unsigned cores_;
  std::atomic<int> parallel_runs_{0};
};

template <typename T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<std::int32_t> random_i32(std::mt19937& rng, std::size_t n, std::int32_t lo = INT32_MIN,
                                     std::int32_t hi = INT32_MAX) {
  std::uniform_int_distribution<std::int32_t> dist(lo, hi);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline Bytes random_bytes(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> dist(0, 255);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::byte>(dist(rng));
  return b;
}

struct ActorRun {
  Bytes out;
  std::optional<std::string> failure;
};

// Runs actor `name` of `reg` on copies of `inputs`. The output starts filled
// with a poison byte so that an actor leaving part of it unwritten is caught
// by the comparison with the reference.
inline ActorRun run_actor(const Registry& reg, std::string_view name, const std::vector<Bytes>& inputs,
                    std::size_t output_bytes, std::string_view args = "", ParallelLoop* loop = nullptr) {
  const ActorSpec* spec = reg.find(name);
  EXPECT_NE(spec, nullptr) << name;
  ActorRun r;
  r.out.assign(output_bytes, std::byte{0xAB});
  if (spec == nullptr) return r;
  std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
  ActorContext ctx(name, args, spans, r.out, loop);
  spec->function(ctx);
  r.failure = ctx.failure();
  return r;
}

inline std::string check(const Registry& reg, std::string_view name, std::vector<std::size_t> input_bytes,
                  std::size_t output_bytes, std::string_view args = "") {
  const ActorSpec* spec = reg.find(name);
  if (spec == nullptr || !spec->check) return "<no check for " + std::string(name) + ">";
  return spec->check(ActorShape{input_bytes, output_bytes, args});
}

// Calls body once per loop configuration: one core (null loop) and real
// threads with 2, 3 and 4 cores (3 gives uneven chunks).
inline void for_each_loop(const std::function<void(ParallelLoop*)>& body) {
  {
    SCOPED_TRACE("null loop (1 core)");
    body(nullptr);
  }
  for (unsigned cores : {2u, 3u, 4u}) {
    SCOPED_TRACE("ThreadLoop with " + std::to_string(cores) + " cores");
    ThreadLoop loop(cores);
    body(&loop);
  }
}

}  // namespace redflow::testing
