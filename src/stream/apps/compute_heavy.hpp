// The paper's second application (docs/stream-apps.md): the Compute Heavy
// Application (CHA), about twenty operators whose every token costs much
// more computation than moving it, so it scales with nodes whatever the
// placement. A source of 64-byte blocks is dealt round-robin to parallel
// branches of mixing stages and merged back in the same order, so the result
// is bit-exact and independent of thread interleaving: cha_sequential
// computes the same bytes with plain loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "redflow/stream.hpp"

namespace redflow::stream {

inline constexpr std::size_t kChaToken = 64;  // 8 uint64 words
inline constexpr int kChaBranches = 4, kChaStages = 4;
inline constexpr const char* kChaOutput = "result";

// The operators (64-byte tokens):
//   cha.source blocks=N             N blocks, word j of block i = splitmix64(8i + j)
//   cha.split outputs=B             block i to output i mod B
//   cha.mix work=K seed=S           K rounds of an integer mixing function
//   cha.merge inputs=B              one block from each input in turn
void add_compute_heavy_operators(OperatorRegistry& registry);

// Operator instances: branches * stages + 4 (20 with the defaults).
std::size_t cha_operator_count(int branches = kChaBranches, int stages = kChaStages);

// The program: source -> split -> `branches` chains of `stages` mix
// operators -> merge -> collect (kChaOutput).
Result<Program> cha_program(const OperatorRegistry& registry, std::uint64_t blocks, std::uint64_t work, int branches = kChaBranches,
                            int stages = kChaStages);
// The same program in the DOT form (examples/streams/compute_heavy.dot).
std::string cha_dot(std::uint64_t blocks, std::uint64_t work, int branches = kChaBranches, int stages = kChaStages);
// Plain loops: exactly the bytes the program's collect gathers.
Bytes cha_sequential(std::uint64_t blocks, std::uint64_t work, int branches = kChaBranches, int stages = kChaStages);

}  // namespace redflow::stream
