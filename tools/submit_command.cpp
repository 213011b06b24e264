// `redflow submit run|spits ...`: queue a job on the server and print its id.
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
  bool wait = false;
};

}  // namespace

Command add_submit_command(CLI::App& app) {
  auto a = std::make_shared<SubmitArgs>();
  auto* cmd = app.add_subcommand("submit", "Queue a job on `redflow server`: the words of `redflow run ...` or `redflow spits ...`; prints its id.");
  cmd->footer("The job runs as that command would, in this directory, on the server's workers (its --listen and the other\n"
              "worker flags are the server's). Its outputs are written where it says.\n"
              "Examples:\n"
              "  redflow submit run g.dot --input X=x.bin --output Y=y.bin --repeat 10 --redundancy 2x-same\n"
              "  redflow submit spits build/examples/spits/libspits_pi.so tasks=1000 out=pi.txt\n"
              "  redflow submit --wait run g.dot -i X=x.bin -o Y=y.bin   (then waits, and exits as the job did)\n"
              "Exit status: 0 queued (or, with --wait, the job's own); 2 the job's words are wrong; 1 no server.");
  add_server_flags(cmd, a->client);
  cmd->add_flag("--wait", a->wait, "Wait for the job and exit with its exit status");
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
            auto id = client->submit(words, std::filesystem::current_path().string());
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
