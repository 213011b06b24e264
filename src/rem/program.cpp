// The REM program model and its validation (section 3.1 of the REM paper).
#include <xxhash.h>

#include <fmt/format.h>

#include <set>

#include "redflow/rem.hpp"

namespace redflow::rem {

LabelId Program::label(std::string name, std::size_t bytes) {
  labels_.push_back(Label{std::move(name), bytes, false});
  return static_cast<LabelId>(labels_.size() - 1);
}

TaskId Program::task(std::string name, std::vector<LabelId> required, std::vector<LabelId> produces, Computes computes) {
  tasks_.push_back(Task{std::move(name), std::move(required), std::move(produces), std::move(computes)});
  return static_cast<TaskId>(tasks_.size() - 1);
}

LabelId Program::input(std::string name, std::size_t bytes) {
  LabelId l = label(name, bytes);
  task("input " + name, {}, {l}, nullptr);
  return l;
}

std::optional<LabelId> Program::find_label(std::string_view name) const {
  for (LabelId l = 0; l < labels_.size(); ++l)
    if (labels_[l].name == name) return l;
  return std::nullopt;
}

std::optional<TaskId> Program::find_task(std::string_view name) const {
  for (TaskId t = 0; t < tasks_.size(); ++t)
    if (tasks_[t].name == name) return t;
  return std::nullopt;
}

Status Program::validate() const {
  auto bad = [&](std::string msg) { return Status::InvalidGraph("REM program '" + name_ + "': " + msg); };
  if (tasks_.empty()) return bad("has no tasks");
  {
    std::set<std::string_view> seen;
    for (const Label& l : labels_)
      if (!seen.insert(l.name).second) return bad("label '" + l.name + "' is declared twice");
    seen.clear();
    for (const Task& t : tasks_)
      if (!seen.insert(t.name).second) return bad("task '" + t.name + "' is declared twice");
  }
  // producer: L -> T must be a total function...
  constexpr TaskId kNone = ~TaskId{0};
  std::vector<TaskId> producer(labels_.size(), kNone);
  for (TaskId t = 0; t < tasks_.size(); ++t) {
    const Task& task = tasks_[t];
    for (LabelId l : task.required)
      if (l >= labels_.size()) return bad(fmt::format("task '{}' requires label #{}, which does not exist", task.name, l));
    // ... and surjective: a task that produces nothing could never be told apart from not having run.
    if (task.produces.empty()) return bad("task '" + task.name + "' produces no label (producer must be surjective)");
    for (LabelId l : task.produces) {
      if (l >= labels_.size()) return bad(fmt::format("task '{}' produces label #{}, which does not exist", task.name, l));
      if (producer[l] == t) return bad("task '" + task.name + "' lists label '" + labels_[l].name + "' twice in produces");
      if (producer[l] != kNone)
        return bad("label '" + labels_[l].name + "' has two producers: tasks '" + tasks_[producer[l]].name + "' and '" + task.name +
                   "' (single assignment)");
      producer[l] = t;
    }
  }
  bool any_result = false;
  for (LabelId l = 0; l < labels_.size(); ++l) {
    if (producer[l] == kNone) return bad("label '" + labels_[l].name + "' has no producer (producer must be total)");
    any_result |= labels_[l].result;
  }
  if (!any_result) return bad("has no result label (R is empty, so no run could ever finish)");
  // The partial order: depth-first search over "task requires a label of task";
  // a back edge is a task that requires, directly or not, its own labels.
  std::vector<std::uint8_t> state(tasks_.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<TaskId> stack;
  std::vector<std::pair<TaskId, std::size_t>> dfs;
  for (TaskId root = 0; root < tasks_.size(); ++root) {
    if (state[root]) continue;
    dfs.push_back({root, 0});
    state[root] = 1;
    while (!dfs.empty()) {
      auto& [t, next] = dfs.back();
      if (next == tasks_[t].required.size()) {
        state[t] = 2;
        dfs.pop_back();
        continue;
      }
      LabelId l = tasks_[t].required[next++];
      TaskId p = producer[l];
      if (state[p] == 1) {
        std::string cycle = "'" + tasks_[p].name + "'";
        bool in = false;
        for (auto& [u, n] : dfs) {
          if (u == p) in = true;
          else if (in) cycle += " -> '" + tasks_[u].name + "'";
        }
        return bad("task '" + tasks_[t].name + "' requires label '" + labels_[l].name + "', which it produces " +
                   (p == t ? std::string("itself") : "through the cycle " + cycle + " -> '" + tasks_[p].name + "'") +
                   " (no partial order of the tasks exists)");
      }
      if (state[p] == 0) {
        state[p] = 1;
        dfs.push_back({p, 0});
      }
    }
  }
  // Scheduler threads validate the same program at once (run_program): they
  // only read the cache, which changes only when the program did.
  if (producer_ != producer) producer_ = std::move(producer);
  return Status::Ok();
}

std::uint64_t Program::fingerprint() const {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  auto add = [&](const void* p, std::size_t n) { XXH3_64bits_update(st, p, n); };
  auto add_str = [&](const std::string& s) {
    std::uint64_t n = s.size();
    add(&n, sizeof n);
    add(s.data(), s.size());
  };
  add_str(name_);
  add_str(identity_);
  for (const Label& l : labels_) {
    add_str(l.name);
    std::uint64_t b = l.bytes;
    add(&b, sizeof b);
    add(&l.result, 1);
  }
  for (const Task& t : tasks_) {
    add_str(t.name);
    std::uint64_t n = t.required.size();
    add(&n, sizeof n);
    add(t.required.data(), t.required.size() * sizeof(LabelId));
    n = t.produces.size();
    add(&n, sizeof n);
    add(t.produces.data(), t.produces.size() * sizeof(LabelId));
  }
  std::uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

RunStats& RunStats::operator+=(const RunStats& o) {
  executed += o.executed;
  duplicates += o.duplicates;
  skipped += o.skipped;
  polls += o.polls;
  waits += o.waits;
  left_to_claimer += o.left_to_claimer;
  retired += o.retired;
  bytes_written += o.bytes_written;
  bytes_read += o.bytes_read;
  seconds = std::max(seconds, o.seconds);
  finished = finished || o.finished;
  return *this;
}

RunStats RunStats::since(const RunStats& before) const {
  RunStats d;
  d.executed = executed - before.executed;
  d.duplicates = duplicates - before.duplicates;
  d.skipped = skipped - before.skipped;
  d.polls = polls - before.polls;
  d.waits = waits - before.waits;
  d.left_to_claimer = left_to_claimer - before.left_to_claimer;
  d.retired = retired - before.retired;
  d.bytes_written = bytes_written - before.bytes_written;
  d.bytes_read = bytes_read - before.bytes_read;
  return d;
}

}  // namespace redflow::rem
