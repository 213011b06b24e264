// ExecutionTrace -> Chrome Trace Event Format (the JSON that Perfetto and
// chrome://tracing open). Layout: one process per tile plus one for the
// driver (which also stands for main memory); inside each, thread tracks for
// the actors the tile ran ("core 0", the tile's runner thread) and for the
// transfers in and out of it, and a "slots" counter track.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "redflow/visualize.hpp"
#include "trace/lanes.hpp"

namespace redflow {

namespace {

using nlohmann::json;

// Process ids: the driver is 1, tile t is t + 2 (pid 0 is special to some viewers).
int pid_of(int tile) { return tile < 0 ? 1 : tile + 2; }
// Thread ids are unique across processes (some importers key threads by tid alone).
constexpr int kActorLanes = 0, kInLanes = 400, kOutLanes = 700;
int tid_of(int tile, int kind, std::size_t lane) { return pid_of(tile) * 1000 + kind + static_cast<int>(lane); }

// Microseconds, rounded to nanoseconds so the file stays short.
double us(double seconds) { return std::round(seconds * 1e9) / 1e3; }

// The same rounding for a slice's duration, so that ts + dur lands on the rounded end.
double duration_us(double start_s, double end_s) { return std::max(0.0, std::round((us(end_s) - us(start_s)) * 1e3) / 1e3); }

std::string place(int tile) { return tile < 0 ? "driver" : "tile " + std::to_string(tile); }
std::string memory_of(int tile) { return tile < 0 ? "main memory" : "tile " + std::to_string(tile); }

class Writer {
 public:
  void add(const json& e) {
    text_ += first_ ? "\n" : ",\n";
    text_ += e.dump();
    first_ = false;
  }
  std::string finish(const json& other) {
    return "{\"displayTimeUnit\": \"ns\", \"otherData\": " + other.dump() + ",\n\"traceEvents\": [" + text_ + "\n]}\n";
  }

 private:
  std::string text_;
  bool first_ = true;
};

json meta(const char* name, int pid, int tid, json args) {
  return json{{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

std::string to_chrome_trace(const ExecutionTrace& trace, const Graph* graph) {
  Writer w;
  std::vector<int> places = {-1};
  for (unsigned t = 0; t < trace.tiles; ++t) places.push_back(static_cast<int>(t));
  // Tiles the trace mentions beyond `tiles` (a hand-made or truncated trace) still get a process.
  auto note_place = [&](int tile) {
    if (tile >= -1 && std::find(places.begin(), places.end(), tile) == places.end()) places.push_back(tile);
  };
  for (const auto& a : trace.actors) note_place(a.tile);
  for (const auto& t : trace.transfers) note_place(t.from_tile), note_place(t.to_tile);
  for (const auto& s : trace.slot_use) note_place(s.tile);

  // Lanes: slices on one thread track must nest, so overlapping ones go to further lanes.
  std::map<int, trace::LanePacker> actor_lanes, in_lanes, out_lanes;
  std::vector<std::size_t> actor_lane(trace.actors.size());
  std::vector<std::size_t> order = trace::by_start(trace.actors.size(), [&](std::size_t i) { return trace.actors[i].start_s; });
  for (std::size_t i : order) actor_lane[i] = actor_lanes[trace.actors[i].tile].place(trace.actors[i].start_s, trace.actors[i].end_s);
  std::vector<std::size_t> in_lane(trace.transfers.size()), out_lane(trace.transfers.size());
  order = trace::by_start(trace.transfers.size(), [&](std::size_t i) { return trace.transfers[i].start_s; });
  for (std::size_t i : order) {
    const auto& t = trace.transfers[i];
    in_lane[i] = in_lanes[t.to_tile].place(t.start_s, t.end_s);
    out_lane[i] = out_lanes[t.from_tile].place(t.start_s, t.end_s);
  }

  // Metadata: names and order of processes and threads.
  int sort = 0;
  for (int p : places) {
    const int pid = pid_of(p);
    // A tile in a worker process is named with its worker and host.
    std::string name = p < 0 ? std::string("driver (main memory)") : place(p);
    if (p >= 0 && static_cast<std::size_t>(p) < trace.tile_hosts.size() && !trace.tile_hosts[p].empty()) name += " (" + trace.tile_hosts[p] + ")";
    w.add(meta("process_name", pid, 0, {{"name", name}}));
    w.add(meta("process_sort_index", pid, 0, {{"sort_index", sort++}}));
    const std::size_t lanes = std::max<std::size_t>(1, actor_lanes[p].lanes());
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::string name = l == 0 ? "core 0" : "core 0 (overlap " + std::to_string(l) + ")";
      w.add(meta("thread_name", pid, tid_of(p, kActorLanes, l), {{"name", name}}));
      w.add(meta("thread_sort_index", pid, tid_of(p, kActorLanes, l), {{"sort_index", static_cast<int>(l)}}));
    }
    for (std::size_t l = 0; l < in_lanes[p].lanes(); ++l) {
      w.add(meta("thread_name", pid, tid_of(p, kInLanes, l), {{"name", l == 0 ? std::string("transfers in") : "transfers in " + std::to_string(l + 1)}}));
      w.add(meta("thread_sort_index", pid, tid_of(p, kInLanes, l), {{"sort_index", 100 + static_cast<int>(l)}}));
    }
    for (std::size_t l = 0; l < out_lanes[p].lanes(); ++l) {
      w.add(meta("thread_name", pid, tid_of(p, kOutLanes, l), {{"name", l == 0 ? std::string("transfers out") : "transfers out " + std::to_string(l + 1)}}));
      w.add(meta("thread_sort_index", pid, tid_of(p, kOutLanes, l), {{"sort_index", 200 + static_cast<int>(l)}}));
    }
  }

  // One slice per actor execution, named after the executed actor.
  for (std::size_t i = 0; i < trace.actors.size(); ++i) {
    const auto& a = trace.actors[i];
    const int pid = pid_of(a.tile), tid = tid_of(a.tile, kActorLanes, actor_lane[i]);
    std::string cat = "actor";
    if (a.replica > 0) cat += ",replica";
    if (a.attempt > 0) cat += ",reexecution";
    if (a.stolen) cat += ",steal";
    if (a.faulty) cat += ",fault";
    json args{{"actor", a.original.empty() ? a.name : a.original}, {"place", place(a.tile)}};
    if (graph != nullptr && a.actor < graph->actors().size() && graph->actor(a.actor).name == a.name)
      args["function"] = graph->actor(a.actor).function;
    if (a.replica > 0) args["replica"] = a.replica;
    if (a.attempt > 0) args["attempt"] = a.attempt;
    if (a.stolen) args["stolen"] = true;
    if (a.faulty) args["fault_injected"] = true;
    json e{{"ph", "X"}, {"name", a.name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", us(a.start_s)},
           {"dur", duration_us(a.start_s, a.end_s)}, {"args", std::move(args)}};
    // Colour hints for chrome://tracing (Perfetto colours by name).
    if (a.faulty) e["cname"] = "terrible";
    else if (a.attempt > 0) e["cname"] = "bad";
    w.add(e);
    auto instant = [&](const char* name, json iargs) {
      w.add(json{{"ph", "i"}, {"s", "t"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", us(a.start_s)},
                 {"args", std::move(iargs)}});
    };
    if (a.stolen) instant("steal", {{"actor", a.name}, {"thief", place(a.tile)}});
    if (a.attempt > 0) instant("re-execution", {{"actor", a.name}, {"attempt", a.attempt}});
    if (a.faulty) instant("fault injected", {{"actor", a.name}});
  }

  // Transfers: a slice at each end, and a flow arrow from the source's to the destination's.
  for (std::size_t i = 0; i < trace.transfers.size(); ++i) {
    const auto& t = trace.transfers[i];
    const double ts = us(t.start_s), dur = duration_us(t.start_s, t.end_s);
    const json args{{"data", t.data}, {"from", memory_of(t.from_tile)}, {"to", memory_of(t.to_tile)}, {"bytes", t.bytes}};
    const int from_pid = pid_of(t.from_tile), from_tid = tid_of(t.from_tile, kOutLanes, out_lane[i]);
    const int to_pid = pid_of(t.to_tile), to_tid = tid_of(t.to_tile, kInLanes, in_lane[i]);
    w.add(json{{"ph", "X"}, {"name", t.data}, {"cat", "transfer"}, {"pid", from_pid}, {"tid", from_tid}, {"ts", ts}, {"dur", dur}, {"args", args}});
    w.add(json{{"ph", "X"}, {"name", t.data}, {"cat", "transfer"}, {"pid", to_pid}, {"tid", to_tid}, {"ts", ts}, {"dur", dur}, {"args", args}});
    // The flow points bind to the slices that enclose them: take their middle.
    const double mid = ts + dur / 2;
    const std::size_t id = i + 1;
    w.add(json{{"ph", "s"}, {"name", "transfer"}, {"cat", "transfer"}, {"id", id}, {"pid", from_pid}, {"tid", from_tid}, {"ts", mid}});
    w.add(json{{"ph", "f"}, {"bp", "e"}, {"name", "transfer"}, {"cat", "transfer"}, {"id", id}, {"pid", to_pid}, {"tid", to_tid}, {"ts", mid}});
  }

  // Slot occupancy per tile, starting from empty.
  std::map<int, bool> has_counter;
  for (const auto& s : trace.slot_use) {
    const int pid = pid_of(s.tile);
    if (!has_counter[s.tile] && s.time_s > 0)
      w.add(json{{"ph", "C"}, {"name", "slots"}, {"pid", pid}, {"tid", tid_of(s.tile, kActorLanes, 0)}, {"ts", 0.0}, {"args", {{"used", 0}}}});
    has_counter[s.tile] = true;
    w.add(json{{"ph", "C"}, {"name", "slots"}, {"pid", pid}, {"tid", tid_of(s.tile, kActorLanes, 0)}, {"ts", us(s.time_s)}, {"args", {{"used", s.used}}}});
  }

  // Marks (failed votes, quarantines, ...) on the tile they concern.
  for (const auto& m : trace.marks)
    w.add(json{{"ph", "i"}, {"s", "p"}, {"name", m.what}, {"cat", "mark"}, {"pid", pid_of(m.tile)}, {"tid", tid_of(m.tile, kActorLanes, 0)},
               {"ts", us(m.time_s)}, {"args", {{"detail", m.detail}, {"place", place(m.tile)}}}});

  json other{{"generator", "redflow"}, {"tiles", trace.tiles}, {"cores_per_tile", trace.cores_per_tile}, {"slots", trace.slots},
             {"scheduler", trace.scheduler}, {"redundancy", trace.redundancy}, {"makespan_s", trace.makespan_s}};
  if (!trace.failure.empty()) other["failure"] = trace.failure;
  return w.finish(other);
}

}  // namespace redflow
