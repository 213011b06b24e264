// `redflow launch-probe` (hidden): the smallest program that goes through a
// whole launch: find its role (launcher environment, address file race or
// --connect), meet the others over real ZeroMQ sockets, secured when given
// keys, and print who found whom. It proves rendezvous and security where
// the real `redflow run` wiring is not yet in place, and tests drive it
// (tests/net_launch_test.cpp, tests/net_netns_test.cpp, examples/cluster/).
#include <fmt/format.h>
#include <unistd.h>

#include <zmq.hpp>

#include <chrono>
#include <set>

#include "cli_common.hpp"
#include "net/address_file.hpp"
#include "net/keys.hpp"
#include "net/launcher.hpp"
#include "net/security.hpp"

namespace redflow::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct ProbeArgs {
  std::string address_file, rendezvous_dir = ".", connect, listen = "tcp://127.0.0.1:*";
  int tiles = -1;
  double timeout = 30;
  net::SecurityOptions security;
};

std::chrono::milliseconds remaining(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

int run_driver(const ProbeArgs& a, const std::string& file, int tiles, const std::string& who, Clock::time_point deadline) {
  // Declared in this order so that they end in reverse: socket, authenticator, context.
  zmq::context_t context;
  net::ZapAuthenticator zap(context);
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  if (Status s = net::secure_server(router, a.security, zap); !s.ok()) return fail(s);
  try {
    router.bind(a.listen);
  } catch (const zmq::error_t& e) {
    return fail(Status::IOError(fmt::format("--listen {}: {}", a.listen, e.what())));
  }
  net::AddressRecord record;
  record.endpoint = router.get(zmq::sockopt::last_endpoint);
  if (!a.security.key_file.empty()) {
    auto keys = net::read_secret_key_file(a.security.key_file);
    if (!keys.ok()) return fail(keys.status());
    record.server_public_key = keys->public_key;
  }
  if (!file.empty())
    if (Status s = net::publish_address(file, record); !s.ok()) return fail(s);
  fmt::print("driver: {} listening on {}, waiting for {} tiles\n", who, record.endpoint, tiles);
  std::fflush(stdout);
  std::vector<std::string> ids, hellos;
  while (static_cast<int>(ids.size()) < tiles) {
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, remaining(deadline));
    if (!(item.revents & ZMQ_POLLIN)) {
      return fail(Status::NotFound(fmt::format("driver: {} of {} tiles joined within {} s", ids.size(), tiles, a.timeout)));
    }
    zmq::message_t id, body;
    (void)router.recv(id);
    (void)router.recv(body);
    ids.push_back(id.to_string());
    hellos.push_back(body.to_string());
    router.send(id, zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("welcome"), zmq::send_flags::none);
  }
  for (const auto& h : hellos) fmt::print("driver: tile joined: {}\n", h);
  for (const auto& id : ids) {
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("bye"), zmq::send_flags::none);
  }
  // Give the byes time to leave before the socket closes (linger 0 would drop them).
  router.set(zmq::sockopt::linger, 2000);
  if (!file.empty())
    if (Status s = net::release_address_file(file); !s.ok()) return fail(s);
  fmt::print("driver: {} tiles found the driver\n", ids.size());
  return 0;
}

int run_worker(const ProbeArgs& a, const std::string& endpoint, const std::string& server_key, const std::string& who,
               Clock::time_point deadline) {
  net::SecurityOptions security = a.security;
  if (security.server_public_key_file.empty()) security.server_public_key = server_key;
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 1000);
  if (Status s = net::secure_client(dealer, security); !s.ok()) return fail(s);
  dealer.connect(endpoint);
  const auto me = net::this_process_record();
  dealer.send(zmq::buffer(fmt::format("{} host {} pid {}", who, me.host, me.pid)), zmq::send_flags::none);
  for (;;) {
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, remaining(deadline));
    if (!(item.revents & ZMQ_POLLIN))
      return fail(Status::NotFound(fmt::format("tile: no answer from the driver at {} within {} s", endpoint, a.timeout)));
    zmq::message_t m;
    (void)dealer.recv(m);
    const std::string text = m.to_string();
    if (text == "bye") return 0;
    if (text == "welcome") {
      fmt::print("tile: {} joined the driver at {}\n", who, endpoint);
      std::fflush(stdout);
      continue;
    }
    dealer.send(m, zmq::send_flags::none);  // anything else is echoed: tests time round trips with it
  }
}

int probe_main(const ProbeArgs& a) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(a.timeout * 1000));
  // Any starter may turn out to be the driver: refuse a bad --listen before claiming anything.
  if (Status s = net::check_listen_address(a.listen, a.security); !s.ok() && a.connect.empty()) return usage_error(s);
  if (!a.connect.empty())
    if (Status s = net::check_connect_address(a.connect, "--connect"); !s.ok()) return usage_error(s);
  if (!a.connect.empty()) return run_worker(a, a.connect, "", "tile", deadline);
  auto launch = net::detect_launch();
  if (!launch.ok()) return fail(launch.status());
  std::string file = a.address_file;
  std::string who = "starter";
  int tiles = a.tiles;
  bool driver = false;
  if (*launch) {
    const net::LaunchRole& role = **launch;
    who = fmt::format("rank {} of {} ({})", role.rank, role.size, net::launcher_name(role.launcher));
    if (tiles < 0) tiles = role.size - 1;
    if (file.empty()) {
      auto path = net::launch_address_file(role, a.rendezvous_dir);
      if (!path.ok()) return fail(path.status());
      file = *path;
    }
    driver = role.driver();
    if (driver) {
      auto claim = net::claim_address_file(file);
      if (!claim.ok()) return fail(claim.status());
      if (*claim != net::Claim::kDriver)
        return fail(Status::InvalidArgument(fmt::format("rank 0: address file {} already exists (left by an earlier job? remove it)", file)));
    }
  } else {
    if (file.empty())
      return fail(Status::InvalidArgument("no launcher found (mpirun, srun, PMI) and no --address-file or --connect: nothing to meet through"));
    auto claim = net::claim_address_file(file);
    if (!claim.ok()) return fail(claim.status());
    driver = *claim == net::Claim::kDriver;
    if (tiles < 0) tiles = 1;
  }
  if (driver) {
    const int code = run_driver(a, file, tiles, who, deadline);
    if (code != 0 && !file.empty()) (void)net::release_address_file(file);  // no stale file for the next job
    return code;
  }
  auto record = net::wait_for_address(file, remaining(deadline));
  if (!record.ok()) return fail(record.status());
  return run_worker(a, record->endpoint, record->server_public_key, who, deadline);
}

}  // namespace

Command add_launch_probe_command(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  auto* sub = app.add_subcommand("launch-probe",
                                 "Meet through a launch (mpirun, srun, PMI, --address-file) over ZeroMQ and print who found whom.\n"
                                 "Examples:\n"
                                 "  mpirun -n 3 redflow launch-probe --rendezvous-dir $HOME/jobs   (as root: --allow-run-as-root; more ranks\n"
                                 "    than cores: --oversubscribe)\n"
                                 "  redflow launch-probe --address-file /shared/job.address --tiles 2   # start it 3 times\n");
  sub->group("");  // hidden: a diagnostic, not part of the user's commands
  sub->add_option("--address-file", a->address_file, "Rendezvous file: the first starter creates it (O_EXCL) and becomes the driver");
  sub->add_option("--rendezvous-dir", a->rendezvous_dir, "Shared directory for the launcher's file (redflow-LAUNCHER-JOBID.address)")
      ->capture_default_str();
  sub->add_option("--connect", a->connect, "Be a tile of the driver at this endpoint");
  sub->add_option("--listen", a->listen, "The driver's endpoint (non-loopback needs --key and --authorized-keys)")->capture_default_str();
  sub->add_option("--tiles", a->tiles, "Tiles the driver waits for (default: the launcher's size - 1, else 1)");
  sub->add_option("--timeout", a->timeout, "Seconds before giving up")->capture_default_str();
  sub->add_option(net::kKeyFlag, a->security.key_file, "This process's secret key (redflow keygen)");
  sub->add_option(net::kAuthorizedKeysFlag, a->security.authorized_keys_file, "Driver: the worker keys it accepts");
  sub->add_option(net::kServerKeyFlag, a->security.server_public_key_file, "Tile: the driver's public key (default: from the address file)");
  return {sub, [a] { return probe_main(*a); }};
}

}  // namespace redflow::cli
