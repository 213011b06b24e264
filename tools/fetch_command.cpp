// `redflow fetch ID`: a finished job's outputs and report, sent by the server, written here.
#include <fmt/format.h>

#include <filesystem>

#include "cli_common.hpp"
#include "server_client.hpp"

namespace redflow::cli {

namespace {

struct FetchArgs {
  ClientOptions client;
  std::uint64_t id = 0;
  std::string to = ".";
  bool force = false;
};

}  // namespace

Command add_fetch_command(CLI::App& app) {
  auto a = std::make_shared<FetchArgs>();
  auto* cmd = app.add_subcommand("fetch", "Copy a finished job's outputs and report from the server into a directory.");
  cmd->footer("The server reads the files where the job wrote them (its --output and --stats files, a SPITS job's out= file)\n"
              "and sends them with its RunReport, written as job-ID.report.json. Each output keeps its file name.\n"
              "Examples:\n"
              "  redflow fetch 3                 (into this directory)\n"
              "  redflow fetch 3 --to results/   (created if missing; --force to overwrite files there)\n"
              "Exit status: 0 every file written; 1 the job has not ended, a file is gone, or one would be overwritten.");
  add_job_id(cmd, a->id);
  add_server_flags(cmd, a->client);
  cmd->add_option("--to", a->to, "The directory to write the files into")->capture_default_str();
  cmd->add_flag("--force", a->force, "Overwrite files of the same names there (default: refuse, naming them)");
  return {cmd, [a] {
            if (Status s = check_server_flags(a->client); !s.ok()) return usage_error(s);
            auto client = Client::connect(a->client);
            if (!client.ok()) return fail(client.status());
            auto files = client->fetch(a->id);
            if (!files.ok()) return fail(files.status());
            std::error_code ec;
            std::filesystem::create_directories(a->to, ec);
            if (ec) return fail(Status::IOError("--to " + a->to + ": cannot create the directory: " + ec.message()));
            // Where each goes, all checked before any is written: nothing half-fetched over a user's file.
            std::vector<std::filesystem::path> targets;
            for (const JobFile& f : *files) {
              const std::string name = f.name == "report.json" ? fmt::format("job-{}.report.json", a->id) : std::filesystem::path(f.name).filename().string();
              targets.push_back(std::filesystem::path(a->to) / name);
              if (!a->force && std::filesystem::exists(targets.back()))
                return fail(Status::InvalidArgument("'" + targets.back().string() + "' exists: give --force to overwrite it, or another --to"));
            }
            for (std::size_t i = 0; i < files->size(); ++i) {
              const JobFile& f = (*files)[i];
              if (Status s = write_file(targets[i].string(), f.bytes.data(), f.bytes.size()); !s.ok()) return fail(s);
              fmt::print("{} ({} bytes, from {})\n", targets[i].string(), f.bytes.size(), f.name);
            }
            return 0;
          }};
}

}  // namespace redflow::cli
