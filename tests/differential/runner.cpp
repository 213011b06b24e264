// Running a case and judging each step against the reference (runner.hpp).
#include "runner.hpp"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "interpreter.hpp"
#include "schedule/heft.hpp"

namespace redflow::difftest {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kMismatch: return "mismatch";
    case Outcome::kUnexpectedError: return "unexpected-error";
    case Outcome::kMissingError: return "missing-error";
    case Outcome::kStats: return "stats";
    case Outcome::kHang: return "hang";
    case Outcome::kCrash: return "crash";
    case Outcome::kInvalidCase: return "invalid-case";
  }
  return "?";
}

std::string describe(const Verdict& v) {
  if (v.outcome == Outcome::kPass) return fmt::format("pass ({} steps)", v.steps);
  if (v.step < 0) return fmt::format("{}: {}", to_string(v.outcome), v.detail);
  return fmt::format("{} at step {}: {}", to_string(v.outcome), v.step, v.detail);
}

namespace {

bool flips(const FaultInjection& f) { return f.bitflip_probability > 0 || !f.faulty_tiles.empty(); }

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Whether redundancy promises this step's outputs under its faults: transient
// bit flips are corrected by every configuration but none; a permanently
// faulty tile only by 3x-diff (docs/redundancy.md, "The five configurations").
bool promised(const Graph& g, Redundancy r, const FaultInjection& f, const MachineModel& m, const Registry& reg) {
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    if (runs_on_driver(g, a, m, reg)) continue;  // never injected
    const Redundancy e = effective_redundancy(g, a, r, m, reg);
    if (e == Redundancy::kNone || (!f.faulty_tiles.empty() && e != Redundancy::kTripleDiff)) return false;
  }
  return true;
}

// A wrong output that no vote can catch: two executions of one actor in one
// round hit alike agree on the wrong value. That is a double fault, outside
// what redundancy promises. Replicas on distinct tiles appear in the trace one
// by one (two hit in one attempt may have agreed); the runs of a *-same actor
// share one trace entry, which counts the rounds where injection flipped the
// same bit of two runs (what the injector did, not what the vote made of it),
// so a wrong result with none is a voting bug, not bad luck.
bool double_fault(const ExecutionTrace& t, const Graph& g) {
  std::map<std::pair<std::string, unsigned>, unsigned> hits;
  for (const TracedActor& a : t.actors) {
    if (!a.faulty) continue;
    auto id = g.find_actor(a.original);
    const Redundancy own = id ? g.actor(*id).redundancy.value_or(Redundancy::kNone) : Redundancy::kNone;
    const bool same = a.name == a.original && (own == Redundancy::kDoubleSame || own == Redundancy::kTripleSame ||
                                              t.redundancy == "2x-same" || t.redundancy == "3x-same");
    if (same) {
      if (a.alike_flips > 0) return true;
      continue;
    }
    if (++hits[{a.original, a.attempt}] >= 2) return true;
  }
  return false;
}

// "output 'c3' (40 bytes): first difference at byte 17: 0x3a, reference 0x3b".
std::string first_difference(const Outputs& got, const Outputs& want) {
  for (const auto& [name, bytes] : want) {
    auto it = got.find(name);
    if (it == got.end()) return "output '" + name + "' missing";
    if (it->second == bytes) continue;
    if (it->second.size() != bytes.size())
      return fmt::format("output '{}' has {} bytes, reference {}", name, it->second.size(), bytes.size());
    std::size_t i = 0, diff = 0;
    while (it->second[i] == bytes[i]) ++i;
    for (std::size_t k = 0; k < bytes.size(); ++k) diff += it->second[k] != bytes[k];
    return fmt::format("output '{}' ({} bytes, {} differ): first difference at byte {}: 0x{:02x}, reference 0x{:02x}", name,
                       bytes.size(), diff, i, static_cast<unsigned>(it->second[i]), static_cast<unsigned>(bytes[i]));
  }
  return "extra outputs";
}

}  // namespace

Verdict run_case(const Case& c, const Registry& reg) {
  Verdict v;
  auto finding = [&](Outcome o, int step, std::string detail) {
    v.outcome = o;
    v.step = step;
    v.detail = std::move(detail);
    return v;
  };
  Runtime rt(c.options);
  auto loaded = rt.load(c.graph, reg);
  if (!loaded.ok()) return finding(Outcome::kInvalidCase, -1, "load: " + loaded.status().ToString());
  const MachineModel m = rt.machine();
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    const int step = static_cast<int>(i);
    if (!loaded->usable(s.redundancy).ok()) {
      ++v.skipped;
      continue;
    }
    auto faults = step_faults(s, c.options.tiles);
    if (!faults.ok()) return finding(Outcome::kInvalidCase, step, faults.status().ToString());
    Inputs in;
    for (const auto& [name, bytes] : s.inputs) in[name] = bytes;
    ExecuteOptions eo;
    eo.redundancy = s.redundancy;
    eo.faults = *faults;
    eo.trace = flips(*faults);
    auto out = loaded->execute(in, eo);
    ++v.steps;
    const Reference ref = interpret(c.graph, reg, in);
    const ExecutionStats& st = loaded->last_stats();
    const std::string counts = fmt::format("(redundancy {}, {} injected, {} detected, {} re-executions)", to_string(s.redundancy),
                                           st.injected_faults, st.detected_faults, st.reexecutions);
    if (ref.failed) {
      if (!contains(ref.error, "failing on purpose")) return finding(Outcome::kInvalidCase, step, "reference failed: " + ref.error);
      if (out.ok()) return finding(Outcome::kMissingError, step, "reference failed (" + ref.error + ") but execute() succeeded");
      const std::string msg = out.status().ToString();
      const bool gave_up = out.status().code() == Status::Code::kGaveUp;
      if (!contains(msg, "failing on purpose") && !(gave_up && flips(*faults) && contains(msg, "agreed in")) &&
          !(gave_up && !rt.quarantined_tiles().empty() && contains(msg, "too few compute tiles are in service")))
        return finding(Outcome::kUnexpectedError, step, "expected the on-purpose failure, got: " + msg);
      ++v.failed_on_purpose;
      continue;
    }
    if (!out.ok() && c.stop_after_steal_failure && c.options.scheduler == Scheduler::kSteal) {
      // Known defect (docs/testing.md): work stealing keeps stale queue entries after a failed execution.
      v.stopped = c.steps.size() - i - 1;
      if (!ref.failed) ++v.gave_up;
      else ++v.failed_on_purpose;
      break;
    }
    if (!out.ok()) {
      const std::string msg = out.status().ToString();
      // Under faults redundancy may give up, and a quarantine (which only faults cause) may leave too few
      // tiles for a later configuration: both are errors the runtime reports, not wrong results.
      if (out.status().code() == Status::Code::kGaveUp && ((flips(*faults) && contains(msg, "agreed in")) ||
                                                            (!rt.quarantined_tiles().empty() && contains(msg, "too few compute tiles are in service")))) {
        ++v.gave_up;
        continue;
      }
      return finding(Outcome::kUnexpectedError, step, msg + " " + counts);
    }
    if (*out != ref.outputs) {
      if (flips(*faults) && !promised(c.graph, s.redundancy, *faults, m, reg)) {
        ++v.silent_none;
        continue;
      }
      if (flips(*faults) && double_fault(loaded->last_trace(), c.graph)) {
        ++v.double_faults;
        continue;
      }
      return finding(Outcome::kMismatch, step, first_difference(*out, ref.outputs) + " " + counts);
    }
    if (!flips(*faults) && rt.quarantined_tiles().empty()) {
      const std::uint64_t want = expected_executions(c.graph, s.redundancy, m, reg);
      if (st.actors_executed != want || st.detected_faults != 0 || st.reexecutions != 0)
        return finding(Outcome::kStats, step,
                       fmt::format("fault-free execution reports {} actor executions (expected {}), {} detected faults, {} re-executions "
                                   "(expected 0) {}",
                                   st.actors_executed, want, st.detected_faults, st.reexecutions, counts));
    }
  }
  return v;
}

}  // namespace redflow::difftest
