// run_worker (redflow/worker.hpp): one WorkerSession that offers every role.
#include "worker/run_worker.hpp"

#include <chrono>

#include "net/address_file.hpp"
#include "net/tile_worker.hpp"
#include "net/worker_session.hpp"
#include "spits/task_manager_role.hpp"
#include "stream/stream_worker.hpp"

namespace redflow {

Status run_worker(const WorkerOptions& options, const Registry& actors, const stream::OperatorRegistry& operators) {
  return worker::run(options, actors, operators, "embedded");
}

namespace worker {

Status run(const WorkerOptions& options, const Registry& actors, const stream::OperatorRegistry& operators, std::string_view origin) {
  if (options.connect.empty() == options.address_file.empty())
    return Status::InvalidArgument("a worker needs the driver's endpoint: connect (--connect ADDR) or address_file (--address-file FILE)");
  if (options.cores == 0) return Status::InvalidArgument("a worker needs at least 1 core");
  net::SecurityOptions security;
  security.key_file = options.key_file;
  security.server_public_key_file = options.server_key_file;
  net::WorkerSessionOptions session;
  session.driver = [&options]() -> Result<net::DriverAddress> {
    if (options.address_file.empty()) return net::DriverAddress{options.connect, {}};
    auto record = net::wait_for_address(options.address_file, std::chrono::milliseconds(static_cast<long>(options.connect_timeout_s * 1000)));
    if (!record.ok()) return record.status();
    return net::DriverAddress{record->endpoint, record->server_public_key};
  };
  session.security = security;
  session.name = options.name;
  session.cores = options.cores;
  session.connect_timeout_s = options.connect_timeout_s;
  session.persist = options.persist;
  session.idle_timeout_s = options.idle_timeout_s;
  if (options.on_welcome)
    session.on_welcome = [&options](const net::WelcomeMessage& w) { options.on_welcome(net::role_name(w.role), w.tile); };
  net::WorkerSession worker(std::move(session));
  worker.add(net::make_tile_role(net::TileRoleOptions{options.cores, options.slots, options.slot_bytes}, actors, origin));
  worker.add(stream::make_node_role(operators, options.cores));
  worker.add(spits::make_task_manager_role(options.cores));
  return worker.run();
}

}  // namespace worker
}  // namespace redflow
