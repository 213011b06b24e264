// The driver tile (section 4.1): the thread that calls execute() runs the
// special actors (split, collect, reorder: by moving pointers in main memory)
// and the actors too large for a tile's slots, in HEFT order or as they become
// ready.
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

void Engine::driver_loop(Job& job) {
  if (job.scheduler == Scheduler::kHeft) {
    auto wait = [&](auto& ready) {
      while (!ready()) {
        const std::uint32_t token = driver_.notifier.prepare();
        if (ready()) {
          driver_.notifier.cancel();
          break;
        }
        driver_.notifier.wait(token);
      }
    };
    auto run = [&](ActorId a) { run_on_driver(job, a); };
    // A join mid-run may make a new schedule: walk its driver order then (what was run is claimed).
    for (std::uint32_t walked = ~std::uint32_t{0}; !job.aborted.load();) {
      const std::uint32_t epoch = job.joins.epoch();
      if (epoch == walked) break;
      walked = epoch;
      walk_order(job, orders(job).driver_order, epoch, wait, run);
    }
  } else {
    for (;;) {
      ActorId a = kNone;
      {
        std::lock_guard<std::mutex> lock(driver_.mutex);
        if (!driver_.queue.empty()) {
          a = driver_.queue.back();
          driver_.queue.pop_back();
        }
      }
      if (a != kNone) {
        run_on_driver(job, a);
        continue;
      }
      if (finished(job)) break;
      const std::uint32_t token = driver_.notifier.prepare();
      bool has_work;
      {
        std::lock_guard<std::mutex> lock(driver_.mutex);
        has_work = !driver_.queue.empty();
      }
      if (has_work || finished(job)) {
        driver_.notifier.cancel();
        continue;
      }
      driver_.notifier.wait(token);
    }
  }
  // Wait for the tiles to finish the rest.
  while (!finished(job)) {
    const std::uint32_t token = driver_.notifier.prepare();
    if (finished(job)) {
      driver_.notifier.cancel();
      break;
    }
    driver_.notifier.wait(token);
  }
}

void Engine::run_on_driver(Job& job, ActorId a) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  auto& inputs = s.driver_inputs;
  inputs.clear();
  if (job.plain) {
    // As on a tile (run_plain, book_completion): reset what this actor owns for the next execution.
    s.pending[a].store(hot.initial_pending, std::memory_order_relaxed);
    s.remaining[hot.output].store(plan.data[hot.output].consumer_count, std::memory_order_relaxed);
  }
  for (std::uint32_t i = 0; i < hot.input_count; ++i) {
    const DataId d = s.alias[plan.inputs[hot.first_input + i]];
    // Transfers from tiles land in main memory; for a collect's aliased input that is already its place in the output.
    if (!memory_.ensure(job, d)) {
      fail(job, "internal error: input '" + plan.graph->data(d).name + "' of driver actor '" + std::string(plan.name(a)) + "' is nowhere");
      return;
    }
    inputs.push_back(s.home[d]);
  }
  const std::size_t out_bytes = plan.data[hot.output].bytes;
  const auto t0 = job.timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const double trace_start = job.tracing ? job.now() : 0;
  if (pa.alias == ActorAlias::kInputRange) {
    const std::span<const std::byte> range = inputs[0].subspan(pa.alias_offset, out_bytes);  // the shape check guaranteed the range
    // Zero-copy unless the range is misaligned: then into its home (MainMemory::assign), so no actor reads a misaligned value.
    if (std::byte* own = s.home_write[hot.output]; own != nullptr && reinterpret_cast<std::uintptr_t>(range.data()) % kValueAlignment != 0) {
      std::memcpy(own, range.data(), out_bytes);
      s.home[hot.output] = {own, out_bytes};
    } else {
      s.home[hot.output] = range;
    }
  } else if (pa.alias == ActorAlias::kConcatenation) {
    std::byte* out = s.home_write[hot.output];
    std::size_t at = 0;
    for (const auto& in : inputs) {
      if (in.data() != out + at && !in.empty()) std::memcpy(out + at, in.data(), in.size());
      at += in.size();
    }
  } else {
    ActorContext ctx(plan.name(a), plan.args(a), inputs, std::span<std::byte>(s.home_write[hot.output], out_bytes), nullptr);
    invoke_actor(*hot.function, ctx);
    if (ctx.failure()) {
      fail(job, "actor '" + std::string(plan.name(a)) + "' failed on the driver: " + *ctx.failure(), Status::Code::kActorFailed);
      return;
    }
  }
  if (job.timed) driver_.stats.busy_s += seconds_since(t0);
  ++driver_.stats.actors;
  if (job.tracing) driver_.trace.actors.push_back(RawActor{a, kDriverTile, 0, 0, trace_start, job.now(), false, false, 0});
  s.home_state[hot.output].store(home_word(0, kHomeValid), std::memory_order_release);
  // Main memory needs no slot freeing: the inputs' consumer counts just drop.
  for (std::uint32_t i = 0; i < hot.input_count; ++i)
    s.remaining[s.alias[plan.inputs[hot.first_input + i]]].fetch_sub(1, std::memory_order_acq_rel);
  complete(job, a, nullptr);
}

}  // namespace redflow::runtime
