// WfCommons workflows as graphs (apps/workflow.hpp, `redflow import`):
// both schema shapes read to the same workflow, the errors that name what
// is wrong, and the imported graph's output equal to the reference computed
// from the workflow alone, under both schedulers and with redundancy.
#include <gtest/gtest.h>

#include <fstream>

#include "apps/apps.hpp"
#include "cli_helpers.hpp"
#include "redflow/runtime.hpp"

namespace redflow::apps {
namespace {

// A workflow of 6 tasks in WfFormat 1.5: `split` writes two files (one read
// by `left`, one by `right`), `gen` reads nothing, `join` reads both halves
// and gen's file, `audit` depends on `left` by control only (no file), and
// `report` is a child declared only on its parent's side (children).
const char* kSpec15 = R"({
  "name": "tiny-1.5", "schemaVersion": "1.5",
  "workflow": {
    "specification": {
      "tasks": [
        {"name": "split", "id": "split_1", "parents": [], "children": ["left_2", "right_3"], "inputFiles": ["raw.dat"], "outputFiles": ["a.part", "b.part"]},
        {"name": "left", "id": "left_2", "parents": ["split_1"], "children": [], "inputFiles": ["a.part"], "outputFiles": ["a.out"]},
        {"name": "right", "id": "right_3", "parents": ["split_1"], "children": [], "inputFiles": ["b.part"], "outputFiles": ["b.out"]},
        {"name": "gen", "id": "gen_4", "parents": [], "children": ["report_7"], "inputFiles": [], "outputFiles": ["g.dat"]},
        {"name": "join", "id": "join_5", "parents": ["left_2", "right_3", "gen_4"], "children": [], "inputFiles": ["a.out", "b.out", "g.dat"], "outputFiles": ["final.dat", "log.txt"]},
        {"name": "audit", "id": "audit_6", "parents": ["left_2"], "children": [], "inputFiles": [], "outputFiles": []},
        {"name": "report", "id": "report_7", "parents": [], "children": [], "inputFiles": [], "outputFiles": ["report.txt"]}
      ],
      "files": [
        {"id": "raw.dat", "sizeInBytes": 64000}, {"id": "a.part", "sizeInBytes": 32000}, {"id": "b.part", "sizeInBytes": 40000},
        {"id": "a.out", "sizeInBytes": 1000}, {"id": "b.out", "sizeInBytes": 2000}, {"id": "g.dat", "sizeInBytes": 500},
        {"id": "final.dat", "sizeInBytes": 16000}, {"id": "log.txt", "sizeInBytes": 100}, {"id": "report.txt", "sizeInBytes": 0}
      ]
    },
    "execution": {
      "makespanInSeconds": 10, "executedAt": "2024-01-01T00:00:00Z",
      "tasks": [
        {"id": "split_1", "runtimeInSeconds": 2.0, "machines": ["n1"]}, {"id": "left_2", "runtimeInSeconds": 3.0},
        {"id": "right_3", "runtimeInSeconds": 1.0}, {"id": "gen_4", "runtimeInSeconds": 0.5},
        {"id": "join_5", "runtimeInSeconds": 4.0}, {"id": "audit_6", "runtimeInSeconds": 0.5}, {"id": "report_7", "runtimeInSeconds": 1.0}
      ]
    }
  }
})";

// The same workflow in the 1.4 shape: files inline, parents by name, `machine`, `runtime` and `size`.
const char* kTasks14 = R"({
  "name": "tiny-1.4", "schemaVersion": "1.4",
  "workflow": {
    "makespanInSeconds": 10, "executedAt": "2024-01-01T00:00:00Z",
    "machines": [{"nodeName": "n1"}],
    "tasks": [
      {"name": "split_1", "type": "compute", "runtimeInSeconds": 2.0, "machine": "n1", "parents": [],
       "files": [{"link": "input", "name": "raw.dat", "sizeInBytes": 64000}, {"link": "output", "name": "a.part", "sizeInBytes": 32000},
                 {"link": "output", "name": "b.part", "sizeInBytes": 40000}]},
      {"name": "left_2", "runtime": 3.0, "parents": ["split_1"], "files": [{"link": "input", "name": "a.part", "size": 32000}, {"link": "output", "name": "a.out", "size": 1000}]},
      {"name": "right_3", "runtime": 1.0, "parents": ["split_1"], "files": [{"link": "input", "name": "b.part", "size": 40000}, {"link": "output", "name": "b.out", "size": 2000}]},
      {"name": "gen_4", "runtime": 0.5, "parents": [], "children": ["report_7"], "files": [{"link": "output", "name": "g.dat", "size": 500}]},
      {"name": "join_5", "runtime": 4.0, "parents": ["left_2", "right_3", "gen_4"],
       "files": [{"link": "input", "name": "a.out", "size": 1000}, {"link": "input", "name": "b.out", "size": 2000}, {"link": "input", "name": "g.dat", "size": 500},
                 {"link": "output", "name": "final.dat", "size": 16000}, {"link": "output", "name": "log.txt", "size": 100}]},
      {"name": "audit_6", "runtime": 0.5, "parents": ["left_2"]},
      {"name": "report_7", "runtime": 1.0, "parents": [], "files": [{"link": "output", "name": "report.txt", "size": 0}]}
    ]
  }
})";

Workflow parsed(const char* text) {
  auto w = parse_wfformat(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : Workflow{};
}

TEST(WorkflowImport, BothSchemaShapesReadToTheSameWorkflow) {
  for (const char* text : {kSpec15, kTasks14}) {
    const Workflow w = parsed(text);
    ASSERT_EQ(w.tasks.size(), 7u);
    EXPECT_EQ(w.tasks[0].outputs, (std::vector<std::string>{"a.part", "b.part"}));
    EXPECT_EQ(w.tasks[1].parents, std::vector<std::string>{"split_1"});
    EXPECT_EQ(w.tasks[4].runtime_s, 4.0);
    EXPECT_EQ(w.tasks[4].inputs, (std::vector<std::string>{"a.out", "b.out", "g.dat"}));
    EXPECT_EQ(w.tasks[5].parents, std::vector<std::string>{"left_2"}) << "a control dependency without a file";
    EXPECT_EQ(w.tasks[6].parents, std::vector<std::string>{"gen_4"}) << "a child declared only on its parent's side";
    EXPECT_EQ(w.file_bytes.at("b.part"), 40000u);
    EXPECT_EQ(w.file_bytes.at("raw.dat"), 64000u);
  }
  EXPECT_EQ(parsed(kSpec15).schema_version, "1.5");
}

TEST(WorkflowImport, TheGraphHasATaskPerActorSplitsForSeveralFilesAndOneDigest) {
  auto p = make_workflow_problem(parsed(kSpec15), {.time_scale = 0.001});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Graph& g = p->graph;
  // 7 tasks, 2 + 2 splits (split_1 and join_5 write two files each), the digest.
  EXPECT_EQ(g.actors().size(), 7u + 4u + 1u);
  const auto raw = g.find_data("in_raw_dat");
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(g.data(*raw).kind, DataKind::kConstant) << "a file no task writes";
  EXPECT_EQ(g.data(*raw).bytes, 64u) << "64000 bytes x the default bytes scale 1e-3";
  const auto digest = g.find_actor("wf_digest");
  ASSERT_TRUE(digest.has_value());
  // What no task reads: final.dat, log.txt, b.out? no (join reads it); report.txt; audit's token.
  std::vector<std::string> last;
  for (DataId d : g.actor(*digest).inputs) last.push_back(g.data(d).name);
  EXPECT_EQ(last, (std::vector<std::string>{"f_final_dat", "f_log_txt", "t_audit_6_done", "f_report_txt"}));
  const auto audit = g.find_actor("t_audit_6");
  ASSERT_TRUE(audit.has_value());
  ASSERT_EQ(g.actor(*audit).inputs.size(), 1u);
  EXPECT_EQ(g.data(g.actor(*audit).inputs[0]).name, "f_a_out") << "a control parent gives its whole output";
  EXPECT_EQ(g.actor(*audit).work, 0.5e-3 * 1e9) << "its time as HEFT's work hint";
  EXPECT_DOUBLE_EQ(p->total_work_s, 0.012);
  EXPECT_DOUBLE_EQ(p->critical_path_s, 0.009) << "split 2 + left 3 + join 4 (ms)";
  EXPECT_EQ(g.data(*g.find_data("f_report_txt")).bytes, 8u) << "an empty file is 8 bytes";

  auto scaled = make_workflow_problem(parsed(kSpec15), {.total_seconds = 0.024});
  ASSERT_TRUE(scaled.ok());
  EXPECT_DOUBLE_EQ(scaled->time_scale, 0.002);
  EXPECT_EQ(scaled->reference, p->reference) << "the digest does not depend on the time";
}

std::vector<std::byte> run(const WorkflowProblem& p, Scheduler scheduler, Redundancy redundancy) {
  Runtime rt({.tiles = 2, .slots = 16, .slot_bytes = 1 << 16, .scheduler = scheduler, .redundancy = redundancy});
  auto loaded = rt.load(p.graph, app_registry());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return {};
  auto out = loaded->execute({});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  return out->at(kWorkflowDigest);
}

TEST(WorkflowImport, TheGraphsOutputEqualsTheReferenceUnderBothSchedulersAndWithRedundancy) {
  auto p = make_workflow_problem(parsed(kSpec15), {.time_scale = 0.001});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->reference.size(), 8u);
  for (Scheduler s : {Scheduler::kHeft, Scheduler::kSteal})
    for (Redundancy r : {Redundancy::kNone, Redundancy::kTripleSame, Redundancy::kDoubleDiff})
      EXPECT_EQ(run(*p, s, r), p->reference) << to_string(r);
  // The 1.4 shape gives the same graph and so the same reference.
  auto p14 = make_workflow_problem(parsed(kTasks14), {.time_scale = 0.001});
  ASSERT_TRUE(p14.ok());
  EXPECT_EQ(p14->reference, p->reference);
  // Another seed, other input files, another digest.
  auto other = make_workflow_problem(parsed(kSpec15), {.time_scale = 0.001, .seed = 2});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->reference, p->reference);
  EXPECT_EQ(run(*other, Scheduler::kSteal, Redundancy::kNone), other->reference);
}

TEST(WorkflowImport, MistakesAreRefusedByName) {
  auto error = [](const std::string& text) {
    auto w = parse_wfformat(text);
    return w.ok() ? std::string("(accepted)") : w.status().message();
  };
  EXPECT_EQ(error(R"({"workflow": {"tasks": [{"name": "a", "parents": ["c"]}, {"name": "b", "parents": ["a"]}, {"name": "c", "parents": ["b"]}]}})"),
            "WfFormat: the workflow has a cycle: a -> b -> c -> a");
  EXPECT_EQ(error(R"({"workflow": {"specification": {"tasks": [{"id": "t1", "inputFiles": ["nowhere.dat"]}], "files": []}}})"),
            "WfFormat: task 't1': input file 'nowhere.dat' is not in workflow.specification.files");
  EXPECT_EQ(error(R"({"workflow": {"tasks": [{"name": "a", "parents": ["ghost"]}]}})"),
            "WfFormat: task 'a': parent 'ghost' is not a task of the workflow");
  EXPECT_EQ(error(R"({"workflow": {"tasks": [{"name": "a", "files": [{"link": "output", "name": "x", "size": 1}]},
                                              {"name": "b", "files": [{"link": "output", "name": "x", "size": 1}]}]}})"),
            "WfFormat: file 'x' is written by two tasks, 'a' and 'b'");
  EXPECT_EQ(error(R"({"workflow": {"tasks": [{"name": "a", "runtime": -1}]}})"), "WfFormat: task 'a': \"runtime\" is not a number >= 0");
  EXPECT_EQ(error(R"({"workflow": {"tasks": [{"name": "a", "files": [{"link": "both", "name": "x"}]}]}})"),
            "WfFormat: task 'a': file 'x' has link \"both\", not \"input\" or \"output\"");
  EXPECT_EQ(error("[1, 2"), "WfFormat: not a JSON object");
  EXPECT_EQ(error(R"({"name": "w"})"), "WfFormat: no \"workflow\" object");
  EXPECT_EQ(make_workflow_problem(Workflow{}).status().code(), Status::Code::kInvalidArgument);
}

class WorkflowImportCli : public testing::CliTest {};

// The command as a user runs it: import, then the printed line, whose cmp must pass.
TEST_F(WorkflowImportCli, TheImportedWorkflowRunsAsPrintedAndEqualsItsReference) {
  write("tiny.json", kSpec15);
  auto r = testing::run_cli("import wfformat " + path("tiny.json") + " --out " + path("wf") + " --total-seconds 0.05 --tiles 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("7 tasks as 12 actors"), std::string::npos) << r.output;
  const std::string prompt = std::string("run it and check it with:\n  ") + REDFLOW_CLI + " ";
  const std::size_t at = r.output.find(prompt);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at + prompt.size(), r.output.find('\n', at + prompt.size()) - at - prompt.size());
  auto pasted = testing::run_cli(line);
  EXPECT_EQ(pasted.exit_code, 0) << line << "\n" << pasted.output;
  for (const char* scheduler : {"heft", "steal"}) {
    auto again = testing::run_cli("run " + path("wf/workflow.dot") + " --tiles 2 --scheduler " + scheduler + " --output digest=" + path("d.bin") +
                                  " && cmp " + path("d.bin") + " " + path("wf/reference.bin"));
    EXPECT_EQ(again.exit_code, 0) << scheduler << ": " << again.output;
  }
  auto bad = testing::run_cli("import wfformat " + path("nope.json") + " --out " + path("x"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  write("cycle.json", R"({"workflow": {"tasks": [{"name": "a", "parents": ["b"]}, {"name": "b", "parents": ["a"]}]}})");
  auto cycle = testing::run_cli("import wfformat " + path("cycle.json") + " --out " + path("x"));
  EXPECT_EQ(cycle.exit_code, 1) << cycle.output;
  EXPECT_NE(cycle.output.find("cycle.json: WfFormat: the workflow has a cycle: "), std::string::npos) << cycle.output;
  auto format = testing::run_cli("import dax " + path("tiny.json") + " --out " + path("x"));
  EXPECT_EQ(format.exit_code, 2) << format.output;
  EXPECT_NE(format.output.find("format 'dax' is not one redflow reads (wfformat)"), std::string::npos) << format.output;
}

}  // namespace
}  // namespace redflow::apps
