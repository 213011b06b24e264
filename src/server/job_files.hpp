// The files a finished job leaves where its words said (what `redflow fetch`
// returns): plain functions over a JobInfo, no socket, so the server's loop
// stays small and tests read them without a server.
//
// Thread-safe: they read files only.
#pragma once

#include <string>
#include <vector>

#include "redflow/client.hpp"

namespace redflow::server {

// The paths job `job`'s words name as its outputs, as written there: the
// values of --output/-o NAME=FILE and --stats FILE (run, rem, stream) and
// the out=FILE argument of a SPITS job.
std::vector<std::string> job_output_paths(const JobInfo& job);

// Reads them (relative to the job's directory) and its RunReport at
// `report_path` as "report.json". Outputs that do not exist are left out for
// a job that did not succeed (it wrote none), and are an error naming the
// file for one that did. More than `limit` bytes in all is an error naming
// where the files are.
Result<std::vector<JobFile>> read_job_files(const JobInfo& job, const std::string& report_path, std::size_t limit);

// The text of a file a child of the server wrote (a driver's report, a Slurm
// command's output); "" when there is none.
std::string read_text(const std::string& path);

}  // namespace redflow::server
