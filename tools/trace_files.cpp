// `run --trace` and `run --gantt`: the last execution as a Chrome/Perfetto
// trace and as a Gantt chart, with the tiles out of service marked.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cli_common.hpp"

namespace redflow::cli {

Status write_trace_files(const LoadedGraph& loaded, const std::string& trace_path, const std::string& gantt_path) {
  if (trace_path.empty() && gantt_path.empty()) return Status::Ok();
  // A tile quarantined by an earlier execution runs nothing in this one:
  // marked at its start, so the chart labels its empty row and the trace says why.
  ExecutionTrace trace = loaded.last_trace();
  for (unsigned tile : loaded.last_stats().quarantined_tiles) {  // every tile out of service so far
    const bool marked = std::any_of(trace.marks.begin(), trace.marks.end(), [&](const TracedMark& k) {
      return k.what == "quarantine" && k.tile == static_cast<int>(tile);
    });
    if (!marked) trace.marks.push_back({"quarantine", "tile " + std::to_string(tile) + " out of service since an earlier execution", static_cast<int>(tile), 0.0});
  }
  // The trace names the configuration it ran under, which therefore could run.
  auto executed = loaded.executed_graph(parse_redundancy(trace.redundancy).value_or(Redundancy::kNone));
  if (!executed.ok()) return executed.status();
  const Graph& graph = **executed;
  if (trace.actors.empty() && !graph.actors().empty())
    spdlog::warn("the execution trace is empty: this runtime did not record what it ran");
  if (!trace_path.empty()) {
    const std::string json = to_chrome_trace(trace, &graph);
    REDFLOW_RETURN_IF_ERROR(write_file(trace_path, json.data(), json.size()));
    spdlog::info("wrote the trace of the last execution to {} (open it in ui.perfetto.dev or chrome://tracing)", trace_path);
  }
  if (!gantt_path.empty()) {
    const std::string svg = to_gantt_svg(trace, &graph);
    REDFLOW_RETURN_IF_ERROR(write_file(gantt_path, svg.data(), svg.size()));
    spdlog::info("wrote the Gantt chart of the last execution to {}", gantt_path);
  }
  return Status::Ok();
}

}  // namespace redflow::cli
