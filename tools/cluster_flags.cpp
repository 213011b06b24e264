// add_cluster_flags (cluster_flags.hpp).
#include "cluster_flags.hpp"

#include <string>

#include "net/security.hpp"

namespace redflow::cli {

CLI::Option* add_cluster_flags(CLI::App* cmd, ClusterOptions& o, const ClusterFlagsText& text) {
  const std::string workers = text.workers;
  const char* group = "Workers";
  const char* hidden = "";  // CLI11: an option in the empty group is left out of the help
  cmd->add_option("--listen", o.listen,
                  "Listen here for worker processes (`redflow worker --connect ADDR`), e.g. 'tcp://127.0.0.1:*' for a free port "
                  "(printed); anything but loopback needs --key and --authorized-keys (docs/remote.md; default: none, no worker processes)")
      ->type_name("ADDR")
      ->group(group);
  auto* min = cmd->add_option("--min-workers", o.min_workers, "With --listen or --address-file: " + workers + " to wait for before starting (" + text.min_default + ")")
                  ->check(CLI::Range(1u, 4096u))
                  ->group(group);
  cmd->add_option("--min-tiles", o.min_workers, "Old name of --min-workers")->check(CLI::Range(1u, 4096u))->group(hidden);
  if (text.joins) {
    cmd->add_option("--max-workers", o.max_workers,
                    "With --listen: " + workers + " in all, counting --min-workers; the ones beyond may join at any time, mid-run too "
                    "(docs/remote.md, \"Joins\"; default: --min-workers + 8)")
        ->check(CLI::Range(1u, 4096u))
        ->group(group);
    cmd->add_option("--max-tiles", o.max_workers, "Old name of --max-workers")->check(CLI::Range(1u, 4096u))->group(hidden);
  }
  cmd->add_option("--wait", o.wait_s, "With --listen or --address-file: seconds to wait for --min-workers " + workers)
      ->check(CLI::Range(0.01, 1e7))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--tile-wait", o.wait_s, "Old name of --wait")->check(CLI::Range(0.01, 1e7))->group(hidden);
  cmd->add_option("--heartbeat-timeout", o.heartbeat_timeout_s,
                  "Seconds of silence after which a worker is lost: a graph run re-runs its work elsewhere, a SPITS job re-queues its "
                  "tasks, a stream run fails naming it (docs/remote.md, \"Deadlines\")")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str()
      ->group(group);
  cmd->add_option(net::kKeyFlag, o.key_file,
                  "The driver's secret key (redflow keygen): CURVE-encrypts the links to workers (docs/security.md; default: none, "
                  "plain text on loopback only)")
      ->type_name("FILE.key")
      ->group(group);
  cmd->add_option(net::kAuthorizedKeysFlag, o.authorized_keys_file,
                  "With --key: the workers' public keys it lets in, one per line; any other peer is refused and logged (default: none)")
      ->type_name("FILE")
      ->group(group);
  return min;
}

}  // namespace redflow::cli
