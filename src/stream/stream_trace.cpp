// Seeing a traced stream run (visualize.hpp: to_chrome_trace, to_gantt_svg).
// The Gantt chart is the graph runtime's own (src/trace/gantt_svg.cpp): a node
// stands where a tile stands there, and an operator's firing spans are its
// boxes, so one chart code draws both kinds of program.
#include <nlohmann/json.hpp>

#include "redflow/stream.hpp"
#include "redflow/visualize.hpp"

namespace redflow::stream {

namespace {

unsigned node_count(const RunResult& r) {
  unsigned n = static_cast<unsigned>(r.nodes.size());
  for (const auto& o : r.operators) n = std::max(n, static_cast<unsigned>(o.node + 1));
  return std::max(n, 1u);
}

std::string node_label(const RunResult& r, unsigned n) {
  if (n < r.nodes.size()) return "node " + std::to_string(n) + " (" + r.nodes[n].worker + " on " + r.nodes[n].host + ")";
  return r.nodes.empty() ? "this process" : "node " + std::to_string(n);
}

}  // namespace

std::string to_chrome_trace(const RunResult& r) {
  nlohmann::json events = nlohmann::json::array();
  for (unsigned n = 0; n < node_count(r); ++n)
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", n}, {"tid", 0}, {"args", {{"name", node_label(r, n)}}}});
  for (std::size_t i = 0; i < r.operators.size(); ++i) {
    const auto& o = r.operators[i];
    const int pid = std::max(o.node, 0);
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", i}, {"args", {{"name", o.name}}}});
    for (const auto& s : o.spans)
      events.push_back({{"ph", "X"}, {"name", o.name}, {"cat", "firing"}, {"pid", pid}, {"tid", i}, {"ts", s.start_s * 1e6},
                        {"dur", (s.end_s - s.start_s) * 1e6}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
}

std::string to_gantt_svg(const RunResult& r, const GanttOptions& options) {
  ExecutionTrace t;
  t.tiles = node_count(r);
  t.makespan_s = r.seconds;
  t.scheduler = "stream";
  for (unsigned n = 0; n < t.tiles; ++n) t.tile_hosts.push_back(n < r.nodes.size() ? r.nodes[n].worker + " on " + r.nodes[n].host : "");
  for (std::size_t i = 0; i < r.operators.size(); ++i)
    for (const auto& s : r.operators[i].spans) {
      TracedActor a;
      a.actor = static_cast<ActorId>(i);
      a.name = r.operators[i].name;
      a.tile = std::max(r.operators[i].node, 0);
      a.start_s = s.start_s;
      a.end_s = s.end_s;
      t.actors.push_back(std::move(a));
    }
  GanttOptions g = options;
  if (g.title.empty()) g.title = "stream run: " + std::to_string(r.operators.size()) + " operators on " + std::to_string(t.tiles) + " node(s)";
  return redflow::to_gantt_svg(t, nullptr, g);
}

}  // namespace redflow::stream
