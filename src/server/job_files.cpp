// A finished job's files (job_files.hpp).
#include "server/job_files.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace redflow::server {

std::vector<std::string> job_output_paths(const JobInfo& job) {
  std::vector<std::string> out;
  if (job.args.empty()) return out;
  const bool spits = job.args[0] == "spits";
  // NAME=FILE: the file.
  auto file_of = [](const std::string& binding) { return binding.substr(binding.find('=') + 1); };
  for (std::size_t i = 1; i < job.args.size(); ++i) {
    const std::string& w = job.args[i];
    const bool next = i + 1 < job.args.size();
    if (spits) {
      if (w == "--") continue;
      if (w.starts_with("out=") && w.size() > 4) out.push_back(w.substr(4));
      continue;
    }
    if ((w == "--output" || w == "-o") && next && job.args[i + 1].find('=') != std::string::npos) out.push_back(file_of(job.args[++i]));
    else if (w.starts_with("--output=") && w.find('=', 9) != std::string::npos) out.push_back(file_of(w.substr(9)));
    else if (w == "--stats" && next) out.push_back(job.args[++i]);
    else if (w.starts_with("--stats=")) out.push_back(w.substr(8));
  }
  return out;
}

namespace {

Result<std::vector<std::byte>> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read '" + path.string() + "'");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

}  // namespace

Result<std::vector<JobFile>> read_job_files(const JobInfo& job, const std::string& report_path, std::size_t limit) {
  if (!finished(job.state))
    return Status::InvalidArgument("job " + std::to_string(job.id) + " is " + to_string(job.state) +
                                   ": its files are fetched once it has ended (`redflow wait " + std::to_string(job.id) + "`)");
  std::vector<std::pair<std::string, std::filesystem::path>> wanted;
  for (const std::string& p : job_output_paths(job)) wanted.emplace_back(p, std::filesystem::path(job.cwd) / p);
  wanted.emplace_back("report.json", report_path);
  std::uintmax_t total = 0;
  std::vector<std::pair<std::string, std::filesystem::path>> present;
  for (const auto& [name, path] : wanted) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) {
      if (job.state == JobState::kSucceeded && name != "report.json")
        return Status::NotFound("job " + std::to_string(job.id) + "'s output '" + name + "' is gone from " + path.string() + ": " + ec.message());
      continue;
    }
    total += size;
    present.emplace_back(name, path);
  }
  if (total > limit)
    return Status::ResourceExhausted("job " + std::to_string(job.id) + "'s files are " + std::to_string(total) + " bytes, more than a fetch sends (" +
                                     std::to_string(limit) + "): read them where the job wrote them, under " + job.cwd);
  std::vector<JobFile> files;
  for (const auto& [name, path] : present) {
    auto bytes = read_all(path);
    if (!bytes.ok()) return bytes.status();
    files.push_back({name, std::move(*bytes)});
  }
  return files;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace redflow::server
