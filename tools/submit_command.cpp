// `redflow submit run|spits|stream|rem ...`: queue a job on the server and print its id.
// The words after `submit` are the one-shot command's, checked by that
// command's own parser before anything is sent.
#include <fmt/format.h>

#include <filesystem>

#include "cli_common.hpp"
#include "server/job_driver.hpp"
#include "server_client.hpp"

namespace redflow::cli {

namespace {

// The one-shot command's parser over `words`: its usage errors, with nothing run.
Status check_with_command_parser(const std::vector<std::string>& words) {
  CLI::App scratch{"redflow"};
  // The command holds what its options write into: it must outlive the parse.
  Command command;
  if (words[0] == "run") command = add_run_command(scratch);
  if (words[0] == "spits") command = add_spits_command(scratch);
  if (words[0] == "stream") command = add_stream_command(scratch);
  if (words[0] == "rem") command = add_rem_command(scratch);
  for (CLI::App* sub : scratch.get_subcommands({}))
    for (CLI::Option* opt : sub->get_options())
      if (!opt->get_positional()) opt->allow_extra_args(false);  // as redflow.cpp parses them
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  try {
    scratch.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument("submit " + words[0] + ": " + e.what());
  }
  return Status::Ok();
}

struct SubmitArgs {
  ClientOptions client;
  SubmitOptions job;
  bool wait = false;
};

}  // namespace

Command add_submit_command(CLI::App& app) {
  auto a = std::make_shared<SubmitArgs>();
  auto* cmd = app.add_subcommand("submit", "Queue a job on `redflow server`: the words of `redflow run|spits|stream|rem ...`; prints its id.");
  cmd->footer("The job runs as that command would, in this directory, on the server's workers (its --listen and the other\n"
              "worker flags are the server's; a rem job runs its own --procs over its --store). Its outputs are written where it says.\n"
              "Examples:\n"
              "  redflow submit run g.dot --input X=x.bin --output Y=y.bin --repeat 10 --redundancy 2x-same\n"
              "  redflow submit spits build/examples/spits/libspits_pi.so tasks=1000 out=pi.txt\n"
              "  redflow submit stream examples/streams/sum.dot --place smart --output total=total.bin\n"
              "  redflow submit rem g.dot --store memcached://127.0.0.1:11211 --procs 3 -i X=x.bin -o Y=y.bin\n"
              "  redflow submit --wait run g.dot -i X=x.bin -o Y=y.bin   (then waits, and exits as the job did)\n"
              "  redflow submit --workers 1 --time-limit 600 spits job.so tasks=100   (one worker; stopped after 10 minutes)\n"
              "Exit status: 0 queued (or, with --wait, the job's own); 2 the job's words are wrong; 1 no server.");
  add_server_flags(cmd, a->client);
  cmd->add_flag("--wait", a->wait, "Wait for the job and exit with its exit status");
  cmd->add_option("--workers", a->job.workers, "Run on this many of the server's workers (default: its --min-workers; a rem job takes none)")
      ->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--time-limit", a->job.time_limit_s,
                  "Stop the job this many seconds after it starts: it fails with exit status 124 and a message naming its limit")
      ->type_name("S")
      ->check(CLI::PositiveNumber & CLI::Range(0.0, 1e8));
  cmd->prefix_command();
  cmd->fallthrough(false);  // "run" is the job's word, not `redflow run`
  return {cmd, [a, cmd] {
            const std::vector<std::string> words = cmd->remaining();
            // Flags of submit's own come before the job's words; anything else that looks like one is a mistake.
            if (!words.empty() && words[0].size() > 1 && words[0][0] == '-') {
              fail(Status::InvalidArgument("unknown option '" + words[0] + "'; 'redflow submit --help' lists every option"));
              return kUsageError;
            }
            if (Status s = server::check_job_words(words); !s.ok()) {
              fail(s);
              return kUsageError;
            }
            if (Status s = check_with_command_parser(words); !s.ok()) {
              fail(s);
              return kUsageError;
            }
            if (Status s = check_server_flags(a->client); !s.ok()) return usage_error(s);
            auto client = Client::connect(a->client);
            if (!client.ok()) return fail(client.status());
            auto id = client->submit(words, std::filesystem::current_path().string(), a->job);
            if (!id.ok()) return fail(id.status());
            fmt::print("{}\n", *id);
            std::fflush(stdout);
            if (!a->wait) return 0;
            auto job = client->wait(*id, 1e7);
            if (!job.ok()) return fail(job.status());
            if (job->state == JobState::kCancelled) return fail(Status::Internal(fmt::format("job {} was cancelled", *id)));
            return job->exit_status;
          }};
}

}  // namespace redflow::cli
