// A Workflow as a redflow graph with its reference output, and the actors
// it runs (workflow.hpp).
#include "apps/workflow.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include "redflow/actor_context.hpp"

namespace redflow::apps {

namespace {

constexpr std::uint64_t kTaskSeed = 0x5746'7461'736bULL;    // "WFtask"
constexpr std::uint64_t kDigestSeed = 0x5746'6469'6765ULL;  // "WFdige"
constexpr std::size_t kTokenBytes = 8;

// Bytes from a 64-bit state (splitmix64): a task's output, a workflow input file.
void fill(std::uint64_t state, std::span<std::byte> out) {
  std::size_t i = 0;
  while (i < out.size()) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const std::size_t n = std::min<std::size_t>(8, out.size() - i);
    std::memcpy(out.data() + i, &z, n);
    i += n;
  }
}

// What a task's output is made from: its index and its inputs, in port order.
std::uint64_t task_state(std::uint64_t index, std::span<const std::span<const std::byte>> inputs) {
  std::uint64_t h = XXH64(&index, sizeof index, kTaskSeed);
  for (const auto& in : inputs) h = XXH64(in.data(), in.size(), h);
  return h;
}

std::uint64_t digest_of(std::span<const std::span<const std::byte>> inputs) {
  std::uint64_t h = kDigestSeed;
  for (const auto& in : inputs) h = XXH64(in.data(), in.size(), h);
  return h;
}

void run_task(ActorContext& ctx) {
  const auto index = ctx.find_arg_u64(ctx.args(), "id"), micros = ctx.find_arg_u64(ctx.args(), "micros");
  if (!index || !micros) return ctx.fail("wf.task needs args id=N,micros=M");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(*micros);
  std::vector<std::span<const std::byte>> inputs;
  for (std::size_t p = 0; p < ctx.num_inputs(); ++p) inputs.push_back(ctx.input_bytes(p));
  fill(task_state(*index, inputs), ctx.output_bytes());
  if (ctx.find_arg_u64(ctx.args(), "spin").value_or(0) != 0) {
    while (std::chrono::steady_clock::now() < deadline) {
    }
  } else {
    std::this_thread::sleep_until(deadline);
  }
}

void run_digest(ActorContext& ctx) {
  std::vector<std::span<const std::byte>> inputs;
  for (std::size_t p = 0; p < ctx.num_inputs(); ++p) inputs.push_back(ctx.input_bytes(p));
  const std::uint64_t h = digest_of(inputs);
  if (ctx.output_bytes().size() != sizeof h) return ctx.fail("wf.digest writes 8 bytes");
  std::memcpy(ctx.output_bytes().data(), &h, sizeof h);
}

std::string check_task(const ActorShape& s) {
  for (const char* key : {"id", "micros"})
    if (!ActorContext::find_arg_u64(s.args, key)) return std::string("missing or malformed arg '") + key + "' (args=\"id=N,micros=M\")";
  return s.output_bytes == 0 ? "writes 0 bytes; a task's output has at least 1" : "";
}

std::string check_digest(const ActorShape& s) { return s.output_bytes == 8 ? "" : "writes " + std::to_string(s.output_bytes) + " bytes, not 8"; }

// DOT names from ids: letters, digits and '_', unique.
class Names {
 public:
  std::string make(const char* prefix, const std::string& id) {
    std::string s = prefix;
    for (char c : id) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    const std::string base = s;
    for (int n = 2; !used_.insert(s).second; ++n) s = base + "_" + std::to_string(n);
    return s;
  }

 private:
  std::set<std::string> used_;
};

}  // namespace

std::vector<std::size_t> task_order(const Workflow& w) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) index[w.tasks[i].id] = i;
  std::vector<std::size_t> waiting(w.tasks.size()), order;
  std::vector<std::vector<std::size_t>> after(w.tasks.size());
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    for (const auto& p : w.tasks[i].parents) {
      after[index.at(p)].push_back(i);
      ++waiting[i];
    }
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    if (waiting[i] == 0) order.push_back(i);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (std::size_t j : after[order[k]])
      if (--waiting[j] == 0) order.push_back(j);
  return order;
}

void register_workflow_actors(Registry& reg) {
  reg.add("wf.task", ActorSpec{run_task, check_task, false, "a workflow task: waits its args' micros, writes a digest of its inputs"});
  reg.add("wf.digest", ActorSpec{run_digest, check_digest, /*on_driver=*/true, "8 bytes: a digest of all its inputs (a workflow's result)"});
}

Result<WorkflowProblem> make_workflow_problem(const Workflow& w, const WorkflowImportOptions& o) {
  if (w.tasks.empty()) return Status::InvalidArgument("WfFormat: the workflow has no task");
  if (!(o.time_scale >= 0) || !(o.bytes_scale >= 0) || !(o.total_seconds >= 0))
    return Status::InvalidArgument("the time and bytes scales are numbers >= 0");
  WorkflowProblem out;
  double runtime = 0;
  for (const auto& t : w.tasks) runtime += t.runtime_s;
  out.time_scale = o.time_scale;
  if (o.total_seconds > 0) {
    if (runtime <= 0) return Status::InvalidArgument("--total-seconds: every task of the workflow has a runtime of 0; there is nothing to scale");
    out.time_scale = o.total_seconds / runtime;
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) index[w.tasks[i].id] = i;
  std::map<std::string, std::size_t> writer;
  std::set<std::string> read;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    for (const auto& f : w.tasks[i].outputs) writer[f] = i;
    for (const auto& f : w.tasks[i].inputs) read.insert(f);
  }
  auto bytes_of = [&](const std::string& f) {
    const long long scaled = std::llround(static_cast<double>(w.file_bytes.at(f)) * o.bytes_scale);
    return std::max<std::size_t>(o.min_bytes, static_cast<std::size_t>(std::max(0LL, scaled)));
  };
  // A task's ports: its input files, then the whole output of each parent it shares no file with.
  auto ports = [&](std::size_t i) {
    std::vector<std::pair<std::string, std::size_t>> p;  // (file id, npos) or ("", parent index)
    std::set<std::size_t> by_file;
    for (const auto& f : w.tasks[i].inputs) {
      p.emplace_back(f, SIZE_MAX);
      if (auto it = writer.find(f); it != writer.end()) by_file.insert(it->second);
    }
    for (const auto& parent : w.tasks[i].parents)
      if (!by_file.count(index.at(parent))) p.emplace_back("", index.at(parent));
    return p;
  };
  std::vector<bool> whole_read(w.tasks.size(), false);  // some child reads a task's whole output
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    for (const auto& [file, parent] : ports(i))
      if (file.empty()) whole_read[parent] = true;

  // Data nodes: input files as constants, each task's output, and its files.
  Graph& g = out.graph;
  g.set_name(Names().make("wf_", w.name));
  Names names;
  std::map<std::string, DataId> file_node;
  std::map<std::string, std::vector<std::byte>> contents;  // the reference's bytes, by file
  for (const auto& [f, size] : w.file_bytes) {
    (void)size;
    if (writer.count(f) || !read.count(f)) continue;  // written by a task, or read by none: no node of its own
    std::vector<std::byte> bytes(bytes_of(f));
    fill(XXH64(f.data(), f.size(), o.seed), bytes);
    contents[f] = bytes;
    file_node[f] = g.constant(names.make("in_", f), std::move(bytes));
  }
  std::vector<DataId> whole(w.tasks.size());
  std::vector<std::string> task_name(w.tasks.size());
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    const WorkflowTask& t = w.tasks[i];
    task_name[i] = names.make("t_", t.id);
    if (t.outputs.size() == 1) {
      whole[i] = file_node[t.outputs[0]] = g.inner(names.make("f_", t.outputs[0]), bytes_of(t.outputs[0]));
      continue;
    }
    std::size_t total = 0;
    for (const auto& f : t.outputs) total += bytes_of(f);
    whole[i] = g.inner(names.make("t_", t.id + (t.outputs.empty() ? "_done" : "_out")), t.outputs.empty() ? kTokenBytes : total);
    for (const auto& f : t.outputs) file_node[f] = g.inner(names.make("f_", f), bytes_of(f));
  }
  const DataId digest = g.output(names.make("", kWorkflowDigest), 8);  // the others' prefixes keep it "digest"

  // Actors: each task, the splits of its files, and the digest of what no task reads.
  std::vector<DataId> digest_inputs;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    const WorkflowTask& t = w.tasks[i];
    std::vector<DataId> inputs;
    for (const auto& [file, parent] : ports(i)) inputs.push_back(file.empty() ? whole[parent] : file_node.at(file));
    out.most_inputs = std::max(out.most_inputs, inputs.size());
    const double seconds = t.runtime_s * out.time_scale;
    g.actor(task_name[i], "wf.task", std::move(inputs), whole[i])
        .args(fmt::format("id={},micros={},spin={}", i, std::llround(seconds * 1e6), o.spin ? 1 : 0))
        .work(seconds * 1e9);  // MachineModel's default: 1e9 operations per second
    std::size_t offset = 0;
    if (t.outputs.size() > 1)
      for (const auto& f : t.outputs) {
        g.actor(names.make("split_", f), "rf.split", {whole[i]}, file_node.at(f)).args(fmt::format("offset={}", offset));
        offset += bytes_of(f);
      }
    for (const auto& f : t.outputs)
      if (!read.count(f)) digest_inputs.push_back(file_node.at(f));
    if (t.outputs.empty() && !whole_read[i]) digest_inputs.push_back(whole[i]);
  }
  g.actor(names.make("", "wf_digest"), "wf.digest", digest_inputs, digest);
  out.most_inputs = std::max(out.most_inputs, digest_inputs.size());
  for (const auto& d : g.data()) out.largest_bytes = std::max(out.largest_bytes, d.bytes);

  // The reference, from the workflow alone: each task's output from its inputs in port order.
  std::vector<std::vector<std::byte>> whole_bytes(w.tasks.size());
  std::vector<double> finish(w.tasks.size(), 0);
  for (std::size_t i : task_order(w)) {
    const WorkflowTask& t = w.tasks[i];
    std::vector<std::span<const std::byte>> inputs;
    double start = 0;
    for (const auto& [file, parent] : ports(i)) inputs.emplace_back(file.empty() ? whole_bytes[parent] : contents.at(file));
    for (const auto& p : t.parents) start = std::max(start, finish[index.at(p)]);
    finish[i] = start + t.runtime_s * out.time_scale;
    out.critical_path_s = std::max(out.critical_path_s, finish[i]);
    out.total_work_s += t.runtime_s * out.time_scale;
    std::size_t total = t.outputs.empty() ? kTokenBytes : 0;
    for (const auto& f : t.outputs) total += bytes_of(f);
    whole_bytes[i].resize(total);
    fill(task_state(i, inputs), whole_bytes[i]);
    std::size_t offset = 0;
    for (const auto& f : t.outputs) {
      contents[f].assign(whole_bytes[i].begin() + static_cast<std::ptrdiff_t>(offset),
                         whole_bytes[i].begin() + static_cast<std::ptrdiff_t>(offset + bytes_of(f)));
      offset += bytes_of(f);
    }
  }
  std::vector<std::span<const std::byte>> last;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    for (const auto& f : w.tasks[i].outputs)
      if (!read.count(f)) last.emplace_back(contents.at(f));
    if (w.tasks[i].outputs.empty() && !whole_read[i]) last.emplace_back(whole_bytes[i]);
  }
  const std::uint64_t h = digest_of(last);
  out.reference.resize(sizeof h);
  std::memcpy(out.reference.data(), &h, sizeof h);
  if (Status s = g.validate_structure(); !s.ok()) return Status::Internal("the imported graph is malformed: " + s.message());
  return out;
}

}  // namespace redflow::apps
