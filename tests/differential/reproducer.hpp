// Reproducers: a case on disk, in a directory anyone can replay.
//   graph.dot            the graph (extended DOT), constants beside it as NAME.bin
//   stepK.NAME.bin       the inputs of execution K
//   case.json            runtime options and, per step, redundancy, --inject specs and input files
//   command              the exact commands: `redflow difftest --replay DIR`, and the failing step
//                        alone as `redflow run --lib <difftest actors plugin> ...`
#pragma once

#include <string>

#include "case.hpp"
#include "runner.hpp"

namespace redflow::difftest {

// Writes the reproducer into `dir` (created; files are replaced). `note` goes into `command` as a comment.
Status write_reproducer(const Case& c, const Verdict& v, const std::string& dir, const std::string& note);

// Reads a directory written by write_reproducer; errors name the bad file or field.
Result<Case> read_reproducer(const std::string& dir);

// The `redflow run` command line of step `k` alone (the steps before it ran on the same loaded graph).
std::string run_command_of(const Case& c, std::size_t k, const std::string& dir);

}  // namespace redflow::difftest
