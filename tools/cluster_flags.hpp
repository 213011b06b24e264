// The flags of a driver that meets worker processes, written once for every
// subcommand that has one (`run`, `stream`, `spits`): the same names, help
// and checks everywhere, filling one ClusterOptions (redflow/cluster.hpp).
//
//   --listen ADDR  --min-workers N  [--max-workers N]  --wait S
//   --heartbeat-timeout S  --key FILE.key  --authorized-keys FILE
//
// Older names stay as hidden aliases so scripts keep working: --min-tiles
// (--min-workers), --max-tiles (--max-workers), --tile-wait (--wait).
#pragma once

#include <CLI/CLI.hpp>

#include "redflow/cluster.hpp"

namespace redflow::cli {

struct ClusterFlagsText {
  const char* workers;  // what a worker is to this command, plural: "remote tiles", "nodes", "Task Managers"
  bool joins = false;   // the command takes --max-workers (workers may join beyond --min-workers)
  const char* min_default = "required with --listen or --address-file";  // what --min-workers is when not given, for the help
};

// Adds the flags to `cmd` in the group "Workers", bound to `options` (whose
// values when called are the defaults shown in the help). Returns the
// --min-workers option, so a command can ask whether it was given.
CLI::Option* add_cluster_flags(CLI::App* cmd, ClusterOptions& options, const ClusterFlagsText& text);

}  // namespace redflow::cli
