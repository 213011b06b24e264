// plan_launch and the driver's published address (cluster_launch.hpp).
#include "cluster_launch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>

#include "net/keys.hpp"
#include "net/launcher.hpp"

namespace redflow::cli {

PublishedAddress::~PublishedAddress() {
  if (Status s = net::release_address_file(path_); !s.ok()) spdlog::warn("redflow: {}", s.message());
}

Status PublishedAddress::publish(const std::string& bound, const net::SecurityOptions& security) {
  net::AddressRecord record;
  record.endpoint = bound;
  const std::string host = net::endpoint_host(bound);
  if (host == "0.0.0.0" || host == "*" || host == "::") {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return Status::IOError("gethostname failed");
    const std::size_t at = bound.find(host, 6);  // after "tcp://"
    const bool bracketed = at > 0 && bound[at - 1] == '[';
    record.endpoint = "tcp://" + std::string(name) + bound.substr(at + host.size() + (bracketed ? 1 : 0));
  }
  if (!security.key_file.empty()) {
    auto keys = net::read_secret_key_file(security.key_file);
    if (!keys.ok()) return keys.status();
    record.server_public_key = keys->public_key;
  }
  return net::publish_address(path_, record);
}

Result<LaunchPlan> plan_launch(const LaunchArgs& args) {
  LaunchPlan plan;
  std::string file = args.address_file;
  bool driver = false;
  std::optional<net::LaunchRole> role;
  if (!args.ignore_launcher) {
    auto found = net::detect_launch();
    if (!found.ok()) return found.status();
    // A launcher that started one process is no job to meet in.
    if (*found && (*found)->size > 1) role = **found;
  }
  if (role) {
    plan.who = fmt::format("rank {} of {} ({})", role->rank, role->size, net::launcher_name(role->launcher));
    plan.tiles = static_cast<unsigned>(role->size - 1);
    if (file.empty()) {
      auto path = net::launch_address_file(*role, args.rendezvous_dir);
      if (!path.ok()) return path.status();
      file = *path;
    }
    driver = role->driver();
    if (driver) {
      auto claim = net::claim_address_file(file);
      if (!claim.ok()) return claim.status();
      if (*claim != net::Claim::kDriver)
        return Status::InvalidArgument(fmt::format("{}: the address file {} already exists (left by an earlier job? remove it)", plan.who, file));
    }
  } else if (!file.empty()) {
    auto claim = net::claim_address_file(file);
    if (!claim.ok()) return claim.status();
    driver = *claim == net::Claim::kDriver;
    plan.who = driver ? "the first starter" : "a later starter";
  } else {
    return plan;  // a plain run
  }
  plan.launched = true;
  if (driver) {
    plan.address = std::make_unique<PublishedAddress>(file);
    return plan;
  }
  plan.worker = true;
  auto record = net::wait_for_address(file, std::chrono::milliseconds(static_cast<long>(args.wait_s * 1000)));
  if (!record.ok()) return record.status();
  plan.driver = *record;
  return plan;
}

void DriverConnection::add_flags(CLI::App* sub) {
  auto* c = sub->add_option("--connect", connect, "The driver's endpoint (tcp://HOST:PORT)")->type_name("ADDR");
  auto* a = sub->add_option("--address-file", address_file, "Read the driver's endpoint (and public key) from the file it published (instead of --connect)")
                ->type_name("FILE");
  c->excludes(a);
  sub->add_option(net::kKeyFlag, security.key_file, "This worker's secret key (redflow keygen); the driver must list its .pub (default: none, plain text)")
      ->type_name("FILE.key");
  sub->add_option(net::kServerKeyFlag, security.server_public_key_file, "The driver's public key (default with --address-file: the one it published)")
      ->type_name("FILE.pub");
  sub->add_option("--connect-timeout", timeout_s, "Seconds to wait for the driver's WELCOME (and, with --address-file, for the file)")
      ->check(CLI::Range(0.01, 86400.0))
      ->capture_default_str();
}

Status DriverConnection::check() const {
  if (connect.empty() == address_file.empty()) return Status::InvalidArgument("give the driver's endpoint: --connect ADDR or --address-file FILE");
  return connect.empty() ? Status::Ok() : net::check_connect_address(connect, "--connect");
}

Status DriverConnection::resolve() {
  REDFLOW_RETURN_IF_ERROR(check());
  if (address_file.empty()) return Status::Ok();
  auto record = net::wait_for_address(address_file, std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
  if (!record.ok()) return record.status();
  connect = record->endpoint;
  if (security.server_public_key_file.empty()) security.server_public_key = record->server_public_key;
  return Status::Ok();
}

}  // namespace redflow::cli
