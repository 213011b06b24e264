// ClusterOptions::validate (redflow/cluster.hpp): the checks of a driver's
// network options, in one place for every model. It lives in src/net because
// the address and key rules are the sockets' (check_listen_address,
// secure_server), which it calls rather than repeats.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "net/security.hpp"
#include "redflow/cluster.hpp"

namespace redflow {

namespace {

bool positive_seconds(double s) { return std::isfinite(s) && s > 0; }

}  // namespace

Status ClusterOptions::validate() const {
  if (!positive_seconds(wait_s))
    return Status::InvalidArgument(fmt::format("wait_s (--wait) {}: the wait for workers must be a positive number of seconds", wait_s));
  if (!positive_seconds(heartbeat_timeout_s))
    return Status::InvalidArgument(fmt::format("heartbeat_timeout_s (--heartbeat-timeout) {}: must be a positive number of seconds", heartbeat_timeout_s));
  if (max_workers != 0 && max_workers < min_workers)
    return Status::InvalidArgument("max_workers (--max-workers) " + std::to_string(max_workers) + " is below min_workers (--min-workers) " +
                                   std::to_string(min_workers) + " (it counts every worker, the ones waited for too)");
  if (listen.empty()) return Status::Ok();
  const net::SecurityOptions keys{.key_file = key_file, .authorized_keys_file = authorized_keys_file};
  REDFLOW_RETURN_IF_ERROR(net::check_server_keys(keys));
  return net::check_listen_address(listen, keys);
}

}  // namespace redflow
