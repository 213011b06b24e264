// The Relentless Execution Model (Wilson and von Ronne, 2015): a program of
// tasks and labels, executed by independent scheduler processes that meet only
// through a single-assignment key-value store. No driver, no coordinator: any
// process may die or join at any moment and the run still finishes with the
// same result. docs/rem.md describes the model, the store layout, task
// selection, coalescing and failure behaviour.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redflow/bytes.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/runtime.hpp"
#include "redflow/status.hpp"

namespace redflow::rem {

using TaskId = std::uint32_t;
using LabelId = std::uint32_t;
using Value = Bytes;  // a label's value (redflow/bytes.hpp)
using SharedValue = std::shared_ptr<const Value>;  // a value as a store or a cache hands it out

// computes(task): the values of requires(task), in the order the task listed
// them, to the values of the labels it produces, in the order it listed them.
// `produced` arrives sized to the labels' declared bytes (when declared); a
// task returns an error instead of throwing.
using Computes = std::function<Status(std::span<const std::span<const std::byte>> required, std::span<Value> produced)>;

// A dictionary key of the program. Its producer is the task that listed it in
// `produces`; `bytes` = 0 means any size.
struct Label {
  std::string name;
  std::size_t bytes = 0;
  bool result = false;      // member of R: the run is over when every result label has a value
};

// A unit of work: reads `requires`, writes `produces`. A source task has no
// computes: its labels are the program's inputs, written by whoever starts a run.
struct Task {
  std::string name;
  std::vector<LabelId> required;  // requires(task), ordered as computes expects (`requires` is a C++20 keyword)
  std::vector<LabelId> produces;  // ordered as computes writes them
  Computes computes;              // empty: source task (input labels)
};

// An explicit data dependency description (the REM paper's section 3.1): T, L, R,
// producer, requires, computes. Built freely, then validate() checks it, naming
// the bad task or label.
class Program {
 public:
  explicit Program(std::string name = "rem") : name_(std::move(name)) {}

  LabelId label(std::string name, std::size_t bytes = 0);
  TaskId task(std::string name, std::vector<LabelId> required, std::vector<LabelId> produces, Computes computes);
  // An input label and its source task "input NAME".
  LabelId input(std::string name, std::size_t bytes = 0);
  void result(LabelId l) { labels_[l].result = true; }

  // producer total and a function (each label listed by exactly one task),
  // surjective (every task produces a label), requires within L, R non-empty,
  // unique names, and the partial order: no task requires, directly or not,
  // a label it produces itself (the cycle is named).
  Status validate() const;

  const std::string& name() const { return name_; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<Label>& labels() const { return labels_; }
  const Task& task(TaskId t) const { return tasks_[t]; }
  const Label& label(LabelId l) const { return labels_[l]; }
  std::optional<LabelId> find_label(std::string_view name) const;
  std::optional<TaskId> find_task(std::string_view name) const;
  // Only after validate(): producer(l).
  TaskId producer(LabelId l) const { return producer_.at(l); }
  // Extra text hashed into the program hash (fingerprint()): whatever the
  // tasks' computes depend on that the structure does not show. from_graph
  // puts the graph's DOT (actor functions and their args) and the constants'
  // bytes here; coalesce adds its options.
  void set_identity(std::string text) { identity_ = std::move(text); }
  const std::string& identity() const { return identity_; }
  // The program hash: the name, every label (name, size, result or not), every
  // task (name, required and produced labels) and identity(). Deterministic,
  // so separately started schedulers of one program agree on it; every stored
  // record carries it and an instance is bound to it (docs/rem.md).
  std::uint64_t fingerprint() const;

 private:
  std::string name_;
  std::string identity_;
  std::vector<Label> labels_;
  std::vector<Task> tasks_;
  mutable std::vector<TaskId> producer_;  // filled by validate()
};

// Maps a redflow graph onto a REM program: data node -> label, actor -> task,
// input nodes -> input labels written by the caller, constants -> tasks
// without inputs that write them, outputs -> result labels. Checks the graph
// like Runtime::load does (structure, known functions, shape checks).
Result<Program> from_graph(const Graph& graph, const Registry& registry);

// Coalescing (docs/rem.md, "Coalescing"): `tasks` fine tasks of one level of
// the partial order executed as one task; with `labels`, the labels of such a
// task stored as one value. Result labels keep their names.
struct CoalesceOptions {
  unsigned tasks = 1;
  bool labels = false;
};
// The coalesced program, and where each label of the original program lives in it.
struct Coalesced {
  Program program;
  struct Place {
    LabelId label;
    std::uint32_t part;  // index inside a bundle; 0 and bundle=false for plain labels
    bool bundle;
  };
  std::vector<Place> where;  // by original LabelId
};
Result<Coalesced> coalesce(const Program& program, const CoalesceOptions& options);
// Bundle encoding: u32 count, count x u64 sizes, then the parts.
Value pack_bundle(std::span<const Value> parts);
Result<std::vector<std::span<const std::byte>>> unpack_bundle(std::span<const std::byte> bundle);

// The single-assignment store the scheduler processes share. Raw keys and
// bytes; the label codec (checksums, chunks, manifests) sits above it.
class Store {
 public:
  virtual ~Store() = default;
  // Writes `value` under `key` only if the key has none: true if this call
  // wrote it, false if a value was already there. Errors (full, unreachable)
  // are Status, never a silent false.
  virtual Result<bool> add(const std::string& key, std::span<const std::byte> value) = 0;
  // add() of a buffer nobody changes any more: a store in this process keeps
  // this very buffer instead of a copy.
  virtual Result<bool> add_shared(const std::string& key, SharedValue value) { return add(key, *value); }
  // The value under `key`, or null if the key has none. Shared: a store in
  // this process hands out the value it holds (never changed once written)
  // without a copy.
  virtual Result<SharedValue> get(const std::string& key) = 0;
  // get() of several keys in one round trip where the store can (memcached's
  // multi-get, Redis's MGET): the values in the keys' order, null where a
  // key has none.
  virtual Result<std::vector<SharedValue>> get_many(std::span<const std::string> keys) {
    std::vector<SharedValue> out;
    for (const std::string& k : keys) {
      auto v = get(k);
      if (!v.ok()) return v.status();
      out.push_back(std::move(*v));
    }
    return out;
  }
  virtual Result<bool> exists(const std::string& key) = 0;
  // Overwrites the value of a key that has one (true) and never creates a
  // key (false). Only retiring a label uses it: the label's record becomes
  // a small one that keeps its checksum (docs/rem.md, "Retiring labels"),
  // so the key stays written and single assignment still holds.
  virtual Result<bool> replace(const std::string& key, std::span<const std::byte> value) = 0;
  // Deletes `key`: true if it held a value. Only cleaning out a finished
  // instance deletes (clean_instance()); a run never does.
  virtual Result<bool> remove(const std::string& key) = 0;
  // add() of a key that the store forgets `ttl` after it was written, for
  // claims (a scheduler says it runs a task; if it dies, the claim lapses and
  // another may run it). A store that cannot forget keys says so with
  // expires() false, and the schedulers then run without claims.
  virtual bool expires() const { return false; }
  virtual Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) {
    (void)key, (void)value, (void)ttl;
    return Status::Internal(describe() + " keeps every key for good: no claims (expires() is false)");
  }
  // Largest value one add() may carry; larger label values are chunked.
  virtual std::size_t max_value_bytes() const = 0;
  virtual std::string describe() const = 0;
};

// The embedded default: a map behind a mutex, shared by scheduler threads of
// one process, that keeps values as written (no copy in, none out). Its item
// limit is only there to let tests exercise chunking with a small one.
std::unique_ptr<Store> make_inproc_store(std::size_t max_value_bytes = std::size_t{1} << 30);
// memcached://H:P[,H:P...] (libmemcached, consistent hashing over the servers),
// redis://H:P (hiredis, SET NX), inproc. Errors name the bad part of the spec.
Result<std::unique_ptr<Store>> open_store(const std::string& spec);

// Coalescing chosen from what the store costs here (docs/rem.md,
// "Coalescing chosen automatically"): a store round trip and the time per
// byte of a value in and out, measured now, against the round trips and
// bytes of the program's average fine task. K is the largest power of two
// not above twice the ratio of the task's round-trip time to its bytes'
// time (coalesce until round trips cost about half of what moving the
// bytes does, no further), and at most an eighth of the average level's
// width (each level keeps work for several schedulers); labels are bundled
// when K > 1. With an instance, the first scheduler's choice is recorded
// under it and every later one takes that (all schedulers of an instance
// run the same program).
struct CoalesceChoice {
  CoalesceOptions options;
  double round_trip_us = 0;     // one existence check, median of several
  double us_per_mb = 0;         // a value added and read back, per MB of it, round trips taken off
  double task_round_trips = 0;  // a fine task's: existence check, claim, reads, writes, a retirement per label written
  double task_bytes = 0;        // a fine task's required and produced bytes
  bool recorded = false;        // taken from the instance's record: another scheduler chose it
};
Result<CoalesceChoice> choose_coalescing(const Program& program, Store& store, const std::string& instance = "");

// What one scheduler saw.
struct RunStats {
  std::uint64_t executed = 0;     // task executions (coalesced tasks count once)
  std::uint64_t duplicates = 0;   // executions whose labels were all already written by someone else
  std::uint64_t skipped = 0;      // chosen tasks dropped because their labels appeared meanwhile
  std::uint64_t polls = 0;        // existence checks against the store
  std::uint64_t waits = 0;        // sleeps because nothing was runnable (inputs not yet written)
  std::uint64_t left_to_claimer = 0;  // chosen tasks another scheduler had claimed: looked at again later, not run now
  std::uint64_t retired = 0;      // labels whose values this scheduler retired (RunOptions::retire_labels)
  std::uint64_t bytes_written = 0, bytes_read = 0;
  double seconds = 0;
  bool finished = false;          // saw every result label in the store (false: stopped)
  RunStats& operator+=(const RunStats& o);
  // The counts gained since `before` (an earlier copy of these stats);
  // `seconds` and `finished` are left out (0, false).
  RunStats since(const RunStats& before) const;
};

struct RunOptions {
  std::string instance;           // keys carry it so runs never mix; empty: derived from program + inputs
  std::uint64_t seed = 1;         // randomised task selection
  std::chrono::milliseconds timeout{0};  // 0: none; otherwise a clear error when the run is not over by then
  const std::atomic<bool>* stop = nullptr;  // set by someone else to make this scheduler stop (not an error)
  std::size_t cache_bytes = std::size_t{256} << 20;  // label values kept locally
  // Claims (docs/rem.md, "Claims"): before running a task, a scheduler adds
  // a key saying so that lapses after a lease (a multiple of the tasks' run
  // time it measured, at least claim_min_lease); another scheduler that
  // picks the task meanwhile leaves it and looks again after about two
  // task times (doubling while the claim holds, at most half a lease), by
  // when it is usually done, or later its claimer is gone. Off: every scheduler may run
  // any task it picks (more duplicates, one store write less per task).
  // Only on stores that expire keys (Store::expires(): inproc, Redis,
  // memcached, whose leases are whole seconds).
  bool claims = true;
  std::chrono::milliseconds claim_min_lease{50};
  // Retiring labels (docs/rem.md, "Retiring labels"): once every task that
  // needs a label has run, its value leaves the store and only its size and
  // checksum stay under its key, so a long run holds about the labels of
  // the tasks in flight instead of every label it ever wrote. Inputs and
  // results are never retired. Off: every label's value stays until the
  // instance is cleaned (to read intermediate labels after a run). Labels
  // smaller than retire_min_bytes stay too: a retirement costs a store
  // round trip, and a small label frees little.
  bool retire_labels = true;
  std::size_t retire_min_bytes = 16 << 10;
  // Called by the scheduler after each task it chose (run, found already
  // written, or dropped) and once as it ends, from its own thread, with what
  // its stats gained since the last call: the sum of the calls is its final
  // RunStats (but `seconds` and `finished`). For a live view (`redflow rem
  // --dashboard`); must be cheap and safe to call from several schedulers at once.
  std::function<void(const RunStats& gained)> on_progress{};
};

// The instance id of a run: hex of a hash of the program and its input values.
std::string derive_instance(const Program& program, const std::map<std::string, std::span<const std::byte>>& inputs);

// Writes the input labels it was given (verifying equal checksums when they
// are already there), then selects and executes tasks until every result label
// has a value in the store. Inputs may be omitted by schedulers that join a run
// someone else started (then `instance` must be given).
Result<RunStats> run_scheduler(const Program& program, Store& store,
                               const std::map<std::string, std::span<const std::byte>>& inputs, const RunOptions& options);

// Binds `instance` to `program` in the store: the first caller writes the
// program's hash under the instance's key (single assignment); a caller with
// another program is refused with an error naming the instance and both
// programs. run_scheduler does this first; a launcher may call it to refuse
// once before it starts scheduler processes.
Status bind_instance(const Program& program, Store& store, const std::string& instance);

// Reads the result labels of a finished instance, verifying their checksums
// and that the instance and every record belong to this program.
Result<ByteMap> read_results(const Program& program, Store& store, const std::string& instance);

// Deletes every key of `instance` from the store: each label's record and
// the chunks it lists, and any claim not lapsed yet, then the key that
// binds the instance to its program (last, so an interrupted clean can be
// run again). Refused, deleting nothing, when the instance belongs to
// another program. Returns how many keys of records, chunks and the
// instance it deleted (claims are not counted). Run it once no scheduler of the instance runs any more: a
// scheduler still running would write its labels again. Chunks whose record
// was never written (a writer killed between its chunks and its record, and
// nobody finished the label after it) are referenced by no key and are not
// found: flush the store to drop those.
Result<std::uint64_t> clean_instance(const Program& program, Store& store, const std::string& instance);

// Convenience: `schedulers` independent schedulers (threads, each with its own
// cache and random choices) on one store; returns the outputs and summed stats.
struct Run {
  ByteMap outputs;  // the result labels, by name
  RunStats stats;
  std::string instance;
};
Result<Run> run_program(const Program& program, Store& store, const std::map<std::string, std::span<const std::byte>>& inputs,
                        unsigned schedulers, RunOptions options = {});

}  // namespace redflow::rem
