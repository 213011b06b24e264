// read_run_files (run_files.hpp): a stats file and a trace file into a Board.
#include "dashboard/run_files.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace redflow::dashboard {

namespace {

Result<nlohmann::json> read_json(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(std::string(what) + " '" + path + "': cannot open it");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(std::string(what) + " '" + path + "': not a JSON object");
  return j;
}

// Reads `key` of `j` into `out` when present; a value of the wrong type is an error naming it.
template <typename T>
Status field(const nlohmann::json& j, const char* key, T& out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    std::string message = where;
    message += ": '";
    message += key;
    message += "' has the wrong type: ";
    message += it->dump();
    return Status::InvalidArgument(message);
  }
  return Status::Ok();
}

Status read_tile(const nlohmann::json& j, TileStats& t, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": not an object");
  REDFLOW_RETURN_IF_ERROR(field(j, "actors", t.actors, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "bytes_sent", t.bytes_sent, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "bytes_received", t.bytes_received, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "lost_votes", t.lost_votes, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "speculative", t.speculative, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "straggled", t.straggled, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "lost", t.lost, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "quarantined", t.quarantined, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "on_probation", t.on_probation, where));
  REDFLOW_RETURN_IF_ERROR(field(j, "worker", t.worker, where));
  return field(j, "host", t.host, where);
}

Status read_stats(const std::string& path, ExecutionStats& st) {
  auto j = read_json(path, "stats file");
  if (!j.ok()) return j.status();
  const std::string where = "stats file '" + path + "'";
  auto tiles = j->find("tiles");
  if (tiles == j->end() || !tiles->is_array() || !j->contains("actors_executed"))
    return Status::InvalidArgument(where + ": not the stats of a redflow run (no 'tiles' array or 'actors_executed'; write one with "
                                           "redflow run --stats FILE)");
  REDFLOW_RETURN_IF_ERROR(field(*j, "actors_executed", st.actors_executed, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "makespan_s", st.makespan_s, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "injected_faults", st.injected_faults, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "detected_faults", st.detected_faults, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "reexecutions", st.reexecutions, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "lost_tiles", st.lost_tiles, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "recomputed_actors", st.recomputed_actors, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "speculative_copies", st.speculative_copies, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "quarantined_tiles", st.quarantined_tiles, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "probation_tiles", st.probation_tiles, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "scheduler", st.scheduler, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "redundancy", st.redundancy, where));
  st.tiles.resize(tiles->size());
  for (std::size_t t = 0; t < tiles->size(); ++t)
    REDFLOW_RETURN_IF_ERROR(read_tile((*tiles)[t], st.tiles[t], where + ", tiles[" + std::to_string(t) + "]"));
  return Status::Ok();
}

// The trace's instant events ("ph": "i", "cat": "mark"), as the runtime marked them.
Status read_marks(const std::string& path, Board& board) {
  auto j = read_json(path, "trace file");
  if (!j.ok()) return j.status();
  auto events = j->find("traceEvents");
  if (events == j->end() || !events->is_array())
    return Status::InvalidArgument("trace file '" + path + "': no 'traceEvents' array (write one with redflow run --trace FILE.json)");
  for (const auto& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "i" || e.value("cat", "") != "mark") continue;
    TracedMark m;
    m.what = e.value("name", "");
    m.time_s = e.value("ts", 0.0) / 1e6;  // the trace counts microseconds
    if (auto args = e.find("args"); args != e.end() && args->is_object()) {
      m.detail = args->value("detail", "");
      const std::string place = args->value("place", "");
      if (place.rfind("tile ", 0) == 0) m.tile = std::atoi(place.c_str() + 5);
    }
    board.mark(m, m.time_s);
  }
  return Status::Ok();
}

}  // namespace

std::string stats_model(const std::string& stats_path) {
  auto j = read_json(stats_path, "stats file");
  if (!j.ok() || j->contains("actors_executed")) return "graph";
  if (j->contains("committed") && j->contains("task_managers")) return "spits";
  if (j->contains("operators") && j->contains("streams")) return "stream";
  return "graph";
}

Status read_stream_profile(Board& board, const std::string& profile_path) {
  auto j = read_json(profile_path, "stats file");
  if (!j.ok()) return j.status();
  const std::string where = "stream profile '" + profile_path + "'";
  stream::RunResult r;
  REDFLOW_RETURN_IF_ERROR(field(*j, "seconds", r.seconds, where));
  for (const char* list : {"operators", "streams"}) {
    auto it = j->find(list);
    if (it == j->end() || !it->is_array()) return Status::InvalidArgument(where + ": no '" + list + "' array");
  }
  for (const auto& s : (*j)["streams"]) {
    stream::StreamProfile& p = r.streams.emplace_back();
    REDFLOW_RETURN_IF_ERROR(field(s, "from", p.from, where + ", a stream"));
    REDFLOW_RETURN_IF_ERROR(field(s, "to", p.to, where + ", a stream"));
    REDFLOW_RETURN_IF_ERROR(field(s, "tokens", p.tokens, where + ", a stream"));
  }
  count_stream_run(board, (*j)["operators"].size(), r);
  board.finish(Status::Ok());
  return Status::Ok();
}

Status read_spits_stats(Board& board, const std::string& stats_path) {
  auto j = read_json(stats_path, "stats file");
  if (!j.ok()) return j.status();
  const std::string where = "SPITS stats file '" + stats_path + "'";
  spits::Report r;
  REDFLOW_RETURN_IF_ERROR(field(*j, "job", r.job, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "seconds", r.seconds, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "generated", r.generated, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "committed", r.committed, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "duplicates_discarded", r.duplicates, where));
  REDFLOW_RETURN_IF_ERROR(field(*j, "strikes", r.strikes, where));
  for (const char* list : {"task_managers", "poisoned"}) {
    auto it = j->find(list);
    if (it == j->end() || !it->is_array()) return Status::InvalidArgument(where + ": no '" + list + "' array");
  }
  r.task_managers.resize((*j)["task_managers"].size());
  r.poisoned.resize((*j)["poisoned"].size());
  count_spits_report(board, r);
  board.finish(Status::Ok());
  return Status::Ok();
}

Status read_run_files(Board& board, const std::string& stats_path, const std::string& trace_path) {
  ExecutionStats st;
  REDFLOW_RETURN_IF_ERROR(read_stats(stats_path, st));
  if (!trace_path.empty()) REDFLOW_RETURN_IF_ERROR(read_marks(trace_path, board));
  board.record(st);
  board.finish(Status::Ok());
  return Status::Ok();
}

}  // namespace redflow::dashboard
