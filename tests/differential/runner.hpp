// The runner: executes a case on the real runtime, step after step on one
// LoadedGraph, and compares every step with the sequential interpreter.
// run_isolated() does it in a child process with a time limit, because
// execute() cannot be cancelled: a hang or a crash of the runtime becomes a
// verdict of the parent instead of a hung or dead tester.
#pragma once

#include <cstdint>
#include <string>

#include "case.hpp"

namespace redflow::difftest {

enum class Outcome : std::uint8_t {
  kPass,
  kMismatch,         // outputs differ from the reference where the configuration promises them
  kUnexpectedError,  // execute() failed, and neither the graph nor a give-up under faults explains it
  kMissingError,     // an actor failed on purpose in the reference, but execute() succeeded
  kStats,            // a fault-free step reported other actor executions, detections or re-executions than it ran
  kHang,             // the case did not finish within the time limit
  kCrash,            // the child process died (signal, sanitizer report)
  kInvalidCase,      // the generator produced a case the runtime rejects: a bug of the tester
};
const char* to_string(Outcome o);
inline bool is_finding(Outcome o) { return o != Outcome::kPass; }

struct Verdict {
  Outcome outcome = Outcome::kPass;
  int step = -1;            // the step that failed (-1: loading, or none)
  std::string detail;       // what differed, in words
  // Tallies over the steps that ran (all of them when the case passed).
  std::uint64_t steps = 0;
  std::uint64_t silent_none = 0;     // wrong outputs where some actor ran unprotected (none) under faults: expected
  std::uint64_t gave_up = 0;         // executions that failed under faults: no two runs/replicas agreed, or quarantine left too few tiles
  std::uint64_t double_faults = 0;   // wrong outputs under protection where two runs of one actor in one round were both hit
  std::uint64_t failed_on_purpose = 0;
  std::uint64_t skipped = 0;         // steps whose configuration this runtime cannot run (e.g. 3x-diff on 2 tiles)
  std::uint64_t stopped = 0;         // steps not run after a failed execution under stealing (Case::stop_after_steal_failure)
};

// Runs the case in this process (it may hang if the runtime does).
Verdict run_case(const Case& c, const Registry& reg);

// Runs the case in a forked child, killed after `timeout_s` seconds.
Verdict run_isolated(const Case& c, const Registry& reg, double timeout_s);

// One line: "mismatch at step 2: output 'c3' differs at byte 17 ..."
std::string describe(const Verdict& v);

}  // namespace redflow::difftest
