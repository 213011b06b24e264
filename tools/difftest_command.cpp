// `redflow difftest`: the differential tester (docs/testing.md). Generates
// random valid graphs and executions from seeds, runs each case in a child
// process on the real runtime, compares every execution with a sequential
// interpreter of the same graph, and writes a shrunk reproducer for every
// case that differs, hangs or crashes.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>

#include "cli_common.hpp"
#include "generator.hpp"
#include "isolate.hpp"
#include "reproducer.hpp"
#include "shrinker.hpp"

namespace redflow::cli {

namespace {

using namespace redflow::difftest;

struct DifftestArgs {
  std::string seeds = "1..100";
  double time_limit = 0;
  unsigned jobs = 1;
  double timeout = 20;
  std::string out = "difftest-findings";
  std::string exclude = "none";
  bool no_shrink = false;
  double shrink_budget = 120;
  unsigned max_motifs = 12;
  unsigned max_findings = 0;
  std::string replay;
  bool shrink = false;
  std::string expect;
  unsigned attempts = 1;
  bool verbose = false;
};

// "A..B" (inclusive), "A.." (until --time-limit) or "A".
Status parse_seeds(const std::string& text, std::uint64_t& first, std::uint64_t& last) {
  auto number = [&](const std::string& s, std::uint64_t& v) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoull(s);
    return true;
  };
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) {
    if (!number(text, first)) return Status::InvalidArgument("--seeds '" + text + "': expected A..B, A.. or A (non-negative integers)");
    last = first;
    return Status::Ok();
  }
  last = ~std::uint64_t{0};
  if (!number(text.substr(0, dots), first) || (dots + 2 < text.size() && !number(text.substr(dots + 2), last)) || last < first)
    return Status::InvalidArgument("--seeds '" + text + "': expected A..B with A <= B, A.. or A (non-negative integers)");
  return Status::Ok();
}

void report_finding(const DifftestArgs& a, const Case& c, const Verdict& v, const Registry& reg);

int replay(const DifftestArgs& a, const Registry& reg) {
  auto c = read_reproducer(a.replay);
  if (!c.ok()) return fail(c.status());
  // Defects that depend on thread timing do not show on every run: try up to --attempts times.
  Verdict v;
  for (unsigned i = 0; i < a.attempts; ++i) {
    v = run_isolated(*c, reg, a.timeout);
    if (a.expect.empty() ? is_finding(v.outcome) : a.expect == to_string(v.outcome)) break;
  }
  fmt::print("{}: {}, {} execution(s): {}\n", a.replay, graph_size(c->graph), c->steps.size(), describe(v));
  if (a.shrink && is_finding(v.outcome)) report_finding(a, *c, v, reg);
  if (!a.expect.empty()) {
    // A known defect's reproducer: it must still fail the way it is recorded to.
    if (a.expect == to_string(v.outcome)) return 0;
    fmt::print("expected {}, got {}: if the defect is fixed, move the reproducer out of known/ (docs/testing.md)\n", a.expect,
               to_string(v.outcome));
    return 1;
  }
  return is_finding(v.outcome) ? 1 : 0;
}

struct Totals {
  std::uint64_t cases = 0, steps = 0, silent_none = 0, gave_up = 0, double_faults = 0, failed_on_purpose = 0, skipped = 0, stopped = 0;
  std::map<Outcome, std::uint64_t> findings;
};

void report_finding(const DifftestArgs& a, const Case& c, const Verdict& v, const Registry& reg) {
  const std::string dir = fmt::format("{}/seed-{}", a.out, c.seed);
  fmt::print("seed {}: {}\n", c.seed, describe(v));
  std::fflush(stdout);  // findings show at once in a soak log
  if (Status s = write_reproducer(c, v, dir + "-original", "Not shrunk."); !s.ok()) fail(s);
  if (a.no_shrink || v.outcome == Outcome::kInvalidCase) {
    fmt::print("  reproducer: {}-original ({})\n", dir, graph_size(c.graph));
    return;
  }
  ShrinkOptions so;
  so.budget_s = a.shrink_budget;
  so.timeout_s = v.outcome == Outcome::kHang ? a.timeout : std::min(a.timeout, 20.0);
  if (a.verbose) so.log = [](const std::string& line) { fmt::print(stderr, "  {}\n", line); };
  const ShrinkResult r = shrink(c, v, reg, so);
  const std::string note = fmt::format("Shrunk from {} and {} execution(s) in {} candidate runs.", graph_size(c.graph), c.steps.size(), r.candidates);
  if (Status s = write_reproducer(r.smallest, r.verdict, dir, note); !s.ok()) fail(s);
  fmt::print("  reproducer: {} ({}, {} execution(s); original {}, {} execution(s), in {}-original)\n", dir, graph_size(r.smallest.graph),
             r.smallest.steps.size(), graph_size(c.graph), c.steps.size(), dir);
}

int difftest(const DifftestArgs& a) {
  Registry reg = difftest_registry();
  if (!a.replay.empty()) return replay(a, reg);
  std::uint64_t first = 0, last = 0;
  if (Status s = parse_seeds(a.seeds, first, last); !s.ok()) return usage_error(s);
  if (last == ~std::uint64_t{0} && a.time_limit <= 0) return usage_error(Status::InvalidArgument("--seeds " + a.seeds + " has no end: give --time-limit"));
  auto exclude = parse_exclusions(a.exclude);
  if (!exclude.ok()) return usage_error(exclude.status());
  GenOptions go{.exclude = *exclude, .max_motifs = a.max_motifs};

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Totals t;
  std::deque<std::pair<std::unique_ptr<Case>, std::unique_ptr<ChildRun>>> running;
  std::uint64_t next = first;
  bool more = true;
  double last_progress = 0;
  while (more || !running.empty()) {
    while (more && running.size() < a.jobs) {
      std::uint64_t found = 0;
      for (const auto& [o, k] : t.findings) found += k;
      if (next > last || (a.time_limit > 0 && elapsed() >= a.time_limit) || (a.max_findings > 0 && found >= a.max_findings)) {
        more = false;
        break;
      }
      auto c = std::make_unique<Case>(generate(next, go));
      auto run = std::make_unique<ChildRun>(*c, reg, a.timeout);
      running.emplace_back(std::move(c), std::move(run));
      if (next == last) more = false;
      ++next;
    }
    std::vector<ChildRun*> live;
    for (auto& [c, r] : running) live.push_back(r.get());
    wait_for_any(live, 100);
    for (auto it = running.begin(); it != running.end();) {
      if (!it->second->poll()) {
        ++it;
        continue;
      }
      const Verdict v = it->second->verdict();
      ++t.cases;
      t.steps += v.steps;
      t.silent_none += v.silent_none;
      t.gave_up += v.gave_up;
      t.double_faults += v.double_faults;
      t.failed_on_purpose += v.failed_on_purpose;
      t.skipped += v.skipped;
      t.stopped += v.stopped;
      if (is_finding(v.outcome)) {
        ++t.findings[v.outcome];
        report_finding(a, *it->first, v, reg);
      }
      it = running.erase(it);
    }
    if (elapsed() - last_progress >= 10) {
      last_progress = elapsed();
      std::uint64_t findings = 0;
      for (const auto& [o, k] : t.findings) findings += k;
      fmt::print(stderr, "difftest: {} cases, {} findings, {:.1f} cases/s\n", t.cases, findings, t.cases / elapsed());
    }
  }
  const double s = elapsed();
  std::uint64_t findings = 0;
  std::string by_kind;
  for (const auto& [o, k] : t.findings) {
    findings += k;
    by_kind += fmt::format(", {} {}", k, to_string(o));
  }
  fmt::print("difftest: {} cases (seeds {}..{}), {} executions in {:.1f} s, {:.1f} cases/s: {} findings{}; "
             "{} silent corruptions under none (expected), {} give-ups under faults, {} double faults, {} on-purpose failures, "
             "{} executions skipped, {} not run after a failure under steal; excluded: {}\n",
             t.cases, first, next - 1, t.steps, s, s > 0 ? t.cases / s : 0.0, findings, by_kind, t.silent_none, t.gave_up, t.double_faults,
             t.failed_on_purpose, t.skipped, t.stopped, to_string(go.exclude));
  return findings == 0 ? 0 : 1;
}

}  // namespace

Command add_difftest_command(CLI::App& app) {
  auto a = std::make_shared<DifftestArgs>();
  auto* cmd = app.add_subcommand(
      "difftest",
      "Differential tester: random valid graphs and executions from seeds, run on the runtime under random options\n"
      "(tiles, cores, slots, schedulers, redundancy, injected faults, failing actors) and compared with a sequential\n"
      "interpreter. Every case that differs, hangs or crashes gets a shrunk reproducer (docs/testing.md).");
  cmd->footer("Examples:\n"
              "  redflow difftest --seeds 1..1000 --jobs 2                  # 1000 cases, findings in ./difftest-findings\n"
              "  redflow difftest --seeds 1.. --time-limit 3600 --out soak  # as many cases as an hour allows\n"
              "  redflow difftest --replay difftest-findings/seed-17        # run a reproducer again\n"
              "Exit code: 0 when every case passed, 1 when there were findings or errors.");
  cmd->add_option("--seeds", a->seeds, "Generator seeds: A..B (inclusive), A.. (until --time-limit) or A")->capture_default_str();
  cmd->add_option("--time-limit", a->time_limit, "Stop starting cases after this many seconds (0: run every seed)")->capture_default_str();
  cmd->add_option("--jobs,-j", a->jobs, "Cases running at once, each in its own process")->check(CLI::Range(1u, 256u))->capture_default_str();
  cmd->add_option("--timeout", a->timeout, "Seconds after which a case counts as hung and its process is killed")
      ->check(CLI::Range(0.1, 1e6))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Directory for reproducers: OUT/seed-S (shrunk) and OUT/seed-S-original")->capture_default_str();
  cmd->add_option("--exclude", a->exclude,
                  "Comma list of case classes not to generate while a known defect is being fixed: user-compare, "
                  "mixed-redundancy, diff-faults, steal-failures, unaligned-split (docs/testing.md says which defect each stands for)")
      ->capture_default_str();
  cmd->add_option("--max-findings", a->max_findings, "Stop starting cases after this many findings (0: never)")->capture_default_str();
  cmd->add_flag("--no-shrink", a->no_shrink, "Write reproducers as generated, without shrinking them");
  cmd->add_option("--shrink-budget", a->shrink_budget, "Seconds of shrinking per finding")->capture_default_str();
  cmd->add_option("--max-motifs", a->max_motifs, "Largest number of motifs (building blocks) in one generated graph")
      ->check(CLI::Range(1u, 10000u))
      ->capture_default_str();
  cmd->add_option("--replay", a->replay, "Run the reproducer in DIR (written by an earlier difftest) instead of generating cases")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--expect", a->expect,
                  "With --replay: exit 0 only if the outcome is this one (pass, mismatch, unexpected-error, missing-error, stats, "
                  "hang, crash): how CTest checks that a known defect's reproducer still reproduces")
      ->check(CLI::IsMember({"pass", "mismatch", "unexpected-error", "missing-error", "stats", "hang", "crash", "invalid-case"}));
  cmd->add_option("--attempts", a->attempts,
                  "With --replay: run up to this many times, stopping at the first finding (or at the --expect outcome)")
      ->check(CLI::Range(1u, 10000u))
      ->capture_default_str();
  cmd->add_flag("--shrink", a->shrink, "With --replay: shrink a reproducer that still fails into OUT/seed-S");
  cmd->add_flag("--verbose,-v", a->verbose, "Print each step of shrinking");
  return {cmd, [a] { return difftest(*a); }};
}

}  // namespace redflow::cli
