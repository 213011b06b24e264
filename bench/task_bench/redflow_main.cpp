// Task Bench (Slaughter et al., "Task Bench: A Parameterized Benchmark for
// Evaluating Parallel Runtime Performance", SC'20) on redflow: the task
// graphs its core library describes (timesteps x points, one of its
// dependence patterns, one of its kernels), built as one redflow graph and
// run by the embedded runtime. Every task is an actor whose inputs are the
// outputs of the points it depends on at the previous timestep, in the order
// TaskGraph::dependencies() lists them; TaskGraph::execute_point() checks
// each input's contents (which timestep and point wrote it), so a value
// handed to the wrong actor fails the run.
//
// Flags: Task Bench's own (`-steps`, `-width`, `-type`, `-kernel`,
// `-iter`, `-output`, `-and`, ...: `-h` lists them), and redflow's:
//   -scheduler heft|steal  (default heft)
//   -tiles N               (compute tiles; default one per hardware thread)
//   -warm                  (time a second execution of the loaded graph only)
// Output: Task Bench's report (`Elapsed Time ... seconds`, `Total Tasks`,
// `Total FLOPs`, as its scripts read it), where the elapsed time covers
// building the graph, loading it (validation, HEFT's plan) and executing it
// once, as the other implementations time creating their tasks; with -warm,
// an execution of the graph loaded and executed once before: what each
// execution costs a program that loads its graph once and runs it many
// times. And a line `redflow: build X s, load Y s, execute Z s` with the parts.
//
// Built with -DREDFLOW_TASK_BENCH_DIR=<a task-bench tree> (bench/task_bench.sh).
#include <redflow/redflow.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Splits redflow's own flags from Task Bench's; Task Bench's parser ignores
// flags it does not know, but their values would be read as its own.
struct Flags {
  redflow::Scheduler scheduler = redflow::Scheduler::kHeft;
  unsigned tiles = 0;
  bool warm = false;  // time a second execution of the loaded graph only
  std::vector<char*> task_bench;  // argv[0] and the rest, in order
};

bool parse_flags(int argc, char** argv, Flags& flags) {
  flags.task_bench.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-warm") {
      flags.warm = true;
    } else if (a == "-scheduler" || a == "-tiles") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "task_bench_redflow: %s needs a value\n", a.c_str());
        return false;
      }
      const std::string v = argv[++i];
      if (a == "-tiles") {
        flags.tiles = static_cast<unsigned>(std::stoul(v));
      } else if (v == "heft" || v == "steal") {
        flags.scheduler = v == "heft" ? redflow::Scheduler::kHeft : redflow::Scheduler::kSteal;
      } else {
        std::fprintf(stderr, "task_bench_redflow: -scheduler %s: expected heft or steal\n", v.c_str());
        return false;
      }
    } else {
      flags.task_bench.push_back(argv[i]);
    }
  }
  flags.task_bench.push_back(nullptr);
  return true;
}

// One Task Bench task graph as actors and data nodes of `g` (its values as
// inner nodes; mark_unread_as_outputs() runs once all graphs are in).
void add_task_graph(redflow::Graph& g, const TaskGraph& tg, std::size_t graph_pos) {
  const std::string prefix = "g" + std::to_string(graph_pos) + "_";
  std::vector<redflow::DataId> last(static_cast<std::size_t>(tg.max_width));
  std::vector<redflow::DataId> current(last.size());
  std::vector<std::pair<long, long>> deps(tg.max_width + 1);
  for (long t = 0; t < tg.timesteps; ++t) {
    const long offset = tg.offset_at_timestep(t);
    const long width = tg.width_at_timestep(t);
    const long last_offset = tg.offset_at_timestep(t - 1);
    const long last_width = tg.width_at_timestep(t - 1);
    const long dset = tg.dependence_set_at_timestep(t);
    for (long p = offset; p < offset + width; ++p) {
      deps.resize(std::max<std::size_t>(deps.size(), tg.num_dependencies(dset, p)));
      const std::size_t spans = tg.dependencies(dset, p, deps.data());
      std::vector<redflow::DataId> inputs;
      for (std::size_t s = 0; s < spans && t > 0; ++s)
        for (long dep = deps[s].first; dep <= deps[s].second; ++dep)
          if (last_offset <= dep && dep < last_offset + last_width) inputs.push_back(last[static_cast<std::size_t>(dep)]);
      const std::string name = std::to_string(t) + "_" + std::to_string(p);
      current[static_cast<std::size_t>(p)] = g.inner(prefix + "v" + name, tg.output_bytes_per_task);
      g.actor(prefix + "t" + name, "task_bench", std::move(inputs), current[static_cast<std::size_t>(p)])
          .args("g=" + std::to_string(graph_pos) + ",t=" + std::to_string(t) + ",p=" + std::to_string(p))
          .work(static_cast<double>(std::max<long long>(1, count_flops_per_task(tg, t, p))));
    }
    std::swap(last, current);
  }
}

// A value nobody reads (the last timestep, or a pattern that leaves a point
// unread) is an output of the graph.
void mark_unread_as_outputs(redflow::Graph& g) {
  for (redflow::DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == redflow::DataKind::kInner && g.data(d).consumers.empty())
      g.mutable_data(d).kind = redflow::DataKind::kOutput;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!parse_flags(argc, argv, flags)) return 2;
  App app(static_cast<int>(flags.task_bench.size()) - 1, flags.task_bench.data());
  app.display();

  // The actor: Task Bench's own task body (it checks its inputs, writes its
  // output and runs the kernel) with a scratch buffer per thread.
  redflow::Registry registry = redflow::Registry::with_builtins();
  const std::vector<TaskGraph>& graphs = app.graphs;
  registry.add("task_bench", [&graphs](redflow::ActorContext& ctx) {
    const auto gi = redflow::ActorContext::find_arg_u64(ctx.args(), "g").value();
    const auto t = static_cast<long>(redflow::ActorContext::find_arg_u64(ctx.args(), "t").value());
    const auto p = static_cast<long>(redflow::ActorContext::find_arg_u64(ctx.args(), "p").value());
    const TaskGraph& tg = graphs[gi];
    thread_local std::vector<char> scratch;
    if (scratch.size() != tg.scratch_bytes_per_task) {
      scratch.assign(tg.scratch_bytes_per_task, 0);
      TaskGraph::prepare_scratch(scratch.data(), scratch.size());
    }
    const std::size_t n = ctx.num_inputs();
    thread_local std::vector<const char*> in;  // kept from task to task: no allocation per task
    thread_local std::vector<std::size_t> in_bytes;
    in.resize(n);
    in_bytes.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = reinterpret_cast<const char*>(ctx.input_bytes(i).data());
      in_bytes[i] = ctx.input_bytes(i).size();
    }
    const auto out = ctx.output_bytes();
    tg.execute_point(t, p, reinterpret_cast<char*>(out.data()), out.size(), in.data(), in_bytes.data(), n, scratch.data(),
                     scratch.size());
  });

  // The runtime (its tiles' threads) starts before the clock, as the other
  // implementations' thread pools and MPI ranks do.
  redflow::Runtime runtime({.tiles = flags.tiles, .scheduler = flags.scheduler});
  const auto t0 = Clock::now();
  redflow::Graph g("task_bench");
  for (std::size_t i = 0; i < graphs.size(); ++i) add_task_graph(g, graphs[i], i);
  mark_unread_as_outputs(g);
  const auto t1 = Clock::now();
  auto loaded = runtime.load(std::move(g), registry);
  if (!loaded.ok()) {
    std::fprintf(stderr, "task_bench_redflow: load: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  auto t2 = Clock::now();
  auto outputs = loaded->execute({});
  auto t3 = Clock::now();
  if (outputs.ok() && flags.warm) {
    t2 = Clock::now();
    outputs = loaded->execute({});
    t3 = Clock::now();
  }
  if (!outputs.ok()) {
    std::fprintf(stderr, "task_bench_redflow: execute: %s\n", outputs.status().ToString().c_str());
    return 1;
  }
  app.report_timing(flags.warm ? seconds(t2, t3) : seconds(t0, t3));
  std::printf("redflow: build %e s, load %e s, execute %e s (scheduler %s, %zu outputs)\n", seconds(t0, t1), seconds(t1, t2),
              seconds(t2, t3), redflow::to_string(flags.scheduler), outputs->size());
  return 0;
}
