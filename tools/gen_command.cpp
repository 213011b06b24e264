// `redflow gen`: write an application graph (matmul, fft, bitonic) as
// extended DOT, with its constant files and seeded random input files, so
// that `redflow run` executes it (docs/apps.md).
#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "apps/apps.hpp"
#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct GenArgs {
  std::string app, out;
  std::size_t n = 0, block = 0;
  std::uint64_t seed = 1;
  unsigned tiles = std::max(1u, std::thread::hardware_concurrency());
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::string profile = "fast";
};

int gen_main(const GenArgs& a) {
  const apps::Target target{.slot_bytes = a.slot_bytes, .slots = a.slots, .tiles = a.tiles};
  auto profile = apps::parse_profile(a.profile);
  if (!profile.ok()) return usage_error(profile.status());
  auto problem = apps::make_problem(a.app, a.n, a.block, target, a.seed, *profile);
  if (!problem.ok()) return usage_error(problem.status());
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) return fail(Status::IOError("--out " + a.out + ": cannot create the directory: " + ec.message()));
  const std::string dot = (std::filesystem::path(a.out) / (a.app + ".dot")).string();
  if (Status s = problem->graph.write_dot_file(dot); !s.ok()) return fail(s);
  std::string inputs_flags;
  for (const auto& [name, bytes] : problem->inputs) {
    const std::string file = (std::filesystem::path(a.out) / (name + ".bin")).string();
    if (Status s = write_file(file, bytes.data(), bytes.size()); !s.ok()) return fail(s);
    inputs_flags += fmt::format(" --input {}={}", name, file);
  }
  const std::string out_file = (std::filesystem::path(a.out) / (problem->output + ".bin")).string();
  fmt::print("wrote {} ({} actors, {} data nodes) and its input files\n", dot, problem->graph.actors().size(),
             problem->graph.data().size());
  // The paper's graphs are cut for the paper's machine; ours for the flags given.
  const std::string machine = *profile == apps::Profile::kPaper ? std::string(" --machine paper")
                                                                : fmt::format(" --slot-bytes {} --slots {}", a.slot_bytes, a.slots);
  fmt::print("run it with:\n  {} run {}{} --output {}={}{}\n", command_name(), dot, inputs_flags, problem->output, out_file, machine);
  return 0;
}

}  // namespace

Command add_gen_command(CLI::App& app) {
  auto a = std::make_shared<GenArgs>();
  auto* sub = app.add_subcommand("gen", "Write a benchmark application graph as DOT, with its constant and input files.\n"
                                        "Examples:\n"
                                        "  redflow gen matmul --n 1000 --out mm && redflow run mm/matmul.dot --input A=mm/A.bin --input B=mm/B.bin --output C=c.bin\n"
                                        "  redflow gen fft --n 1048576 --out fft\n"
                                        "  redflow gen bitonic --n 16777216 --block 1048576 --out sort\n"
                                        "  redflow gen fft --profile paper --n 1048576 --out fft-paper   # the paper's graph (Table 1: 1154 actors)");
  sub->add_option("app", a->app, "matmul, fft or bitonic (docs/apps.md)")->required();
  sub->add_option("--n", a->n, "Elements: matrix side for matmul (any n >= 1), points for fft and int32 for bitonic (powers of two)")
      ->required();
  sub->add_option("--block", a->block,
                  "Block size: rows/columns per panel (matmul), points per panel (fft), int32 per block (bitonic); "
                  "default: chosen so that data nodes fit a slot and every tile gets work");
  sub->add_option("--profile", a->profile,
                  "fast (ours: blocks cut for --tiles/--slots/--slot-bytes) or paper (the paper's shapes and blocks, for "
                  "--machine paper; matmul n a multiple of 200, fft n >= 2^13, bitonic n >= 2^15; docs/apps.md)")
      ->capture_default_str();
  sub->add_option("--out", a->out, "Directory for APP.dot, its constants and the input files (created if missing)")->required();
  sub->add_option("--seed", a->seed, "Seed of the random input data")->capture_default_str();
  sub->add_option("--tiles", a->tiles, "Compute tiles the graph is cut for (default: one per hardware thread)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--slots", a->slots, "Slots per tile the graph is cut for")->check(CLI::Range(2u, 1u << 20))->capture_default_str();
  sub->add_option("--slot-bytes", a->slot_bytes, "Slot size the graph is cut for: every data node a tile touches fits one")
      ->check(CLI::Range(std::size_t{16}, std::size_t{1} << 40))
      ->capture_default_str();
  return {sub, [a] { return gen_main(*a); }};
}

}  // namespace redflow::cli
