// `redflow import wfformat FILE.json --out DIR`: a scientific workflow's
// execution trace (WfCommons' WfFormat) as a graph redflow runs, with its
// input files and the reference its output must equal (docs/workflows.md;
// apps/workflow.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "apps/workflow.hpp"
#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct ImportArgs {
  std::string format, file, out;
  apps::WorkflowImportOptions options;
  unsigned tiles = std::max(1u, std::thread::hardware_concurrency());
};

int import_main(const ImportArgs& a) {
  if (a.format != "wfformat") return usage_error(Status::InvalidArgument("import: format '" + a.format + "' is not one redflow reads (wfformat)"));
  auto text = read_file(a.file);
  if (!text.ok()) return fail(text.status());
  auto workflow = apps::parse_wfformat(std::string_view(reinterpret_cast<const char*>(text->data()), text->size()));
  if (!workflow.ok()) return fail(Status::InvalidArgument(a.file + ": " + workflow.status().message()));
  auto problem = apps::make_workflow_problem(*workflow, a.options);
  if (!problem.ok()) return usage_error(problem.status());
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) return fail(Status::IOError("--out " + a.out + ": cannot create the directory: " + ec.message()));
  const std::string dot = (fs::path(a.out) / "workflow.dot").string();
  const std::string reference = (fs::path(a.out) / "reference.bin").string();
  if (Status s = problem->graph.write_dot_file(dot); !s.ok()) return fail(s);
  if (Status s = write_file(reference, problem->reference.data(), problem->reference.size()); !s.ok()) return fail(s);
  const double bound = std::max(problem->critical_path_s, problem->total_work_s / a.tiles);
  fmt::print("wrote {}: workflow '{}' (WfFormat {}), {} tasks as {} actors and {} data nodes, and {}\n", dot, workflow->name,
             workflow->schema_version.empty() ? "?" : workflow->schema_version, workflow->tasks.size(), problem->graph.actors().size(),
             problem->graph.data().size(), reference);
  fmt::print("tasks' time: {:.3f} s in all (x{:g} of the trace's), critical path {:.3f} s: at best {:.3f} s on {} tile{}\n",
             problem->total_work_s, problem->time_scale, problem->critical_path_s, bound, a.tiles, a.tiles == 1 ? "" : "s");
  // Every actor's inputs and output in slots at once; the largest node in one slot.
  std::size_t slot_bytes = 16;
  while (slot_bytes < problem->largest_bytes) slot_bytes *= 2;
  fmt::print("run it and check it with:\n  {} run {} --tiles {} --slots {} --slot-bytes {} --output {}={}/digest.bin && cmp {}/digest.bin {}\n",
             command_name(), dot, a.tiles, std::max<std::size_t>(16, problem->most_inputs + 2), slot_bytes, apps::kWorkflowDigest, a.out,
             a.out, reference);
  return 0;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  auto* sub = app.add_subcommand("import", "Write a scientific workflow's trace (WfCommons' WfFormat JSON) as a graph to run, with its reference output.\n"
                                           "Examples:\n"
                                           "  redflow import wfformat montage.json --out mt --total-seconds 4 --tiles 2   (prints the line that runs and checks it:)\n"
                                           "  redflow run mt/workflow.dot --tiles 2 --slots 16 --slot-bytes 16384 --output digest=mt/digest.bin && cmp mt/digest.bin mt/reference.bin");
  sub->footer("Each task is a wf.task actor that takes its measured runtime (x --time-scale, or scaled so all add up to\n"
              "--total-seconds), sleeping or with --spin spinning, and writes a digest of its inputs; each file a data node of\n"
              "its size x --bytes-scale (at least 8 bytes); a task's several files are one output cut by rf.split. Files no task\n"
              "writes are constants of seeded random bytes; files no task reads go into one wf.digest actor, whose output\n"
              "`digest` must equal DIR/reference.bin, computed from the workflow without the runtime. HEFT gets each task's\n"
              "time as its work= hint (docs/workflows.md).");
  sub->add_option("format", a->format, "The trace's format: wfformat (WfCommons' WfFormat 1.0-1.6)")->required();
  sub->add_option("file", a->file, "The trace")->type_name("FILE.json")->required()->check(readable_file());
  sub->add_option("--out", a->out, "Directory for workflow.dot, its constants and reference.bin (created if missing)")->type_name("DIR")->required();
  sub->add_option("--time-scale", a->options.time_scale, "A task's seconds: its measured runtime times this")->capture_default_str();
  sub->add_option("--total-seconds", a->options.total_seconds, "Or: scale the runtimes so that all tasks' seconds add up to this")->type_name("S");
  sub->add_option("--bytes-scale", a->options.bytes_scale, "A file's bytes: its size times this (at least 8)")->capture_default_str();
  sub->add_flag("--spin", a->options.spin, "Tasks spin (keep a core busy) for their time instead of sleeping");
  sub->add_option("--seed", a->options.seed, "Seed of the workflow input files' bytes")->capture_default_str();
  sub->add_option("--tiles", a->tiles, "Tiles the printed bound and run line are for (default: one per hardware thread)")
      ->check(CLI::Range(1u, 1024u));
  return {sub, [a] { return import_main(*a); }};
}

}  // namespace redflow::cli
