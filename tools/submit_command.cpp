// `redflow submit run|spits|stream|rem ...`: queue a job on the server and print its id.
// The words after `submit` are the one-shot command's, checked by that
// command's own parser before anything is sent.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// The files a run or rem job's --input/-i NAME=FILE names must be readable
// here (the job runs in this directory): the one-shot command would refuse
// them at its start, so the submit refuses them now, naming the file.
Status check_input_files(const std::vector<std::string>& words) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::string binding;
    if ((words[i] == "--input" || words[i] == "-i") && i + 1 < words.size()) binding = words[i + 1];
    else if (words[i].starts_with("--input=")) binding = words[i].substr(8);
    const std::size_t eq = binding.find('=');
    if (eq == std::string::npos) continue;
    const std::string file = binding.substr(eq + 1);
    if (::access(file.c_str(), R_OK) != 0)
      return Status::InvalidArgument("--input " + binding + ": cannot read '" + file + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

struct SubmitArgs {
  ClientOptions client;
  SubmitOptions job;
  bool wait = false;
  std::string array;
};

// The most jobs one --array may make.
constexpr std::uint64_t kMaxArray = 100000;

// `--array` indices: "1..10", "1-10", "3", and lists of them ("1..4,10,20-22"), in the order given.
Result<std::vector<std::uint64_t>> parse_array(const std::string& spec) {
  std::vector<std::uint64_t> out;
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("--array '" + spec + "': " + why + " (expected indices such as 1..10, 1-10 or 1,4,7)");
  };
  std::size_t at = 0;
  while (at <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string part = spec.substr(at, comma - at);
    std::size_t sep = part.find("..");
    std::size_t sep_len = 2;
    if (sep == std::string::npos) {
      sep = part.find('-');
      sep_len = 1;
    }
    auto number = [&](const std::string& text, std::uint64_t& v) {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12) return false;
      v = std::stoull(text);
      return true;
    };
    std::uint64_t first = 0, last = 0;
    if (sep == std::string::npos) {
      if (!number(part, first)) return bad("'" + part + "' is not an index");
      last = first;
    } else if (!number(part.substr(0, sep), first) || !number(part.substr(sep + sep_len), last)) {
      return bad("'" + part + "' is not a range");
    }
    if (last < first) return bad("'" + part + "' ends before it starts");
    if (last - first + out.size() >= kMaxArray) return bad("more than " + std::to_string(kMaxArray) + " jobs");
    for (std::uint64_t i = first; i <= last; ++i) out.push_back(i);
    at = comma + 1;
  }
  return out;
}

// `words` with every "{}" replaced by `index`.
std::vector<std::string> array_words(const std::vector<std::string>& words, std::uint64_t index) {
  std::vector<std::string> out = words;
  const std::string value = std::to_string(index);
  for (std::string& w : out)
    for (std::size_t at = w.find("{}"); at != std::string::npos; at = w.find("{}", at + value.size())) w.replace(at, 2, value);
  return out;
}

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
              "  redflow submit --array 1..8 run g.dot -i X=in/x{}.bin -o Y=out/y{}.bin   (8 jobs: {} is each index; prints 8 ids)\n"
              "Exit status: 0 queued (or, with --wait, the job's own: the first that did not succeed, for an array); 2 the job's words\n"
              "are wrong (for any index of an array: then none is queued); 1 no server.");
  add_server_flags(cmd, a->client);
  cmd->add_flag("--wait", a->wait, "Wait for the job and exit with its exit status");
  cmd->add_option("--workers", a->job.workers, "Run on this many of the server's workers (default: its --min-workers; a rem job takes none)")
      ->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--time-limit", a->job.time_limit_s,
                  "Stop the job this many seconds after it starts: it fails with exit status 124 and a message naming its limit")
      ->type_name("S")
      ->check(CLI::PositiveNumber & CLI::Range(0.0, 1e8));
  cmd->add_option("--array", a->array,
                  "Submit one job per index (1..10, 1-10, 1,4,7 or a mix), each with {} in its words replaced by the index; "
                  "prints the ids in order")
      ->type_name("INDICES");
  cmd->prefix_command();
  cmd->fallthrough(false);  // "run" is the job's word, not `redflow run`
  return {cmd, [a, cmd] {
            const std::vector<std::string> words = cmd->remaining();
            // Flags of submit's own come before the job's words; anything else that looks like one is a mistake.
            if (!words.empty() && words[0].size() > 1 && words[0][0] == '-') {
              fail(Status::InvalidArgument("unknown option '" + words[0] + "'; 'redflow submit --help' lists every option"));
              return kUsageError;
            }
            std::vector<std::uint64_t> indices;
            if (!a->array.empty()) {
              auto parsed = parse_array(a->array);
              if (!parsed.ok()) return usage_error(parsed.status());
              indices = std::move(*parsed);
              const bool placeholder = std::any_of(words.begin(), words.end(), [](const std::string& w) { return w.find("{}") != std::string::npos; });
              if (!placeholder)
                return usage_error(Status::InvalidArgument("--array " + a->array + ": no word has {} to replace with the index, so every job would be the same"));
            }
            // Every job's words are checked before any is sent: an array is queued whole or not at all.
            std::vector<std::vector<std::string>> jobs;
            if (indices.empty()) jobs.push_back(words);
            for (std::uint64_t i : indices) jobs.push_back(array_words(words, i));
            for (std::size_t k = 0; k < jobs.size(); ++k) {
              Status s = server::check_job_words(jobs[k]);
              if (s.ok()) s = check_with_command_parser(jobs[k]);
              if (s.ok()) s = check_input_files(jobs[k]);
              if (!s.ok()) {
                fail(indices.empty() ? s : Status::InvalidArgument("--array index " + std::to_string(indices[k]) + ": " + s.message()));
                return kUsageError;
              }
            }
            if (Status s = check_server_flags(a->client); !s.ok()) return usage_error(s);
            auto client = Client::connect(a->client);
            if (!client.ok()) return fail(client.status());
            std::vector<std::uint64_t> ids;
            for (const auto& job_words : jobs) {
              auto id = client->submit(job_words, std::filesystem::current_path().string(), a->job);
              if (!id.ok()) {
                if (!ids.empty()) fmt::print(stderr, "redflow: submitted {} of the array's {} jobs before this error\n", ids.size(), jobs.size());
                return fail(id.status());
              }
              ids.push_back(*id);
              fmt::print("{}\n", *id);
            }
            std::fflush(stdout);
            if (!a->wait) return 0;
            int status = 0;
            for (std::uint64_t id : ids) {
              auto job = client->wait(id, 1e7);
              if (!job.ok()) return fail(job.status());
              const int code = job->state == JobState::kCancelled ? fail(Status::Internal(fmt::format("job {} was cancelled", id))) : job->exit_status;
              if (status == 0) status = code;
            }
            return status;
          }};
}

}  // namespace redflow::cli
