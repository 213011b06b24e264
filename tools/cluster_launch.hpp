// Where a `redflow run` process stands in a job started several times over:
// by a batch queue sharing an --address-file (PY-PITS section V.B), or by
// mpirun / srun / a PMI launcher (read from the environment alone). One
// starter becomes the driver and publishes where it listens; every other one
// becomes a worker serving one tile to it (docs/remote.md, examples/cluster/).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "net/address_file.hpp"
#include "net/security.hpp"
#include "redflow/status.hpp"

namespace redflow::cli {

struct LaunchArgs {
  std::string address_file;         // --address-file: the race for it decides the driver
  std::string rendezvous_dir = ".";  // under a launcher: where its file goes (shared by the ranks)
  bool ignore_launcher = false;     // --no-launcher: a launcher's variables do not make this a job
  double wait_s = 60;               // a worker's wait for the driver's address
};

// The driver's side of a launch: it publishes the endpoint it got once the
// server listens, and removes the file when it goes (also on an error).
class PublishedAddress {
 public:
  explicit PublishedAddress(std::string path) : path_(std::move(path)) {}
  ~PublishedAddress();
  PublishedAddress(const PublishedAddress&) = delete;
  PublishedAddress& operator=(const PublishedAddress&) = delete;
  // `bound` is the server's endpoint; a wildcard host (0.0.0.0, *, ::) is
  // published as this host's name, which the other starters can reach.
  Status publish(const std::string& bound, const net::SecurityOptions& security);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct LaunchPlan {
  bool launched = false;      // some launch applies (else: a plain run)
  bool worker = false;        // this process serves a tile
  unsigned tiles = 0;         // the driver: workers the launcher started (size - 1); 0 with --address-file
  std::string who;            // "rank 2 of 3 (mpirun)", for messages
  std::unique_ptr<PublishedAddress> address;  // the driver's file
  net::AddressRecord driver;  // a worker: the driver it found
};

// Decides this process's part. A worker has waited for the driver's address.
Result<LaunchPlan> plan_launch(const LaunchArgs& args);

// How a worker process finds its driver (redflow worker):
// the flags --connect or --address-file, --key, --server-key and
// --connect-timeout, and resolve(), which checks that one of the first two
// was given and, for --address-file, waits for the driver's record and takes
// its endpoint and (unless --server-key names a file) its public key.
struct DriverConnection {
  std::string connect, address_file;
  net::SecurityOptions security;
  double timeout_s = 30;
  void add_flags(CLI::App* sub);
  // Exactly one of --connect and --address-file was given.
  Status check() const;
  // check(), then, with --address-file, waits for the file and reads the endpoint (and key) from it.
  Status resolve();
};

}  // namespace redflow::cli
