// Who am I in a job a cluster launcher started? Read from the environment
// alone (no MPI library is linked): under Open MPI's mpirun, Slurm's srun or
// any PMI launcher, rank 0 becomes the driver and the others workers, and
// they meet through an address file in a shared directory named after the
// job (address_file.hpp, examples/cluster/).
//
//   auto role = detect_launch(getenv_function);
//   if (role.ok() && *role) { path = launch_address_file(**role, dir); rank 0: claim + publish; others: wait }
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "redflow/status.hpp"

namespace redflow::net {

enum class Launcher { kOpenMpi, kSlurm, kPmi };

// One process's place in a launched job.
struct LaunchRole {
  Launcher launcher = Launcher::kOpenMpi;
  int rank = 0;
  int size = 1;
  std::string job_id;  // empty when the launcher does not say
  bool driver() const { return rank == 0; }
};

// Reads an environment variable; nullptr when unset (::getenv by default).
using EnvLookup = std::function<const char*(const char*)>;

// The launcher that started this process, if any: Open MPI
// (OMPI_COMM_WORLD_RANK/SIZE, job id OMPI_MCA_ess_base_jobid or
// OMPI_MCA_orte_ess_jobid or PMIX_NAMESPACE), then Slurm (SLURM_PROCID,
// SLURM_NTASKS, SLURM_JOB_ID, with SLURM_STEP_ID), then PMI (PMI_RANK,
// PMI_SIZE, PMI_JOBID). Open MPI comes first because mpirun inside a Slurm
// allocation inherits SLURM_* from the allocation. std::nullopt: none;
// a named error: a launcher's variables that do not make sense (not a
// number, rank outside 0..size-1, only one of the pair).
Result<std::optional<LaunchRole>> detect_launch(const EnvLookup& env = ::getenv);

// "mpirun", "srun", "pmi".
const char* launcher_name(Launcher launcher);

// DIR/redflow-LAUNCHER-JOBID.address: the file rank 0 writes and the other
// ranks read. Needs a job id (a named error without one: give --address-file).
Result<std::string> launch_address_file(const LaunchRole& role, const std::string& shared_dir);

}  // namespace redflow::net
