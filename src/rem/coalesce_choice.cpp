// Coalescing chosen automatically (docs/rem.md, "Coalescing chosen
// automatically"): what a store round trip and a byte cost here, measured
// now, against what the program's average fine task needs of the store.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include "rem/task_levels.hpp"
#include "rem/value_codec.hpp"

namespace redflow::rem {

namespace {

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

// The record an instance keeps of its choice: text, so that a person
// looking at the store can read it.
std::string choice_record(const CoalesceOptions& o) { return fmt::format("redflow coalesce tasks={} labels={}", o.tasks, o.labels ? 1 : 0); }

Result<CoalesceOptions> parse_choice(const std::string& key, std::span<const std::byte> bytes) {
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  unsigned tasks = 0, labels = 2;
  if (std::sscanf(text.c_str(), "redflow coalesce tasks=%u labels=%u", &tasks, &labels) != 2 || tasks == 0 || labels > 1 ||
      text != choice_record({tasks, labels == 1}))
    return Status::IOError("the coalescing recorded under " + key + " is not one redflow writes ('" + text.substr(0, 80) +
                           "'): use another --instance, or --coalesce-tasks instead of --coalesce-auto");
  return CoalesceOptions{tasks, labels == 1};
}

// The store's costs, measured with keys of its own under `probe` (deleted again).
struct Costs {
  double round_trip_us, us_per_byte;
};
Result<Costs> measure(Store& store, const std::string& probe, std::size_t value_bytes) {
  std::vector<double> trips;
  for (int i = 0; i < 9; ++i) {
    const auto t = Clock::now();
    auto there = store.exists(probe);
    if (!there.ok()) return there.status();
    trips.push_back(micros_since(t));
  }
  std::nth_element(trips.begin(), trips.begin() + 4, trips.end());
  const double trip = trips[4];
  const Value v(value_bytes, std::byte{0x5a});
  double best = -1;
  for (int i = 0; i < 3; ++i) {
    const std::string k = probe + std::to_string(i);
    const auto t = Clock::now();
    auto added = store.add(k, v);
    if (!added.ok()) return added.status();
    auto got = store.get(k);
    if (!got.ok()) return got.status();
    const double took = micros_since(t);
    if (auto gone = store.remove(k); !gone.ok()) return gone.status();
    const double per_byte = std::max(0.0, took - 2 * trip) / static_cast<double>(2 * value_bytes);
    if (best < 0 || per_byte < best) best = per_byte;
  }
  return Costs{trip, best};
}

}  // namespace

Result<CoalesceChoice> choose_coalescing(const Program& program, Store& store, const std::string& instance) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  LabelCodec codec(store, program, instance.empty() ? std::string("none") : instance);
  CoalesceChoice c;
  if (!instance.empty()) {
    auto got = store.get(codec.coalesce_key());
    if (!got.ok()) return Status::IOError("reading the coalescing of instance '" + instance + "': " + got.status().message());
    if (*got) {
      auto o = parse_choice(codec.coalesce_key(), **got);
      if (!o.ok()) return o.status();
      c.options = *o;
      c.recorded = true;
      return c;
    }
  }
  // The average fine task: what it asks of the store, and how wide a level is.
  double trips = 0, bytes = 0, computing = 0;
  const std::vector<std::uint32_t> level = task_levels(program);
  std::set<std::uint32_t> levels;
  for (TaskId t = 0; t < program.tasks().size(); ++t) {
    const Task& task = program.task(t);
    if (!task.computes) continue;
    ++computing;
    levels.insert(level[t]);
    trips += 2.0 + static_cast<double>(task.required.size()) + 2.0 * static_cast<double>(task.produces.size());
    for (LabelId l : task.required) bytes += static_cast<double>(program.label(l).bytes);
    for (LabelId l : task.produces) bytes += static_cast<double>(program.label(l).bytes);
  }
  if (computing == 0) return c;
  c.task_round_trips = trips / computing;
  c.task_bytes = bytes / computing;
  // Probe keys nobody else uses: this process's id and a random number.
  std::random_device rd;
  const std::string probe = fmt::format("rf:{}:probe{}-{:x}-", instance.empty() ? "none" : instance, getpid(), rd());
  const std::size_t value_bytes =
      std::clamp<std::size_t>(static_cast<std::size_t>(c.task_bytes), 4096, std::min<std::size_t>(store.max_value_bytes() / 2, 4 << 20));
  auto costs = measure(store, probe, value_bytes);
  if (!costs.ok()) return Status::IOError("measuring " + store.describe() + " to choose the coalescing: " + costs.status().message());
  c.round_trip_us = costs->round_trip_us;
  c.us_per_mb = costs->us_per_byte * 1e6;
  const double trip_time = c.task_round_trips * c.round_trip_us, byte_time = c.task_bytes * costs->us_per_byte;
  const double ratio = byte_time > 0 ? 2 * trip_time / byte_time : 1e9;
  const double widest = std::max(1.0, computing / static_cast<double>(levels.size()) / 8);
  unsigned k = 1;
  while (2.0 * k <= ratio && 2.0 * k <= widest) k *= 2;
  c.options = {k, k > 1};
  if (!instance.empty()) {
    // The first scheduler's choice holds for the instance: take it if another came first.
    const std::string record = choice_record(c.options);
    auto added = store.add(codec.coalesce_key(), std::as_bytes(std::span(record)));
    if (!added.ok()) return Status::IOError("recording the coalescing of instance '" + instance + "': " + added.status().message());
    if (!*added) {
      auto got = store.get(codec.coalesce_key());
      if (!got.ok() || !*got) return Status::IOError("reading the coalescing of instance '" + instance + "' another scheduler recorded");
      auto o = parse_choice(codec.coalesce_key(), **got);
      if (!o.ok()) return o.status();
      c.options = *o;
      c.recorded = true;
    }
  }
  return c;
}

}  // namespace redflow::rem
