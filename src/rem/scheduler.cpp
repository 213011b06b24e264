// One REM scheduler: autonomous, randomised task selection over what it knows
// of the store (docs/rem.md, "Task selection"). It never talks to another
// scheduler; everything it learns comes from the store.
#include <xxhash.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <queue>
#include <random>
#include <thread>

#include "redflow/rem.hpp"
#include "rem/value_codec.hpp"

namespace redflow::rem {

namespace {

using Clock = std::chrono::steady_clock;

// The state of one scheduler: which labels it knows to be in the store (a
// label, once written, never changes or disappears, so this knowledge never
// goes stale), the values it holds, and the tasks it could run now.
class Scheduler {
 public:
  Scheduler(const Program& p, Store& store, const std::string& instance, const RunOptions& o)
      : p_(p), codec_(store, p, instance), o_(o), rng_(o.seed), claims_(o.claims && codec_.claims_possible()) {
    const std::size_t nl = p.labels().size(), nt = p.tasks().size();
    known_.assign(nl, 0);
    retired_.assign(nl, 0);
    refusals_.assign(nt, 0);
    consumers_.resize(nl);
    missing_.assign(nt, 0);
    unknown_produced_.assign(nt, 0);
    in_frontier_.assign(nt, 0);
    for (TaskId t = 0; t < nt; ++t) {
      for (LabelId l : p.task(t).required) consumers_[l].push_back(t);
      missing_[t] = static_cast<std::uint32_t>(p.task(t).required.size());
      unknown_produced_[t] = static_cast<std::uint32_t>(p.task(t).produces.size());
    }
    // Only tasks that results depend on are ever worth running: walk back from R.
    needed_.assign(nt, 0);
    std::vector<TaskId> work;
    for (LabelId l = 0; l < nl; ++l)
      if (p.label(l).result) {
        results_.push_back(l);
        if (!needed_[p.producer(l)]) needed_[p.producer(l)] = 1, work.push_back(p.producer(l));
      }
    while (!work.empty()) {
      TaskId t = work.back();
      work.pop_back();
      for (LabelId l : p.task(t).required)
        if (!needed_[p.producer(l)]) needed_[p.producer(l)] = 1, work.push_back(p.producer(l));
    }
    for (TaskId t = 0; t < nt; ++t) maybe_frontier(t);
  }

  Result<RunStats> run(const std::map<std::string, std::span<const std::byte>>& inputs) {
    const auto start = Clock::now();
    REDFLOW_RETURN_IF_ERROR(codec_.bind_instance(true));
    for (const auto& [name, bytes] : inputs) {
      auto l = p_.find_label(name);
      if (!l || p_.task(p_.producer(*l)).computes)
        return Status::InvalidArgument("REM program '" + p_.name() + "' has no input label '" + name + "'");
      if (p_.label(*l).bytes && bytes.size() != p_.label(*l).bytes)
        return Status::InvalidArgument(fmt::format("input label '{}' declares {} bytes, got {}", name, p_.label(*l).bytes, bytes.size()));
      LabelValue v;
      auto w = codec_.write(*l, bytes, &stats_.bytes_written, &v);
      if (!w.ok()) return w.status();
      if (!v.owner) hold_own(v, Value(bytes.begin(), bytes.end()));
      remember(*l, std::move(v));
    }
    auto backoff = std::chrono::microseconds(200);
    auto last_result_check = Clock::now();
    while (true) {
      if (o_.stop && o_.stop->load(std::memory_order_relaxed)) break;
      if (o_.timeout.count() > 0 && Clock::now() - start > o_.timeout) return timed_out();
      // Someone else may have finished while this scheduler walks forward: look now and then.
      if (frontier_.empty() || Clock::now() - last_result_check > std::chrono::milliseconds(20)) {
        last_result_check = Clock::now();
        auto over = results_present();
        if (!over.ok()) return over.status();
        if (*over) {
          stats_.finished = true;
          break;
        }
      }
      take_back_due();
      if (frontier_.empty() && !left_.empty()) {
        // Only tasks another scheduler claimed: look again when the first is due.
        ++stats_.waits;
        std::this_thread::sleep_until(std::min(left_.top().first, Clock::now() + std::chrono::milliseconds(20)));
        continue;
      }
      if (frontier_.empty()) {
        // Nothing runnable: only input labels not yet written block every path
        // back from R (docs/rem.md). Poll them, backing off.
        auto polled = poll_inputs();
        if (!polled.ok()) return polled.status();
        if (!*polled) {
          ++stats_.waits;
          std::this_thread::sleep_for(backoff);
          backoff = std::min(backoff * 2, std::chrono::microseconds(20000));
        }
        continue;
      }
      backoff = std::chrono::microseconds(200);
      TaskId t = pick();
      if (Status s = attempt(t); !s.ok()) return s;
      report_progress();
    }
    stats_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report_progress();
    return stats_;
  }

 private:
  void maybe_frontier(TaskId t) {
    if (needed_[t] && !in_frontier_[t] && missing_[t] == 0 && unknown_produced_[t] > 0 && p_.task(t).computes) {
      in_frontier_[t] = 1;
      frontier_.push_back(t);
    }
  }

  void learn(LabelId l) {
    if (known_[l]) return;
    known_[l] = 1;
    --unknown_produced_[p_.producer(l)];
    for (TaskId c : consumers_[l]) {
      --missing_[c];
      maybe_frontier(c);
    }
  }

  // Keeps a label's value in the cache (oldest out first past cache_bytes).
  void remember(LabelId l, LabelValue v) {
    learn(l);
    if (cache_.count(l) || retired_[l]) return;
    cached_bytes_ += v.bytes.size();
    cache_[l] = std::move(v);
    order_.push_back(l);
    while (cached_bytes_ > o_.cache_bytes && order_.size() > 1) {
      const LabelId oldest = order_.front();
      order_.pop_front();
      forget(oldest);
    }
  }
  void forget(LabelId l) {
    auto it = cache_.find(l);
    if (it == cache_.end()) return;
    cached_bytes_ -= it->second.bytes.size();
    cache_.erase(it);
  }
  // A value this scheduler computed (or was given) and keeps itself.
  static void hold_own(LabelValue& v, Value&& bytes) {
    auto owner = std::make_shared<const Value>(std::move(bytes));
    v.bytes = *owner;
    v.owner = std::move(owner);
  }

  // Retiring (RunOptions::retire_labels): once every task that needs a
  // label has run, nothing reads it again, so its value leaves the store
  // (docs/rem.md, "Retiring labels"). Only a label whose checksum this
  // scheduler holds (it read or wrote it), of at least retire_min_bytes,
  // and neither an input nor a result; any scheduler that sees all of a
  // label's consumers done may retire it, and retiring twice does no harm.
  Status retire_inputs_of(TaskId t) {
    if (!o_.retire_labels) return Status::Ok();
    for (LabelId l : p_.task(t).required) {
      if (retired_[l] || p_.label(l).result || !p_.task(p_.producer(l)).computes) continue;
      auto it = cache_.find(l);
      if (it == cache_.end() || it->second.size < o_.retire_min_bytes) continue;
      const bool all_ran = std::all_of(consumers_[l].begin(), consumers_[l].end(),
                                       [&](TaskId c) { return !needed_[c] || unknown_produced_[c] == 0; });
      if (!all_ran) continue;
      REDFLOW_RETURN_IF_ERROR(codec_.retire(l, it->second));
      retired_[l] = 1;
      ++stats_.retired;
      forget(l);
    }
    return Status::Ok();
  }

  // Random choice with affinity: among a few random frontier tasks, the one
  // whose inputs this scheduler already holds the most bytes of. Randomness
  // keeps schedulers apart; affinity keeps a scheduler on "its" part of the
  // data, which both saves reads and makes two schedulers choose alike rarely.
  TaskId pick() {
    std::size_t best = 0;
    std::size_t best_bytes = 0;
    const std::size_t samples = std::min<std::size_t>(frontier_.size(), 4);
    for (std::size_t s = 0; s < samples; ++s) {
      std::size_t i = std::uniform_int_distribution<std::size_t>(0, frontier_.size() - 1)(rng_);
      std::size_t bytes = 1;  // ties and empty caches still prefer the first sample
      for (LabelId l : p_.task(frontier_[i]).required)
        if (auto it = cache_.find(l); it != cache_.end()) bytes += it->second.bytes.size();
      if (s == 0 || bytes > best_bytes) best = i, best_bytes = bytes;
    }
    TaskId t = frontier_[best];
    frontier_[best] = frontier_.back();
    frontier_.pop_back();
    in_frontier_[t] = 0;
    return t;
  }

  // Tasks left to their claimers go back to the frontier once due: by then
  // the claimer wrote their labels (attempt() finds them and skips the task)
  // or its claim lapsed (this scheduler may claim and run it).
  void take_back_due() {
    const auto now = Clock::now();
    while (!left_.empty() && left_.top().first <= now) {
      const TaskId t = left_.top().second;
      left_.pop();
      maybe_frontier(t);
    }
  }

  // How long a claim holds: several times the tasks' run time as this
  // scheduler measured it (a claimer that is merely slow keeps its task), at
  // least RunOptions::claim_min_lease, at most kMaxLease.
  std::chrono::milliseconds lease() const {
    constexpr std::chrono::milliseconds kMaxLease{10000};
    const auto measured = std::chrono::milliseconds(static_cast<std::int64_t>(kLeaseTimes * task_seconds_ * 1000));
    return std::clamp(measured, o_.claim_min_lease, std::max(o_.claim_min_lease, kMaxLease));
  }

  // What the stats gained since the last report, to RunOptions::on_progress.
  void report_progress() {
    if (!o_.on_progress) return;
    const RunStats gained = stats_.since(reported_);
    reported_ = stats_;
    o_.on_progress(gained);
  }

  Status attempt(TaskId t) {
    const Task& task = p_.task(t);
    // Drop the task if its labels appeared meanwhile (another scheduler ran
    // it). A scheduler that ran a task writes its labels in the order the
    // task lists them (below), so when the last is in the store all are: one
    // existence check, not one per label.
    bool all_there = std::all_of(task.produces.begin(), task.produces.end(), [&](LabelId l) { return known_[l] != 0; });
    if (!all_there) {
      ++stats_.polls;
      auto there = codec_.present(task.produces.back());
      if (!there.ok()) return there.status();
      if (*there) {
        for (LabelId l : task.produces) learn(l);
        all_there = true;
      }
    }
    if (all_there) {
      ++stats_.skipped;
      return retire_inputs_of(t);
    }
    const auto claimed_at = Clock::now();
    if (claims_) {
      const auto held_for = lease();
      auto mine = codec_.claim(t, held_for);
      if (!mine.ok()) return mine.status();
      if (!*mine) {
        // Another scheduler runs it: look again when it is likely done,
        // about twice a task's time as measured here, twice as long at each
        // refusal, at most halfway through a lease of ours (its claimer
        // measured its own; neither knows the other's). A live claimer is
        // then seen done soon after it is, and a dead one costs a look now
        // and then until its claim lapses.
        ++stats_.left_to_claimer;
        const auto first = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(2 * task_seconds_));
        const auto again =
            std::min<Clock::duration>(std::max<Clock::duration>(first, kFirstLook) * (1 << std::min<unsigned>(refusals_[t], 16)), held_for / 2);
        if (refusals_[t] < 255) ++refusals_[t];
        left_.emplace(claimed_at + again, t);
        return Status::Ok();
      }
    }
    // The inputs this scheduler does not hold, in one multi-get.
    std::vector<LabelId> to_read;
    for (LabelId l : task.required)
      if (!cache_.count(l) && std::find(to_read.begin(), to_read.end(), l) == to_read.end()) to_read.push_back(l);
    std::vector<LabelValue> read;
    if (!to_read.empty()) {
      auto vs = codec_.read_many(to_read);
      if (!vs.ok()) return vs.status();
      read = std::move(*vs);
    }
    std::vector<LabelValue> held;
    std::vector<std::span<const std::byte>> args;
    held.reserve(task.required.size());
    for (LabelId l : task.required) {
      auto it = cache_.find(l);
      if (it == cache_.end()) {
        LabelValue* v = &read[static_cast<std::size_t>(std::find(to_read.begin(), to_read.end(), l) - to_read.begin())];
        if (v->retired()) {
          // Retired only once every task that needs it ran, this one too
          // (since the existence check above): its labels are there now.
          ++stats_.polls;
          auto ran = codec_.present(task.produces.back());
          if (!ran.ok()) return ran.status();
          if (!*ran)
            return Status::Internal("label '" + p_.label(l).name + "' was retired before task '" + task.name +
                                    "', which needs it, ran: the store holds labels of another run under this instance");
          for (LabelId o : task.produces) learn(o);
          ++stats_.skipped;
          return Status::Ok();
        }
        if (!v->present())
          return Status::Internal("label '" + p_.label(l).name + "' was present and is gone: the store lost it (evictions must be off: memcached -M)");
        stats_.bytes_read += v->bytes.size();
        remember(l, *v);
        held.push_back(*v);
      } else {
        held.push_back(it->second);
      }
      args.emplace_back(held.back().bytes);
    }
    std::vector<Value> out(task.produces.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i].resize(p_.label(task.produces[i]).bytes);
    Status s = task.computes(args, out);
    if (!s.ok()) return Status(Status::Internal("task '" + task.name + "' failed: " + s.message()));
    ++stats_.executed;
    bool wrote_any = false;
    for (std::size_t i = 0; i < out.size(); ++i) {  // in the task's order: the last label says all are there (above)
      LabelId l = task.produces[i];
      if (p_.label(l).bytes && out[i].size() != p_.label(l).bytes)
        return Status::InvalidGraph(fmt::format("task '{}' computed {} bytes for label '{}', which declares {} (computes is inconsistent with producer)",
                                                task.name, out[i].size(), p_.label(l).name, p_.label(l).bytes));
      LabelValue v;
      auto w = codec_.write(l, out[i], &stats_.bytes_written, &v);
      if (!w.ok()) return w.status();
      wrote_any |= *w == WriteOutcome::kWritten;
      if (!v.owner) hold_own(v, std::move(out[i]));  // else the store keeps the record, and so does the cache
      remember(l, std::move(v));
    }
    if (!wrote_any) ++stats_.duplicates;
    held.clear();
    REDFLOW_RETURN_IF_ERROR(retire_inputs_of(t));
    // A moving average of what a task takes here, claim to last write: the lease.
    const double took = std::chrono::duration<double>(Clock::now() - claimed_at).count();
    task_seconds_ = stats_.executed == 1 ? took : 0.8 * task_seconds_ + 0.2 * took;
    return Status::Ok();
  }

  Result<bool> results_present() {
    for (LabelId l : results_) {
      if (known_[l]) continue;
      ++stats_.polls;
      auto there = codec_.present(l);
      if (!there.ok()) return there.status();
      if (!*there) return false;
      learn(l);
    }
    return true;
  }

  // True if a missing input label turned up.
  Result<bool> poll_inputs() {
    bool found = false;
    for (TaskId t = 0; t < p_.tasks().size(); ++t) {
      if (p_.task(t).computes || !needed_[t]) continue;
      for (LabelId l : p_.task(t).produces) {
        if (known_[l]) continue;
        ++stats_.polls;
        auto there = codec_.present(l);
        if (!there.ok()) return there.status();
        if (*there) learn(l), found = true;
      }
    }
    return found;
  }

  Status timed_out() {
    std::string missing;
    for (LabelId l : results_)
      if (!known_[l]) missing += (missing.empty() ? "'" : ", '") + p_.label(l).name + "'";
    std::string inputs;
    for (TaskId t = 0; t < p_.tasks().size(); ++t)
      if (!p_.task(t).computes && needed_[t])
        for (LabelId l : p_.task(t).produces)
          if (!known_[l]) inputs += (inputs.empty() ? "'" : ", '") + p_.label(l).name + "'";
    return Status::Internal(fmt::format("REM run of '{}' not finished after {} ms: result labels {} still missing{}", p_.name(),
                                        o_.timeout.count(), missing.empty() ? "(none)" : missing,
                                        inputs.empty() ? "" : "; input labels never written: " + inputs));
  }

  const Program& p_;
  LabelCodec codec_;
  const RunOptions& o_;
  std::mt19937_64 rng_;
  RunStats stats_;
  RunStats reported_;  // stats_ as last given to on_progress
  std::vector<std::uint8_t> known_, needed_, in_frontier_;
  std::vector<std::vector<TaskId>> consumers_;
  std::vector<std::uint32_t> missing_, unknown_produced_;
  std::vector<TaskId> frontier_;
  std::vector<LabelId> results_;
  std::unordered_map<LabelId, LabelValue> cache_;
  std::vector<std::uint8_t> retired_;  // labels this scheduler retired
  std::deque<LabelId> order_;
  std::size_t cached_bytes_ = 0;
  // Claims: on (RunOptions::claims, on a store that expires keys), the
  // tasks left to their claimers by when to look again (earliest first), and
  // the tasks' measured run time.
  static constexpr double kLeaseTimes = 8;
  bool claims_;
  static constexpr std::chrono::microseconds kFirstLook{100};
  std::vector<std::uint8_t> refusals_;  // by task: claims refused so far (the next look waits twice as long)
  using Due = std::pair<Clock::time_point, TaskId>;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> left_;
  double task_seconds_ = 0;
};

}  // namespace

std::string derive_instance(const Program& program, const std::map<std::string, std::span<const std::byte>>& inputs) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  std::uint64_t fp = program.fingerprint();
  XXH3_64bits_update(st, &fp, sizeof fp);
  for (const auto& [name, bytes] : inputs) {  // std::map: in name order, so every process derives the same id
    std::uint64_t n = name.size();
    XXH3_64bits_update(st, &n, sizeof n);
    XXH3_64bits_update(st, name.data(), name.size());
    n = bytes.size();
    XXH3_64bits_update(st, &n, sizeof n);
    XXH3_64bits_update(st, bytes.data(), bytes.size());
  }
  std::uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return fmt::format("{:016x}", h);
}

static Status check_instance(const std::string& id) {
  if (id.empty() || id.size() > 64) return Status::InvalidArgument("instance id '" + id + "' must have 1 to 64 characters");
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return Status::InvalidArgument("instance id '" + id + "' may hold only letters, digits, '-', '_' and '.' (it is part of store keys)");
  return Status::Ok();
}

Result<RunStats> run_scheduler(const Program& program, Store& store, const std::map<std::string, std::span<const std::byte>>& inputs,
                               const RunOptions& options) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  RunOptions o = options;
  if (o.instance.empty()) {
    for (TaskId t = 0; t < program.tasks().size(); ++t)
      if (!program.task(t).computes)
        for (LabelId l : program.task(t).produces)
          if (!inputs.count(program.label(l).name))
            return Status::InvalidArgument("input label '" + program.label(l).name +
                                           "' not given: a scheduler without every input must be told the instance id to join");
    o.instance = derive_instance(program, inputs);
  }
  REDFLOW_RETURN_IF_ERROR(check_instance(o.instance));
  Scheduler s(program, store, o.instance, o);
  return s.run(inputs);
}

Status bind_instance(const Program& program, Store& store, const std::string& instance) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  REDFLOW_RETURN_IF_ERROR(check_instance(instance));
  return LabelCodec(store, program, instance).bind_instance(true);
}

Result<std::map<std::string, Value>> read_results(const Program& program, Store& store, const std::string& instance) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  REDFLOW_RETURN_IF_ERROR(check_instance(instance));
  LabelCodec codec(store, program, instance);
  REDFLOW_RETURN_IF_ERROR(codec.bind_instance(false));
  std::map<std::string, Value> out;
  for (LabelId l = 0; l < program.labels().size(); ++l) {
    if (!program.label(l).result) continue;
    auto v = codec.read(l);
    if (!v.ok()) return v.status();
    if (!v->present())
      return Status::NotFound("result label '" + program.label(l).name + "' has no value in instance " + instance +
                              (v->retired() ? " (it was retired: written by a program that did not count it as a result)" : ""));
    out[program.label(l).name] = Value(v->bytes.begin(), v->bytes.end());
  }
  return out;
}

Result<std::uint64_t> clean_instance(const Program& program, Store& store, const std::string& instance) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  REDFLOW_RETURN_IF_ERROR(check_instance(instance));
  LabelCodec codec(store, program, instance);
  REDFLOW_RETURN_IF_ERROR(codec.bind_instance(false));  // another program's instance is not ours to delete
  std::uint64_t removed = 0;
  for (LabelId l = 0; l < program.labels().size(); ++l) {
    auto n = codec.remove(l);
    if (!n.ok()) return n.status();
    removed += *n;
  }
  // Claims lapse by themselves; one not lapsed yet goes now (not counted:
  // the count is of the keys that held the instance's values).
  if (codec.claims_possible()) {
    for (TaskId t = 0; t < program.tasks().size(); ++t)
      if (program.task(t).computes)
        if (auto n = codec.remove_claim(t); !n.ok()) return n.status();
  }
  // The coalescing the instance recorded, if it chose it automatically.
  auto choice = store.remove(codec.coalesce_key());
  if (!choice.ok()) return Status::IOError("removing the coalescing record of instance '" + instance + "': " + choice.status().message());
  removed += *choice;
  auto n = codec.remove_instance_key();
  if (!n.ok()) return n.status();
  return removed + *n;
}

Result<Run> run_program(const Program& program, Store& store, const std::map<std::string, std::span<const std::byte>>& inputs,
                        unsigned schedulers, RunOptions options) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  if (schedulers == 0) return Status::InvalidArgument("run_program needs at least one scheduler");
  REDFLOW_RETURN_IF_ERROR(program.validate());  // before the threads, which validate it again concurrently
  if (options.instance.empty()) options.instance = derive_instance(program, inputs);
  std::vector<Result<RunStats>> results(schedulers, Status::Internal("scheduler did not run"));
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < schedulers; ++i)
    threads.emplace_back([&, i] {
      RunOptions o = options;
      o.seed = options.seed * 1000003 + i;
      results[i] = run_scheduler(program, store, inputs, o);
    });
  for (auto& t : threads) t.join();
  Run run;
  run.instance = options.instance;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    run.stats += *r;
  }
  auto out = read_results(program, store, options.instance);
  if (!out.ok()) return out.status();
  run.outputs = std::move(*out);
  return run;
}

}  // namespace redflow::rem
