// Measured actor costs on the command line (cli_common.hpp: CostArgs,
// LearnedCosts): where the model lives, reading it before HEFT plans,
// learning from execution traces, writing it back.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli_common.hpp"

namespace redflow::cli {

std::string host_cache_file(const std::string& stem) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg != nullptr && xdg[0] != '\0' ? std::filesystem::path(xdg)
                              : home != nullptr                ? std::filesystem::path(home) / ".cache"
                                                               : std::filesystem::temp_directory_path();
  char host[256] = "machine";
  gethostname(host, sizeof host - 1);
  return (dir / "redflow" / (stem + "-" + host)).string();
}

void add_cost_options(CLI::App* cmd, CostArgs& a, bool can_learn) {
  cmd->add_option("--costs", a.file,
                  "Measured actor costs HEFT plans with, for actors without a work= hint (default: ~/.cache/redflow/actor-costs-HOST; "
                  "docs/scheduling.md, \"Measured costs\")")
      ->type_name("FILE.json");
  if (can_learn)
    cmd->add_flag("--learn-costs", a.learn,
                  "Measure every actor's run time in this run and add it to the --costs model, so later runs plan with it (traces "
                  "every execution; default: off)");
  cmd->add_flag("--no-learned-costs", a.ignore, "Plan with work= hints and bytes touched only, not with measured costs (default: off)");
}

Result<LearnedCosts> LearnedCosts::open(const CostArgs& a, Graph& g, const Registry& reg, unsigned cores_per_tile) {
  if (a.learn && a.ignore)
    return Status::InvalidArgument("--learn-costs and --no-learned-costs contradict each other: pick one");
  LearnedCosts c;
  c.file_ = a.file.empty() ? host_cache_file("actor-costs") : a.file;
  c.learn_ = a.learn;
  for (const ActorNode& n : g.actors()) c.unhinted_ += n.work <= 0;
  if (a.ignore) return c;
  auto model = CostModel::load(c.file_);
  if (!model.ok()) {
    if (c.learn_) return Status::InvalidArgument(model.status().message() + "; --learn-costs would replace it");
    spdlog::warn("redflow: {}; planning with work= hints and bytes touched", model.status().message());
    return c;
  }
  c.model_ = std::move(*model);
  c.applied_ = c.model_.apply(g, reg, cores_per_tile);
  return c;
}

std::string LearnedCosts::describe() const {
  if (applied_ == 0) return "";
  return fmt::format("{} of {} actor(s) without a work= hint are planned with measured costs ({})", applied_, unhinted_, file_);
}

void LearnedCosts::learn(const Graph& g, const ExecutionTrace& trace, const Registry& reg) {
  const CostLearning l = model_.learn(g, trace, reg);
  learned_.samples += l.samples;
  learned_.added += l.added;
  learned_.restarted += l.restarted;
  learned_.kinds = std::max(learned_.kinds, l.kinds);
  ++executions_;
}

Result<std::string> LearnedCosts::save() {
  auto on_disk = CostModel::load(file_);
  if (!on_disk.ok()) return on_disk.status();
  model_.merge_missing(*on_disk);
  if (Status s = model_.save(file_); !s.ok()) return s;
  return fmt::format("learned costs: {} actor run(s) of {} kind(s) from {} execution(s), {} kind(s) new, {} found stale and measured "
                     "afresh; {} kind(s) in {}",
                     learned_.samples, learned_.kinds, executions_, learned_.added, learned_.restarted, model_.size(), file_);
}

}  // namespace redflow::cli
