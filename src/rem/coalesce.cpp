// Task and label coalescing (docs/rem.md, "Coalescing"): fewer, coarser tasks
// and fewer, larger store values, so that per-task selection and per-value
// store round trips are paid less often.
#include <fmt/format.h>

#include <cstring>

#include "rem/task_levels.hpp"

namespace redflow::rem {

Value pack_bundle(std::span<const Value> parts) {
  std::size_t total = 4 + 8 * parts.size();
  for (const Value& p : parts) total += p.size();
  Value out(total);
  std::uint32_t n = static_cast<std::uint32_t>(parts.size());
  std::memcpy(out.data(), &n, 4);
  std::size_t at = 4 + 8 * parts.size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::uint64_t sz = parts[i].size();
    std::memcpy(out.data() + 4 + 8 * i, &sz, 8);
    if (sz) std::memcpy(out.data() + at, parts[i].data(), sz);
    at += sz;
  }
  return out;
}

Result<std::vector<std::span<const std::byte>>> unpack_bundle(std::span<const std::byte> b) {
  std::uint32_t n;
  if (b.size() < 4) return Status::InvalidArgument("label bundle shorter than its count");
  std::memcpy(&n, b.data(), 4);
  if (b.size() < 4 + std::size_t{n} * 8) return Status::InvalidArgument("label bundle shorter than its size table");
  std::vector<std::span<const std::byte>> parts;
  std::size_t at = 4 + std::size_t{n} * 8;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint64_t sz;
    std::memcpy(&sz, b.data() + 4 + 8 * i, 8);
    if (sz > b.size() - at) return Status::InvalidArgument(fmt::format("label bundle part {} runs past its end", i));
    parts.push_back(b.subspan(at, sz));
    at += sz;
  }
  if (at != b.size()) return Status::InvalidArgument("label bundle has trailing bytes");
  return parts;
}

namespace {

// How one member task of a coalesced task finds its inputs: an index into the
// coalesced task's required list, and a part if that label is a bundle.
struct Source {
  std::size_t arg;
  std::int32_t part;  // -1: the whole value
};

struct Member {
  const Task* task;
  std::vector<Source> inputs;
  std::vector<std::pair<bool, std::size_t>> outputs;  // (into a bundle?, index in produces or in the bundle's parts)
  std::vector<std::size_t> output_bytes;              // declared sizes, which a bundle does not keep
};

}  // namespace

// Level of each task in the partial order (longest path from a source):
// tasks of one level never depend on each other, so any grouping within a
// level keeps the order acyclic.
std::vector<std::uint32_t> task_levels(const Program& program) {
  const auto& tasks = program.tasks();
  std::vector<std::uint32_t> level(tasks.size(), 0);
  std::vector<std::uint8_t> done(tasks.size(), 0);
  std::vector<TaskId> stack;
  for (TaskId root = 0; root < tasks.size(); ++root) {
    stack.push_back(root);
    while (!stack.empty()) {
      TaskId t = stack.back();
      if (done[t]) {
        stack.pop_back();
        continue;
      }
      bool ready = true;
      std::uint32_t lv = 0;
      for (LabelId l : tasks[t].required) {
        TaskId p = program.producer(l);
        if (!done[p]) ready = false, stack.push_back(p);
        else lv = std::max(lv, level[p] + 1);
      }
      if (ready) level[t] = lv, done[t] = 1, stack.pop_back();
    }
  }
  return level;
}

Result<Coalesced> coalesce(const Program& program, const CoalesceOptions& options) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  if (options.tasks == 0) return Status::InvalidArgument("coalesce: tasks must be at least 1");
  const auto& tasks = program.tasks();
  const std::vector<std::uint32_t> level = task_levels(program);
  std::map<std::uint32_t, std::vector<TaskId>> by_level;
  std::vector<std::vector<TaskId>> groups;
  for (TaskId t = 0; t < tasks.size(); ++t) {
    if (!tasks[t].computes) groups.push_back({t});  // source tasks stay as they are: callers write them by name
    else by_level[level[t]].push_back(t);
  }
  for (auto& [lv, ts] : by_level)
    for (std::size_t i = 0; i < ts.size(); i += options.tasks)
      groups.emplace_back(ts.begin() + i, ts.begin() + std::min(ts.size(), i + options.tasks));

  Coalesced c{Program(program.name()), std::vector<Coalesced::Place>(program.labels().size())};
  Program& out = c.program;
  // Labels first: plain ones keep their names; with options.labels, the
  // non-result labels of a group with several of them become one bundle.
  std::vector<std::vector<LabelId>> group_produces(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<LabelId> bundled;
    for (TaskId t : groups[g])
      for (LabelId l : tasks[t].produces)
        if (options.labels && tasks[t].computes && !program.label(l).result) bundled.push_back(l);
    if (bundled.size() < 2) bundled.clear();
    LabelId bundle = 0;
    if (!bundled.empty()) {
      bundle = out.label("bundle " + program.label(bundled.front()).name + fmt::format(" +{}", bundled.size() - 1));
      group_produces[g].push_back(bundle);
    }
    for (TaskId t : groups[g])
      for (LabelId l : tasks[t].produces) {
        auto it = std::find(bundled.begin(), bundled.end(), l);
        if (it != bundled.end()) {
          c.where[l] = {bundle, static_cast<std::uint32_t>(it - bundled.begin()), true};
        } else {
          LabelId nl = out.label(program.label(l).name, program.label(l).bytes);
          if (program.label(l).result) out.result(nl);
          c.where[l] = {nl, 0, false};
          group_produces[g].push_back(nl);
        }
      }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Task& first = tasks[groups[g].front()];
    std::string name = groups[g].size() == 1 ? first.name : fmt::format("{}+{}", first.name, groups[g].size() - 1);
    if (!first.computes) {
      out.task(name, {}, group_produces[g], nullptr);
      continue;
    }
    std::vector<LabelId> required;
    std::vector<Member> members;
    std::size_t bundle_parts = 0;
    for (TaskId t : groups[g]) {
      Member m{&tasks[t], {}, {}, {}};
      for (LabelId l : tasks[t].required) {
        const auto& w = c.where[l];
        auto it = std::find(required.begin(), required.end(), w.label);
        if (it == required.end()) it = required.insert(required.end(), w.label);
        m.inputs.push_back({static_cast<std::size_t>(it - required.begin()), w.bundle ? static_cast<std::int32_t>(w.part) : -1});
      }
      for (LabelId l : tasks[t].produces) {
        const auto& w = c.where[l];
        m.output_bytes.push_back(program.label(l).bytes);
        if (w.bundle) {
          m.outputs.push_back({true, w.part});
          ++bundle_parts;
        } else {
          auto pos = std::find(group_produces[g].begin(), group_produces[g].end(), w.label) - group_produces[g].begin();
          m.outputs.push_back({false, static_cast<std::size_t>(pos)});
        }
      }
      members.push_back(std::move(m));
    }
    out.task(name, required, group_produces[g],
             [members, bundle_parts](std::span<const std::span<const std::byte>> in, std::span<Value> produced) -> Status {
               std::vector<std::optional<std::vector<std::span<const std::byte>>>> unpacked(in.size());
               std::vector<Value> parts(bundle_parts);
               for (const Member& m : members) {
                 std::vector<std::span<const std::byte>> args;
                 for (const Source& s : m.inputs) {
                   if (s.part < 0) {
                     args.push_back(in[s.arg]);
                     continue;
                   }
                   if (!unpacked[s.arg]) {
                     auto u = unpack_bundle(in[s.arg]);
                     if (!u.ok()) return u.status();
                     unpacked[s.arg] = std::move(*u);
                   }
                   if (static_cast<std::size_t>(s.part) >= unpacked[s.arg]->size()) return Status::Internal("bundle lacks a part");
                   args.push_back((*unpacked[s.arg])[s.part]);
                 }
                 std::vector<Value> mine(m.outputs.size());
                 for (std::size_t i = 0; i < mine.size(); ++i) mine[i].resize(m.output_bytes[i]);
                 REDFLOW_RETURN_IF_ERROR(m.task->computes(args, mine));
                 for (std::size_t i = 0; i < mine.size(); ++i) {
                   if (m.outputs[i].first) parts[m.outputs[i].second] = std::move(mine[i]);
                   else produced[m.outputs[i].second] = std::move(mine[i]);
                 }
               }
               if (bundle_parts) produced[0] = pack_bundle(parts);
               return Status::Ok();
             });
  }
  REDFLOW_RETURN_IF_ERROR(out.validate());
  c.program.set_identity(program.identity() + fmt::format("\ncoalesce tasks={} labels={}", options.tasks, options.labels));
  return c;
}

}  // namespace redflow::rem
