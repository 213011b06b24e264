// Seeing what the runtime did: an ExecutionTrace as a Chrome Trace Event file
// (opens in ui.perfetto.dev and chrome://tracing), and a schedule or an
// execution as a Gantt chart in SVG. These read the trace and the schedule;
// nothing here is needed to run a graph. The formats are described in
// docs/guide.md ("See what happened").
#pragma once

#include <string>

#include "redflow/graph.hpp"
#include "redflow/schedule.hpp"
#include "redflow/trace.hpp"

namespace redflow {

// Chrome Trace Event Format (JSON object form, timestamps in microseconds):
// one process per tile and one for the driver; in each, a "core 0" thread
// with one slice per actor execution (named after the executed actor),
// "transfers in" / "transfers out" threads with one slice per transfer and a
// flow arrow (ph s -> f) from the source's slice to the destination's, a
// "slots" counter (ph C), and instant events for steals, re-executions,
// injected faults and the trace's marks. `executed_graph`, when given, adds
// each actor's function to its slice's args.
std::string chrome_trace_json(const ExecutionTrace& trace, const Graph* executed_graph = nullptr);

struct GanttOptions {
  std::string title;   // empty: "<graph> — <what>" from the data
  int width = 1200;    // pixels
};

// What happened: rows for the driver and each tile, one box per actor
// execution coloured by its function (needs `executed_graph`; without it, by
// actor), replicas hatched, re-executions, steals and injected faults marked,
// transfers into each tile as a thin strip under its row.
std::string gantt_svg(const ExecutionTrace& trace, const Graph* executed_graph = nullptr,
                      const GanttOptions& options = {});

// What HEFT planned: the estimated start and finish of every actor of
// `executed_graph` (the graph the schedule was computed for, e.g.
// LoadedGraph::executed_graph(r) with LoadedGraph::heft_schedule(r)).
// `tiles` = 0 takes the number of compute tiles from the schedule.
std::string gantt_svg(const Schedule& schedule, const Graph& executed_graph, unsigned tiles = 0,
                      const GanttOptions& options = {});

}  // namespace redflow
