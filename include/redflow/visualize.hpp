// Seeing what a run did, for every model, under two names: to_chrome_trace(x)
// gives a Chrome Trace Event file (JSON; opens in ui.perfetto.dev and
// chrome://tracing), to_gantt_svg(x) a Gantt chart in SVG. x is a graph
// execution's ExecutionTrace or HEFT Schedule, a SPITS job's Report or a
// stream run's RunResult, each recorded with its model's trace option. These
// only read what they are given; nothing here is needed to run anything. The
// formats are described in docs/guide.md ("See what happened"), docs/spits.md
// and docs/streams.md ("Seeing a run").
#pragma once

#include <string>

#include "redflow/graph.hpp"
#include "redflow/schedule.hpp"
#include "redflow/trace.hpp"

namespace redflow {

struct GanttOptions {
  std::string title;   // empty: "<graph> — <what>" from the data
  int width = 1200;    // pixels
};

// Chrome Trace Event Format (JSON object form, timestamps in microseconds):
// one process per tile and one for the driver; in each, a "core 0" thread
// with one slice per actor execution (named after the executed actor),
// "transfers in" / "transfers out" threads with one slice per transfer and a
// flow arrow (ph s -> f) from the source's slice to the destination's, a
// "slots" counter (ph C), and instant events for steals, re-executions,
// injected faults and the trace's marks. `executed_graph`, when given, adds
// each actor's function to its slice's args.
std::string to_chrome_trace(const ExecutionTrace& trace, const Graph* executed_graph = nullptr);

// What happened: rows for the driver and each tile, one box per actor
// execution coloured by its function (needs `executed_graph`; without it, by
// actor), replicas hatched, re-executions, steals and injected faults marked,
// transfers into each tile as a thin strip under its row.
std::string to_gantt_svg(const ExecutionTrace& trace, const Graph* executed_graph = nullptr,
                         const GanttOptions& options = {});

// What HEFT planned: the estimated start and finish of every actor of
// `executed_graph` (the graph the schedule was computed for, e.g.
// LoadedGraph::executed_graph(r) with LoadedGraph::heft_schedule(r)).
// `tiles` = 0 takes the number of compute tiles from the schedule.
std::string to_gantt_svg(const Schedule& schedule, const Graph& executed_graph, unsigned tiles = 0,
                         const GanttOptions& options = {});

namespace spits {
struct Report;  // spits.hpp
// A SPITS job's trace (Options::trace): one process per Task Manager (its
// name and host), a slice per task stay named after the task and its
// outcome, lanes so that tasks held at once do not overlap.
std::string to_chrome_trace(const Report& report);
}  // namespace spits

namespace stream {
struct RunResult;  // stream.hpp
// A traced stream run (RunOptions::trace): one process per node (one for a
// local run), one thread per operator, a slice per firing span.
std::string to_chrome_trace(const RunResult& result);
// The same run as a chart: one row per node, a box per firing span coloured
// by operator (an empty title: "stream run: N operators on K node(s)").
std::string to_gantt_svg(const RunResult& result, const GanttOptions& options = {});
}  // namespace stream

// One name for every model: redflow::to_chrome_trace(x) and
// redflow::to_gantt_svg(x) take any of the results above (and an unqualified
// call finds the model's own by its argument).
using spits::to_chrome_trace;
using stream::to_chrome_trace;
using stream::to_gantt_svg;

}  // namespace redflow
