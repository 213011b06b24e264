// `redflow keygen`: make a CURVE key pair for a driver or a worker
// (src/net/keys.hpp, docs/security.md).
#include <fmt/format.h>

#include "cli_common.hpp"
#include "net/keys.hpp"

namespace redflow::cli {

namespace {

struct KeygenArgs {
  std::string out = "redflow";
  bool force = false;
};

int keygen_main(const KeygenArgs& a) {
  if (a.out.empty()) return usage_error(Status::InvalidArgument("--out '': give the files' path prefix (e.g. --out driver for driver.key and driver.pub)"));
  auto keys = net::generate_key_pair();
  if (!keys.ok()) return fail(keys.status());
  if (Status s = net::write_key_pair(a.out, *keys, a.force); !s.ok()) return fail(s);
  // What the pair is for, on either side: the same command makes both.
  fmt::print("wrote {0}.key (secret, mode 0600: never copy it off this machine) and {0}.pub (public):\n  {1}\n"
             "for a worker: give the driver's operator {0}.pub, who adds it to the authorized keys:\n"
             "  echo \"$(cat {0}.pub) {2}\" >> workers.keys\n"
             "for a driver (or Job Manager): start it with --key {0}.key --authorized-keys workers.keys, and give each worker\n"
             "  {0}.pub for its --server-key\n",
             a.out, keys->public_key, "NAME");
  return 0;
}

}  // namespace

Command add_keygen_command(CLI::App& app) {
  auto a = std::make_shared<KeygenArgs>();
  auto* sub = app.add_subcommand(
      "keygen",
      "Make a CURVE key pair: PREFIX.key (secret, mode 0600) and PREFIX.pub (public, one line of Z85).\n"
      "Each worker and the driver has its own pair; the driver accepts only workers whose .pub line is in\n"
      "its authorized-keys file (one key per line, a name after it, # comments), and all traffic is encrypted.\n"
      "Examples:\n"
      "  redflow keygen --out driver                      # driver.key, driver.pub\n"
      "  redflow keygen --out node17 && echo \"$(cat node17.pub) node17\" >> workers.keys\n"
      "  redflow run g.dot --listen tcp://0.0.0.0:7000 --key driver.key --authorized-keys workers.keys ...\n"
      "  redflow worker --connect tcp://head:7000 --key node17.key --server-key driver.pub\n"
      "See docs/security.md.");
  sub->add_option("--out", a->out, "Path prefix of the two files written")->capture_default_str();
  sub->add_flag("--force", a->force, "Replace an existing key pair (its workers or driver must then get the new .pub)");
  return {sub, [a] { return keygen_main(*a); }};
}

}  // namespace redflow::cli
