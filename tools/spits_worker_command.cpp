// `redflow spits-worker JOB.so --announce-dir DIR`: a SPITS Task Manager
// process, W Workers behind a listening socket, found by the Job Manager
// through the announce list (docs/spits.md). The loop is
// src/spits/task_manager_process.cpp. With --address-file it dials in to the
// Job Manager instead, as `redflow worker --address-file` does.
#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "cli_common.hpp"
#include "net/address_file.hpp"
#include "net/security.hpp"
#include "spits/task_manager_process.hpp"
#include "spits/task_manager_role.hpp"

namespace redflow::cli {

Command add_spits_worker_command(CLI::App& app) {
  auto o = std::make_shared<spits::TaskManagerProcessOptions>();
  auto address_file = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("spits-worker", "Run a SPITS Task Manager: Workers that execute a job's tasks for a Job Manager (`redflow spits --announce-dir`).");
  sub->footer("It listens, adds itself to the announce list, and serves the first Job Manager that connects; the Job Manager\n"
              "sends the job's args, and the Task Manager calls the job's setup with them before executing tasks.\n"
              "Results are kept until the Job Manager acknowledges them, so a Task Manager cut off and reconnected\n"
              "delivers what it computed meanwhile. Start and stop Task Managers at any time: the job goes on.\n"
              "Exit status: 0 after the Job Manager's BYE (the job is over); 1 when no Job Manager came within --wait,\n"
              "or the one it served stayed silent for --linger.\n"
              "Examples:\n"
              "  redflow spits build/examples/spits/libspits_pi.so tasks=1000 out=pi.txt --announce-dir /shared/tms &\n"
              "  redflow spits-worker build/examples/spits/libspits_pi.so --announce-dir /shared/tms -w 8\n"
              "  redflow spits-worker job.so --announce-dir /shared/tms --listen tcp://10.0.0.7:* --key node7.key --authorized-keys jm.pub\n"
              "  redflow spits-worker job.so --address-file /shared/job.addr   (dials in: the same as redflow worker --address-file)");
  sub->add_option("job", o->plugin, "The job plugin (.so), the same as the Job Manager's")->required()->check(readable_file());
  auto* announce = sub->add_option("--announce-dir", o->announce_dir, "The announce list: a directory (shared with the Job Manager) where this Task Manager adds itself")
                       ->type_name("DIR");
  auto* old_announce = sub->add_option("--announce", o->announce_dir, "Old name of --announce-dir")->type_name("DIR")->group("");
  auto* address = sub->add_option("--address-file", *address_file,
                                  "Instead of the announce list: dial in to the Job Manager that published its address in FILE "
                                  "(`redflow spits --address-file FILE`), as `redflow worker --address-file FILE` does")
                      ->type_name("FILE");
  announce->excludes(address);
  old_announce->excludes(address);
  sub->add_option("--local-workers,-w", o->workers, "Worker threads (default: one per hardware thread)")->check(CLI::Range(1u, 4096u));
  sub->add_option("--prefetch", o->prefetch, "Extra tasks queued beyond the Workers (default 0: adaptive)");
  sub->add_option("--listen", o->listen, "Where to listen; an address other than loopback needs --key and --authorized-keys")
      ->type_name("ADDR")
      ->capture_default_str();
  sub->add_option("--name", o->name, "Its name in the announce list and the Job Manager's report (default: HOST-PID)");
  sub->add_option(net::kKeyFlag, o->security.key_file, "This Task Manager's secret key (redflow keygen); published with its address")->type_name("FILE.key");
  sub->add_option(net::kAuthorizedKeysFlag, o->security.authorized_keys_file, "Public keys of the Job Managers it serves, one per line")->type_name("FILE");
  sub->add_option("--wait", o->wait_s, "Seconds to wait for a Job Manager")->check(CLI::Range(0.01, 1e7))->capture_default_str();
  sub->add_option("--linger", o->linger_s, "Seconds it keeps results for a Job Manager gone silent, waiting for it to come back")
      ->check(CLI::Range(0.01, 1e7))
      ->capture_default_str();
  return {sub, [o, address_file] {
            if (o->announce_dir.empty() == address_file->empty())
              return usage_error(Status::InvalidArgument("give the announce list or the Job Manager: --announce-dir DIR or --address-file FILE"));
            if (Status s = net::check_server_keys(o->security); !s.ok()) return usage_error(s);
            if (Status s = net::check_listen_address(o->listen, o->security); !s.ok()) return usage_error(s);
            if (o->workers == 0) o->workers = std::max(1u, std::thread::hardware_concurrency());
            if (!address_file->empty()) {
              fmt::print(stderr, "redflow: `redflow spits-worker --address-file` dials in as `redflow worker --address-file` does; use that (--local-workers is --cores)\n");
              auto record = net::wait_for_address(*address_file, std::chrono::milliseconds(static_cast<long>(o->wait_s * 1000)));
              if (!record.ok()) return fail(record.status());
              spits::DialInTaskManagerOptions tm;
              tm.driver = {record->endpoint, record->server_public_key};
              tm.security.key_file = o->security.key_file;
              tm.name = o->name;
              tm.workers = o->workers;
              tm.connect_timeout_s = o->wait_s;
              if (Status s = spits::serve_job_manager(tm); !s.ok()) return fail(s);
              return 0;
            }
            if (Status s = spits::run_task_manager(*o); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
