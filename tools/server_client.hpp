// What the client subcommands (`submit`, `jobs`, `job`, `wait`, `cancel`,
// `workers`) share: the flags that find the server, and a job's lines.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "redflow/client.hpp"

namespace redflow::cli {

// --server ENDPOINT and --server-file FILE (default: $REDFLOW_SERVER_FILE,
// else ~/.redflow/server), bound to `options`.
void add_server_flags(CLI::App* cmd, ClientOptions& options);
// The flags' own mistake, a usage error: neither --server nor --server-file
// (an empty one given).
Status check_server_flags(const ClientOptions& options);
// The server file `redflow server` writes when not told where.
std::string default_server_file();
// A job id argument: a whole number from 1, as `redflow submit` prints it.
CLI::Option* add_job_id(CLI::App* cmd, std::uint64_t& id);
// "job 3: succeeded (exit status 0)" and the lines under it.
std::string describe_job(const JobInfo& job, bool with_report);

}  // namespace redflow::cli
