// Board and the snapshot's JSON (board.hpp).
#include "dashboard/board.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace redflow::dashboard {

namespace {

bool has(const std::vector<unsigned>& tiles, unsigned t) { return std::find(tiles.begin(), tiles.end(), t) != tiles.end(); }

// TileStats::quarantined says "out of service" for any reason; the
// execution's quarantined_tiles are the ones taken out for lost votes, and
// of those its probation_tiles wait for a known-answer test.
const char* tile_state(const ExecutionStats& s, unsigned t) {
  const TileStats& tile = s.tiles[t];
  if (tile.lost) return "lost";
  if (tile.on_probation || has(s.probation_tiles, t)) return "on probation";
  if (has(s.quarantined_tiles, t)) return "quarantined";
  if (tile.quarantined) return "out of service";
  return tile.straggled > 0 ? "straggling" : "in service";
}

// The state a runtime mark puts its tile in at once, or nullptr. A tile
// suspected for its lost votes ("quarantine") goes on probation when the
// runtime will test it ("... on probation until a known-answer test"), else
// out for good; "probation" is a failed test, "reinstated" a passed one.
const char* state_after(const TracedMark& m) {
  if (m.what == "tile-lost") return "lost";
  if (m.what == "quarantine") return m.detail.find("on probation") != std::string::npos ? "on probation" : "quarantined";
  if (m.what == "probation") return "on probation";
  if (m.what == "quarantine-for-good") return "quarantined";
  if (m.what == "reinstated") return "in service";
  if (m.what == "straggler") return "straggling";
  return nullptr;
}

}  // namespace

Board::Board(std::string model, std::string name, std::uint64_t executions_total) : t0_(std::chrono::steady_clock::now()) {
  s_.model = std::move(model);
  s_.name = std::move(name);
  s_.executions_total = executions_total;
}

void Board::record(const ExecutionStats& st) {
  std::lock_guard<std::mutex> lock(mutex_);
  s_.state = "running";
  ++s_.executions_done;
  s_.actors_done += st.actors_executed;
  s_.busy_s += st.makespan_s;
  s_.actors_per_s = s_.busy_s > 0 ? static_cast<double>(s_.actors_done) / s_.busy_s : 0;
  s_.faults_injected += st.injected_faults;
  s_.faults_detected += st.detected_faults;
  s_.faults_corrected += st.detected_faults;  // record() sees only executions that succeeded
  s_.reexecutions += st.reexecutions;
  s_.lost_tiles += st.lost_tiles;
  s_.recomputed_actors += st.recomputed_actors;
  s_.speculative_copies += st.speculative_copies;
  s_.quarantined_tiles = st.quarantined_tiles;
  s_.probation_tiles = st.probation_tiles;
  s_.scheduler = st.scheduler;
  s_.redundancy = st.redundancy;
  s_.last_makespan_s = st.makespan_s;
  s_.last_actors = st.actors_executed;
  if (s_.tiles.size() < st.tiles.size()) s_.tiles.resize(st.tiles.size());
  for (std::size_t t = 0; t < st.tiles.size(); ++t) {
    const TileStats& in = st.tiles[t];
    TileView& v = s_.tiles[t];
    v.id = static_cast<unsigned>(t);
    if (v.worker != in.worker) v.worker = in.worker;
    if (v.host != in.host) v.host = in.host;
    v.state = tile_state(st, static_cast<unsigned>(t));
    v.actors += in.actors;
    v.bytes_in += in.bytes_sent;
    v.bytes_out += in.bytes_received;
    v.lost_votes += in.lost_votes;
    v.speculative += in.speculative;
    v.straggled += in.straggled;
  }
}

void Board::add_event(EventView e) {
  ++s_.events_total;
  if (s_.events.size() == kMaxEvents) s_.events.erase(s_.events.begin());
  s_.events.push_back(std::move(e));
}

void Board::mark(const TracedMark& m, std::optional<double> at_s) {
  const double at = at_s ? *at_s : now_s();
  std::lock_guard<std::mutex> lock(mutex_);
  add_event({m.what, m.detail, m.tile, at});
  const char* state = state_after(m);
  if (state == nullptr || m.tile < 0) return;
  const auto t = static_cast<std::size_t>(m.tile);
  if (s_.tiles.size() <= t) s_.tiles.resize(t + 1);
  s_.tiles[t].id = static_cast<unsigned>(t);
  // Straggling is a tile in service falling behind: it does not hide a loss
  // or a quarantine.
  if (std::string_view(state) == "straggling" && s_.tiles[t].state != "in service") return;
  s_.tiles[t].state = state;
}

void Board::count(const std::string& name, double value) {
  std::lock_guard<std::mutex> lock(mutex_);
  set_counter(name, value);
}

void Board::set_counter(const std::string& name, double value) {
  if (s_.state == "starting") s_.state = "running";
  for (auto& [n, v] : s_.counters)
    if (n == name) {
      v = value;
      return;
    }
  s_.counters.emplace_back(name, value);
}

void Board::streams(const std::vector<stream::StreamProfile>& sample, std::optional<double> over_s) {
  const double now = now_s();
  std::lock_guard<std::mutex> lock(mutex_);
  if (s_.state == "starting") s_.state = "running";
  std::vector<StreamView> views;
  views.reserve(sample.size());
  const double since = now - streams_at_s_;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const stream::StreamProfile& p = sample[i];
    StreamView v{p.from, p.to, p.tokens, 0, p.queued};
    if (over_s) {
      v.per_s = *over_s > 0 ? static_cast<double>(p.tokens) / *over_s : 0;
    } else {
      // Streams keep their order from sample to sample: the same one in the last.
      const bool seen = i < s_.streams.size() && s_.streams[i].from == p.from && s_.streams[i].to == p.to;
      const std::uint64_t before = seen ? s_.streams[i].tokens : 0;
      v.per_s = since > 0 && p.tokens >= before ? static_cast<double>(p.tokens - before) / since : 0;
    }
    views.push_back(std::move(v));
  }
  s_.streams = std::move(views);
  streams_at_s_ = now;
}

void Board::spits(const spits::Report& r, double elapsed_s) {
  const double now = now_s();
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t running = 0, workers = 0, measured_results = 0;
  double task_s = 0;  // sum of each Task Manager's time per task, weighted by its results
  for (std::size_t i = 0; i < r.task_managers.size(); ++i) {
    const spits::TaskManagerCounts& tm = r.task_managers[i];
    running += tm.pushed > tm.results ? tm.pushed - tm.results : 0;
    workers += tm.workers;
    if (tm.task_s > 0) {
      // A Task Manager with a time but no result yet counts once.
      const std::uint64_t weight = std::max<std::uint64_t>(tm.results, 1);
      task_s += tm.task_s * static_cast<double>(weight);
      measured_results += weight;
    }
    std::string who = tm.name;
    if (!tm.host.empty()) {
      who += " on ";
      who += tm.host;
    }
    if (i >= task_manager_losses_.size()) {
      task_manager_losses_.push_back(0);
      std::string detail = who;
      detail += " (";
      detail += std::to_string(tm.workers);
      detail += tm.workers == 1 ? " Worker)" : " Workers)";
      add_event({"task-manager-joined", std::move(detail), -1, now});
    }
    if (tm.lost > task_manager_losses_[i]) {
      task_manager_losses_[i] = tm.lost;
      add_event({"task-manager-lost", who, -1, now});
    }
  }
  const double t = measured_results > 0 ? task_s / static_cast<double>(measured_results) : 0;
  // Both over the whole job so far: their ratio is then the share of the
  // Workers' time spent inside tasks (a recent rate against a mean time
  // would read above 1 after a slow spell).
  const double rate = elapsed_s > 0 ? static_cast<double>(r.committed) / elapsed_s : 0;
  const double model = t > 0 ? static_cast<double>(workers) / t : 0;
  set_counter("tasks committed", static_cast<double>(r.committed));
  set_counter("tasks generated", static_cast<double>(r.generated));
  set_counter("tasks running", static_cast<double>(running));
  set_counter("task managers", static_cast<double>(r.task_managers.size()));
  set_counter("workers", static_cast<double>(workers));
  set_counter("seconds per task (measured)", t);
  set_counter("commits per second", rate);
  set_counter("model: commits per second at W / T", model);
  set_counter("share of the model reached", model > 0 ? rate / model : 0);
}

void Board::jobs(const std::vector<JobInfo>& jobs, const std::vector<std::string>& workers, const std::vector<std::string>& idle) {
  const double now = now_s();
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<JobView> views;
  views.reserve(jobs.size());
  std::map<std::string, double> in_state;
  for (const JobInfo& j : jobs) {
    JobView v;
    v.id = j.id;
    v.model = j.args.empty() ? std::string() : j.args.front();
    v.command = fmt::format("{}", fmt::join(j.args, " "));  // as `redflow job N` prints it
    v.state = to_string(j.state);
    v.workers_asked = j.workers_asked;
    v.workers = j.workers;
    v.starts = j.starts;
    v.exit_status = j.exit_status;
    v.message = j.message;
    // Jobs keep their order (submission): the same one in the last call, if it was there.
    const std::size_t i = views.size();
    const bool seen = i < s_.jobs.size() && s_.jobs[i].id == j.id;
    if (!seen || s_.jobs[i].state != v.state || s_.jobs[i].starts != v.starts) {
      // Appended, not built with operator+ (GCC 12's -Wrestrict at -O3 misreads those).
      std::string what = "job-";
      what += v.state;
      std::string detail = "job ";
      detail += std::to_string(j.id);
      detail += ": ";
      detail += v.command;
      if (!v.message.empty()) {
        detail += " (";
        detail += v.message;
        detail += ')';
      }
      add_event({std::move(what), std::move(detail), -1, now});
    }
    ++in_state[v.state];
    views.push_back(std::move(v));
  }
  s_.jobs = std::move(views);
  s_.workers.clear();
  for (const std::string& w : workers)
    s_.workers.push_back({w, std::find(idle.begin(), idle.end(), w) != idle.end() ? "idle" : "busy"});
  set_counter("jobs finished", in_state["succeeded"] + in_state["failed"] + in_state["cancelled"]);
  for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) {
    std::string name = "jobs ";
    name += state;
    set_counter(name, in_state[state]);
  }
  set_counter("workers", static_cast<double>(workers.size()));
  set_counter("idle workers", static_cast<double>(idle.size()));
}

void Board::finish(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  s_.state = status.ok() ? "finished" : "failed";
  if (!status.ok()) s_.failure = status.message();
}

Snapshot Board::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s = s_;
  s.elapsed_s = now_s();
  s.gantt_version = gantt_.version;
  s.gantt_execution = gantt_.execution;
  return s;
}

double Board::now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

void Board::gantt_watched() const { gantt_watched_at_s_.store(now_s(), std::memory_order_relaxed); }

bool Board::wants_gantt() const {
  const double now = now_s();
  return now - gantt_watched_at_s_.load(std::memory_order_relaxed) <= kGanttWatchedS &&
         now >= next_gantt_at_s_.load(std::memory_order_relaxed);
}

void Board::record_gantt(std::uint64_t execution, std::string svg, double cost_s) {
  auto shared = std::make_shared<const std::string>(std::move(svg));
  std::lock_guard<std::mutex> lock(mutex_);
  next_gantt_at_s_.store(now_s() + std::max(kGanttEveryS, std::max(0.0, cost_s) / kGanttShare), std::memory_order_relaxed);
  ++gantt_.version;
  gantt_.execution = execution;
  gantt_.svg = std::move(shared);
}

double Board::last_makespan_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return s_.last_makespan_s;
}

GanttView Board::gantt() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gantt_;
}

std::string to_json(const Snapshot& s) {
  nlohmann::json tiles = nlohmann::json::array();
  for (const TileView& t : s.tiles)
    tiles.push_back({{"id", t.id}, {"worker", t.worker}, {"host", t.host}, {"state", t.state}, {"actors", t.actors},
                     {"bytes_in", t.bytes_in}, {"bytes_out", t.bytes_out}, {"lost_votes", t.lost_votes},
                     {"speculative", t.speculative}, {"straggled", t.straggled}});
  nlohmann::json events = nlohmann::json::array();
  for (const EventView& e : s.events) events.push_back({{"what", e.what}, {"detail", e.detail}, {"tile", e.tile}, {"at_s", e.at_s}});
  nlohmann::json streams = nlohmann::json::array();
  for (const StreamView& v : s.streams)
    streams.push_back({{"from", v.from}, {"to", v.to}, {"tokens", v.tokens}, {"per_s", v.per_s}, {"queued", v.queued}});
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobView& j : s.jobs)
    jobs.push_back({{"id", j.id}, {"model", j.model}, {"command", j.command}, {"state", j.state}, {"workers_asked", j.workers_asked},
                    {"workers", j.workers}, {"starts", j.starts}, {"exit_status", j.exit_status}, {"message", j.message}});
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerView& w : s.workers) workers.push_back({{"name", w.name}, {"state", w.state}});
  nlohmann::json counters = nlohmann::json::array();
  for (const auto& [name, value] : s.counters) counters.push_back({{"name", name}, {"value", value}});
  nlohmann::json j{{"model", s.model},
                   {"name", s.name},
                   {"state", s.state},
                   {"failure", s.failure},
                   {"elapsed_s", s.elapsed_s},
                   {"executions_done", s.executions_done},
                   {"executions_total", s.executions_total},
                   {"actors_done", s.actors_done},
                   {"busy_s", s.busy_s},
                   {"actors_per_s", s.actors_per_s},
                   {"faults", {{"injected", s.faults_injected}, {"detected", s.faults_detected}, {"corrected", s.faults_corrected}}},
                   {"reexecutions", s.reexecutions},
                   {"lost_tiles", s.lost_tiles},
                   {"recomputed_actors", s.recomputed_actors},
                   {"speculative_copies", s.speculative_copies},
                   {"quarantined_tiles", s.quarantined_tiles},
                   {"probation_tiles", s.probation_tiles},
                   {"scheduler", s.scheduler},
                   {"redundancy", s.redundancy},
                   {"last_execution", {{"makespan_s", s.last_makespan_s}, {"actors", s.last_actors}}},
                   {"tiles", std::move(tiles)},
                   {"events", std::move(events)},
                   {"events_total", s.events_total},
                   {"counters", std::move(counters)},
                   {"streams", std::move(streams)},
                   {"jobs", std::move(jobs)},
                   {"workers", std::move(workers)},
                   {"gantt", {{"version", s.gantt_version}, {"execution", s.gantt_execution}}}};
  return j.dump();
}

void count_stream_run(Board& board, std::size_t operators, const stream::RunResult& r) {
  std::uint64_t tokens = 0;
  for (const auto& s : r.streams) tokens += s.tokens;
  board.count("operators", static_cast<double>(operators));
  board.count("streams", static_cast<double>(r.streams.size()));
  board.count("tokens", static_cast<double>(tokens));
  board.count("seconds", r.seconds);
  board.count("tokens per second", r.seconds > 0 ? static_cast<double>(tokens) / r.seconds : 0);
  if (!r.nodes.empty()) board.count("nodes", static_cast<double>(r.nodes.size()));
  board.streams(r.streams, r.seconds);
}

void count_spits_report(Board& board, const spits::Report& r) {
  board.count("tasks committed", static_cast<double>(r.committed));
  board.count("tasks generated", static_cast<double>(r.generated));
  board.count("results discarded as duplicates", static_cast<double>(r.duplicates));
  board.count("failed executions", static_cast<double>(r.strikes));
  board.count("tasks poisoned", static_cast<double>(r.poisoned.size()));
  board.count("task managers", static_cast<double>(r.task_managers.size()));
  board.count("seconds", r.seconds);
  board.count("commits per second", r.seconds > 0 ? static_cast<double>(r.committed) / r.seconds : 0.0);
}

}  // namespace redflow::dashboard
