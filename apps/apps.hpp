// The benchmark applications of section 6 of Kühbacher et al. (matrix
// multiplication, FFT, bitonic sort) and the runtime-overhead shapes: graph
// generators, the actors they need, direct baselines and references.
// docs/apps.md describes each graph; `redflow gen` writes them as DOT and
// `redflow bench` measures them against the baselines.
#pragma once

#include "apps/bitonic.hpp"
#include "apps/fft.hpp"
#include "apps/matmul.hpp"
#include "apps/overhead_shapes.hpp"
#include "apps/paper.hpp"
#include "apps/rearrange.hpp"
#include "apps/target.hpp"
#include "apps/workflow.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace redflow::apps {

// Adds every application actor: mat.cols, mat.hcat (driver), mm.block,
// fft.cols, fft.rows, sort.low, sort.high, noop, wf.task, wf.digest
// (driver; workflow.hpp), and the paper profile's (paper.hpp). The graphs also use the
// built-ins rf.split, rf.collect and i32.sort.
void register_app_actors(Registry& reg);

// Registry::with_builtins() plus the application actors: what `redflow`
// itself offers to graphs.
Registry app_registry();

// An application graph with seeded random inputs, ready to run: what
// `redflow gen` writes and `redflow bench` measures.
struct AppProblem {
  std::string app;                                        // "matmul", "fft" or "bitonic"
  Graph graph;
  std::map<std::string, std::vector<std::byte>> inputs;   // by input node name
  std::string output;                                     // the output node's name
};

// `n` and `block` as in MatmulParams, FftParams, BitonicParams. Inputs:
// matmul A, B uniform int32; fft X uniform in [-1, 1)^2; bitonic X uniform int32.
// Profile::kPaper builds the paper's graphs (paper.hpp): `target` is not
// used, and `block` must be 0 (the paper fixes the blocks).
Result<AppProblem> make_problem(std::string_view app, std::size_t n, std::size_t block, const Target& target,
                                std::uint64_t seed, Profile profile = Profile::kFast);

}  // namespace redflow::apps
