// The tiles page's live Gantt chart: the tail of one traced execution drawn by
// the same writer as `redflow run --gantt` (redflow/visualize.hpp), so its
// colours and marks are the SVG's: replicas hatched, re-executions, steals,
// injected faults, votes, lost tiles and quarantines.
//
// A run traces an execution for the chart only while a page asks for it, at
// most once every kGanttEveryS and seldom enough that the charts take at
// most kGanttShare of its time (Board::wants_gantt()), so a dashboard nobody
// watches costs nothing more. Only the last kGanttActors actor executions of it are drawn: the
// chart of a 100,000-actor execution is its last moments, not a picture too
// dense to read and too large to send five times a second.
//
// Thread-safe: trace_tail and live_gantt_svg are pure functions; record_gantt as Board.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dashboard/board.hpp"
#include "redflow/graph.hpp"
#include "redflow/trace.hpp"

namespace redflow::dashboard {

inline constexpr std::size_t kGanttActors = 1500;

// `trace` from its last `max_actors` actor executions on (by start time),
// its transfers, slot changes and marks from the same moment, every time
// shifted so that moment is 0; the whole trace when it has no more.
ExecutionTrace trace_tail(const ExecutionTrace& trace, std::size_t max_actors);

// The chart of execution `execution` (counting from 1) of `executions`:
// trace_tail(trace, max_actors) drawn with the executed graph's functions
// as colours (`executed_graph` may be null), titled with the execution and,
// when cut, how much of it is shown.
std::string live_gantt_svg(const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution,
                           std::uint64_t executions, std::size_t max_actors = kGanttActors);

// What a run does after an execution it traced because board.wants_gantt()
// said so, before it record()s the execution's stats: draws it
// (live_gantt_svg) into the board, with what tracing and drawing cost, which
// spaces out the next chart (Board::record_gantt). `execute_s`: the wall time
// of the traced execute() call; what it took beyond the last execution's
// makespan (untraced) is the tracing's cost, and the drawing is timed here.
// A trace with no actor (an execution refused before it started) draws nothing.
//
//   const bool for_gantt = board.wants_gantt();
//   ExecuteOptions eo; if (for_gantt) eo.trace = true;
//   const auto t0 = steady_clock::now();
//   loaded.execute(inputs, eo);
//   if (for_gantt) record_gantt(board, loaded.last_trace(), executed_graph, n, total, seconds_since(t0));
//   board.record(loaded.last_stats());
void record_gantt(Board& board, const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution,
                  std::uint64_t executions, double execute_s);

}  // namespace redflow::dashboard
