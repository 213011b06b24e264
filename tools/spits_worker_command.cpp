// `redflow spits-worker JOB.so --announce DIR`: a SPITS Task Manager process,
// W Workers behind a listening socket, found by the Job Manager through the
// announce list (docs/spits.md). The loop is src/spits/task_manager_process.cpp.
#include <fmt/format.h>

#include <thread>

#include "cli_common.hpp"
#include "net/security.hpp"
#include "spits/announce.hpp"
#include "spits/task_manager_process.hpp"

namespace redflow::cli {

Command add_spits_worker_command(CLI::App& app) {
  auto o = std::make_shared<spits::TaskManagerProcessOptions>();
  auto address_file = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("spits-worker", "Run a SPITS Task Manager: Workers that execute a job's tasks for a Job Manager (`redflow spits --announce`).");
  sub->footer("It listens, adds itself to the announce list, and serves the first Job Manager that connects; the Job Manager\n"
              "sends the job's args, and the Task Manager calls the job's setup with them before executing tasks.\n"
              "Results are kept until the Job Manager acknowledges them, so a Task Manager cut off and reconnected\n"
              "delivers what it computed meanwhile. Start and stop Task Managers at any time: the job goes on.\n"
              "Exit status: 0 after the Job Manager's BYE (the job is over); 1 when no Job Manager came within --wait,\n"
              "or the one it served stayed silent for --linger.\n"
              "Examples:\n"
              "  redflow spits build/examples/spits/libspits_pi.so tasks=1000 out=pi.txt --announce /shared/tms &\n"
              "  redflow spits-worker build/examples/spits/libspits_pi.so --announce /shared/tms -w 8\n"
              "  redflow spits-worker job.so --announce /shared/tms --listen tcp://10.0.0.7:* --key node7.key --authorized-keys jm.pub\n"
              "  redflow spits-worker job.so --address-file /shared/job.addr   (the dir the Job Manager published)");
  sub->add_option("job", o->plugin, "The job plugin (.so), the same as the Job Manager's")->required()->check(readable_file());
  auto* announce = sub->add_option("--announce", o->announce_dir, "The announce list: a directory (shared with the Job Manager) where this Task Manager adds itself")
                       ->type_name("DIR");
  auto* address = sub->add_option("--address-file", *address_file, "Read the announce list from the file a `redflow spits --address-file` Job Manager published")
                      ->type_name("FILE");
  announce->excludes(address);
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
              return usage_error(Status::InvalidArgument("give the announce list: --announce DIR or --address-file FILE"));
            if (Status s = net::check_server_keys(o->security); !s.ok()) return usage_error(s);
            if (Status s = net::check_listen_address(o->listen, o->security); !s.ok()) return usage_error(s);
            if (!address_file->empty()) {
              auto dir = spits::wait_for_announce_list(*address_file, o->wait_s);
              if (!dir.ok()) return fail(dir.status());
              o->announce_dir = *dir;
            }
            if (o->workers == 0) o->workers = std::max(1u, std::thread::hardware_concurrency());
            if (Status s = spits::run_task_manager(*o); !s.ok()) return fail(s);
            return 0;
          }};
}

}  // namespace redflow::cli
