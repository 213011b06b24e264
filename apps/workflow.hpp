// Scientific workflows in the WfCommons format (WfFormat 1.0-1.6, JSON
// execution traces: tasks with parents and children, input and output files
// with sizes, measured runtimes) as redflow graphs: what `redflow import
// wfformat` writes (docs/workflows.md).
//
// The graph: one `wf.task` actor per task, taking the task's measured time
// (scaled) by sleeping or spinning, and writing a digest of its inputs as
// its output; one data node per file. A task with several output files
// writes them as one data node, cut into one data node per file by
// `rf.split` actors (zero-copy on the driver), since a redflow actor has
// one output. A workflow input file (produced by no task) is a constant
// with seeded random bytes; a parent with no file in common with its child
// (a control dependency) gives the child its whole output as one more
// input, so every dependency of the trace is an edge. Every file no task
// reads, and the token of a task that writes none, goes into one `wf.digest`
// actor whose 8-byte output `digest` is the graph's only output: a run is
// right when it equals the reference computed here from the workflow
// itself, without the graph or the runtime.
//
// Thread-safety: plain functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::apps {

struct WorkflowTask {
  std::string id;                    // unique in the workflow
  std::string name;
  double runtime_s = 0;              // measured
  std::vector<std::string> parents;  // task ids: a parent ends before this task starts
  std::vector<std::string> inputs;   // file ids, in the trace's order
  std::vector<std::string> outputs;  // file ids, in the trace's order
};

struct Workflow {
  std::string name;
  std::string schema_version;
  std::vector<WorkflowTask> tasks;               // in the trace's order
  std::map<std::string, std::uint64_t> file_bytes;  // by file id
};

// Reads a WfFormat instance: 1.5 and later (workflow.specification and
// workflow.execution, tasks naming their parents by id, files by id) and
// earlier (workflow.tasks or workflow.jobs, each with its files inline and
// parents by name; `runtime` or `runtimeInSeconds`, `size` or
// `sizeInBytes`, `machine` or `machines`). Dependencies declared on one end
// only (parents or children) count both ways. Errors name what is wrong: a
// parent or file that does not exist, a file two tasks write, a cycle (its
// tasks), a missing or mistyped field.
Result<Workflow> parse_wfformat(std::string_view json_text);

// The tasks' indices, every parent before its children (Kahn's algorithm).
// Shorter than the task list when tasks are on or behind a cycle. Every
// parent must be a task's id.
std::vector<std::size_t> task_order(const Workflow& workflow);

struct WorkflowImportOptions {
  double time_scale = 1;        // a task's seconds = its runtime x this
  double total_seconds = 0;     // > 0: the time scale that makes the tasks' seconds add up to this
  double bytes_scale = 1e-3;    // a file's bytes = its size x this
  std::size_t min_bytes = 8;    // and at least this
  bool spin = false;            // tasks spin for their time (a core busy) instead of sleeping
  std::uint64_t seed = 1;       // of the workflow input files' bytes
};

struct WorkflowProblem {
  Graph graph;
  std::vector<std::byte> reference;  // what its `digest` output must be
  double time_scale = 1;             // the one used
  double total_work_s = 0;           // the tasks' seconds, summed
  double critical_path_s = 0;        // the longest chain of tasks' seconds
  std::size_t most_inputs = 0;       // the most inputs an actor has (it needs that many slots plus one)
  std::size_t largest_bytes = 0;     // the largest data node
};

// The name of the graph's one output.
inline constexpr const char* kWorkflowDigest = "digest";

Result<WorkflowProblem> make_workflow_problem(const Workflow& workflow, const WorkflowImportOptions& options = {});

// wf.task (args "id=N,micros=M,spin=0|1") and wf.digest (on the driver).
void register_workflow_actors(Registry& reg);

}  // namespace redflow::apps
