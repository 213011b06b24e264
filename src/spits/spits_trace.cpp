// A SPITS job's trace as Chrome/Perfetto JSON (include/redflow/visualize.hpp,
// spits::to_chrome_trace(Report)): where each task stayed and how it ended.
#include <nlohmann/json.hpp>

#include <cmath>

#include "redflow/spits.hpp"
#include "redflow/visualize.hpp"
#include "trace/lanes.hpp"

namespace redflow::spits {

namespace {
const char* outcome_name(TracedTask::Outcome o) {
  switch (o) {
    case TracedTask::Outcome::kCommitted: return "committed";
    case TracedTask::Outcome::kDuplicate: return "duplicate";
    case TracedTask::Outcome::kFailed: return "failed";
    case TracedTask::Outcome::kLost: return "lost";
    case TracedTask::Outcome::kReturned: return "returned";
  }
  return "unknown";
}
double us(double s) { return std::round(s * 1e9) / 1e3; }
}  // namespace

std::string to_chrome_trace(const Report& report) {
  using nlohmann::json;
  json events = json::array();
  std::vector<trace::LanePacker> lanes(report.task_managers.size());
  std::vector<std::size_t> lane(report.trace.size());
  for (std::size_t i : trace::by_start(report.trace.size(), [&](std::size_t k) { return report.trace[k].start_s; })) {
    const TracedTask& t = report.trace[i];
    if (t.task_manager >= lanes.size()) lanes.resize(t.task_manager + 1);
    lane[i] = lanes[t.task_manager].place(t.start_s, t.end_s);
  }
  for (std::size_t m = 0; m < lanes.size(); ++m) {
    const int pid = static_cast<int>(m) + 1;
    std::string name = "Task Manager " + (m < report.task_managers.size() ? report.task_managers[m].name : std::to_string(m));
    if (m < report.task_managers.size() && !report.task_managers[m].host.empty()) name += " on " + report.task_managers[m].host;
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
    for (std::size_t l = 0; l < lanes[m].lanes(); ++l)
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", static_cast<int>(l)}, {"args", {{"name", "held " + std::to_string(l)}}}});
  }
  for (std::size_t i = 0; i < report.trace.size(); ++i) {
    const TracedTask& t = report.trace[i];
    json e{{"ph", "X"}, {"name", "task " + std::to_string(t.id)}, {"cat", outcome_name(t.outcome)}, {"pid", static_cast<int>(t.task_manager) + 1},
           {"tid", static_cast<int>(lane[i])}, {"ts", us(t.start_s)}, {"dur", std::max(0.0, us(t.end_s) - us(t.start_s))},
           {"args", {{"task", t.id}, {"outcome", outcome_name(t.outcome)}}}};
    if (t.outcome == TracedTask::Outcome::kLost || t.outcome == TracedTask::Outcome::kFailed) e["cname"] = "terrible";
    else if (t.outcome == TracedTask::Outcome::kDuplicate) e["cname"] = "bad";
    events.push_back(std::move(e));
  }
  json doc{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"},
           {"metadata", {{"job", report.job}, {"committed", report.committed}, {"truncated", report.trace_truncated}}}};
  return doc.dump() + "\n";
}

}  // namespace redflow::spits
