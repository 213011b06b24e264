// Launcher detection from the environment (launcher.hpp).
#include "net/launcher.hpp"

#include <cerrno>
#include <cctype>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace redflow::net {

namespace {

// The names of one launcher's variables.
struct Names {
  Launcher launcher;
  const char* rank;
  const char* size;
  std::vector<const char*> job_ids;
};

Result<int> read_int(const char* name, const char* text) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 1'000'000)
    return Status::InvalidArgument(fmt::format("environment: {}='{}' is not a rank or size", name, text));
  return static_cast<int>(v);
}

}  // namespace

const char* launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::kOpenMpi: return "mpirun";
    case Launcher::kSlurm: return "srun";
    case Launcher::kPmi: return "pmi";
  }
  return "?";
}

Result<std::optional<LaunchRole>> detect_launch(const EnvLookup& env) {
  const Names all[] = {
      {Launcher::kOpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", {"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE"}},
      {Launcher::kSlurm, "SLURM_PROCID", "SLURM_NTASKS", {"SLURM_JOB_ID", "SLURM_JOBID"}},
      {Launcher::kPmi, "PMI_RANK", "PMI_SIZE", {"PMI_JOBID"}},
  };
  for (const auto& n : all) {
    const char* rank_text = env(n.rank);
    const char* size_text = env(n.size);
    if (rank_text == nullptr && size_text == nullptr) continue;
    if (rank_text == nullptr || size_text == nullptr)
      return Status::InvalidArgument(fmt::format("environment: {} is set but {} is not ({} launch?)",
                                                 rank_text ? n.rank : n.size, rank_text ? n.size : n.rank, launcher_name(n.launcher)));
    auto rank = read_int(n.rank, rank_text);
    if (!rank.ok()) return rank.status();
    auto size = read_int(n.size, size_text);
    if (!size.ok()) return size.status();
    if (*size < 1 || *rank >= *size)
      return Status::InvalidArgument(fmt::format("environment: {}={} is not below {}={}", n.rank, *rank, n.size, *size));
    LaunchRole role{n.launcher, *rank, *size, {}};
    for (const char* id : n.job_ids)
      if (const char* v = env(id); v != nullptr && *v != '\0') {
        role.job_id = v;
        break;
      }
    // Two job steps of one Slurm allocation share SLURM_JOB_ID; each step gets its own file.
    if (n.launcher == Launcher::kSlurm && !role.job_id.empty())
      if (const char* step = env("SLURM_STEP_ID"); step != nullptr && *step != '\0') role.job_id += fmt::format(".{}", step);
    return std::optional<LaunchRole>(role);
  }
  return std::optional<LaunchRole>();
}

Result<std::string> launch_address_file(const LaunchRole& role, const std::string& shared_dir) {
  if (role.job_id.empty())
    return Status::InvalidArgument(fmt::format("{} gave no job id to name the rendezvous file after: give --address-file PATH on a shared directory",
                                               launcher_name(role.launcher)));
  std::string id;
  for (char c : role.job_id) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  const std::string dir = shared_dir.empty() ? "." : shared_dir;
  return fmt::format("{}/redflow-{}-{}.address", dir, launcher_name(role.launcher), id);
}

}  // namespace redflow::net
