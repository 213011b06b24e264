// A finished run's files on the dashboard: `redflow view STATS.json
// [--trace TRACE.json]` reads what `redflow run --stats` and `--trace` wrote
// (docs/runtime.md, "Stats JSON"; the Chrome/Perfetto trace of
// visualize.hpp) into a Board, so the pages a live run has can be opened
// afterwards on a run that ran elsewhere (a cluster's driver).
//
// The stats file holds one execution (the last of a --repeat): the board
// shows that one, finished. The trace's marks (its instant events: lost
// tiles, quarantines, failed votes, copies) become the board's events, at
// the times the trace gives.
//
// Thread-safety: a free function; the Board it fills is thread-safe.
#pragma once

#include <string>

#include "dashboard/board.hpp"
#include "redflow/status.hpp"

namespace redflow::dashboard {

// Reads the stats file (and the trace file, when not "") into `board`, then
// finishes it. Errors name the file and what in it is wrong; the board is
// left as it was only up to the first error.
Status read_run_files(Board& board, const std::string& stats_path, const std::string& trace_path);

// What wrote the stats file: "spits" for `redflow spits --stats` (a job's
// counts and its Task Managers), "stream" for `redflow stream --profile`
// (operators and streams), "graph" for anything else (read_run_files then
// says what is wrong with it, if anything).
std::string stats_model(const std::string& stats_path);
// Reads a SPITS job's --stats file into `board` (a board made with model
// "spits") as the live job's end shows it (count_spits_report), then
// finishes it. Errors name the file and the field.
Status read_spits_stats(Board& board, const std::string& stats_path);
// Reads a stream run's --profile file into `board` (a board made with model
// "stream") as the live run's end shows it (count_stream_run), then
// finishes it. Errors name the file and the field.
Status read_stream_profile(Board& board, const std::string& profile_path);

}  // namespace redflow::dashboard
