// The tiles page's live Gantt chart (live_gantt.hpp).
#include "dashboard/live_gantt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "redflow/visualize.hpp"

namespace redflow::dashboard {

ExecutionTrace trace_tail(const ExecutionTrace& trace, std::size_t max_actors) {
  if (trace.actors.size() <= max_actors) return trace;
  // The start of the max_actors-th latest actor execution: what starts there or later is drawn.
  std::vector<double> starts;
  starts.reserve(trace.actors.size());
  for (const TracedActor& a : trace.actors) starts.push_back(a.start_s);
  const auto nth = starts.end() - static_cast<std::ptrdiff_t>(std::max<std::size_t>(max_actors, 1));
  std::nth_element(starts.begin(), nth, starts.end());
  const double cut = *nth;
  ExecutionTrace tail;
  tail.tiles = trace.tiles;
  tail.cores_per_tile = trace.cores_per_tile;
  tail.slots = trace.slots;
  tail.scheduler = trace.scheduler;
  tail.redundancy = trace.redundancy;
  tail.failure = trace.failure;
  tail.tile_hosts = trace.tile_hosts;
  tail.makespan_s = std::max(0.0, trace.makespan_s - cut);
  for (const TracedActor& a : trace.actors)
    if (a.start_s >= cut && tail.actors.size() < max_actors) {
      tail.actors.push_back(a);
      tail.actors.back().start_s -= cut;
      tail.actors.back().end_s -= cut;
    }
  for (const TracedTransfer& t : trace.transfers)
    if (t.end_s >= cut) {
      tail.transfers.push_back(t);
      tail.transfers.back().start_s = std::max(0.0, t.start_s - cut);
      tail.transfers.back().end_s -= cut;
    }
  for (const TracedSlots& s : trace.slot_use)
    if (s.time_s >= cut) {
      tail.slot_use.push_back(s);
      tail.slot_use.back().time_s -= cut;
    }
  for (const TracedMark& m : trace.marks)
    if (m.time_s >= cut) {
      tail.marks.push_back(m);
      tail.marks.back().time_s -= cut;
    }
  return tail;
}

std::string live_gantt_svg(const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution, std::uint64_t executions,
                           std::size_t max_actors) {
  const ExecutionTrace tail = trace_tail(trace, max_actors);
  GanttOptions o;
  o.width = 1100;
  o.title = fmt::format("Execution {} of {}", execution, executions);
  if (tail.actors.size() < trace.actors.size())
    o.title += fmt::format(": its last {:.3g} ms, {} of {} actor executions", tail.makespan_s * 1e3, tail.actors.size(), trace.actors.size());
  return to_gantt_svg(tail, executed_graph, o);
}

void record_gantt(Board& board, const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution,
                  std::uint64_t executions, double execute_s) {
  if (trace.actors.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::string svg = live_gantt_svg(trace, executed_graph, execution, executions);
  const double drawing_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first execution has no untraced one before it: its whole makespan counts.
  const double tracing_s = std::max(0.0, execute_s - board.last_makespan_s());
  board.record_gantt(execution, std::move(svg), tracing_s + drawing_s);
}

}  // namespace redflow::dashboard
