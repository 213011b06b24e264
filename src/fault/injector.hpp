// FaultInjector: decides, reproducibly, which actor executions on which tiles
// get a bit flipped or run slow (--inject). Decisions hash (seed, execution,
// actor, replica, attempt), never a shared random stream, so they do not
// depend on thread timing: the same seed and the same sequence of executions
// flip the same bits, under either scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "redflow/redundancy.hpp"

namespace redflow::fault {

class FaultInjector {
 public:
  explicit FaultInjector(const FaultInjection& spec) : spec_(spec) {}

  // Identifies one execution of one actor replica.
  std::uint64_t key(std::uint64_t execution, std::uint32_t actor, unsigned replica, unsigned attempt) const;

  // Flips one bit of `output` if this execution is to be corrupted on `tile`;
  // returns which bit (from the first byte's lowest), if it did. Empty
  // outputs have no bit to flip. What was flipped is the ground truth a
  // judge of voting needs: two runs with the same bit flipped agree on a
  // wrong value, which no vote can catch; any other wrong result is a bug.
  std::optional<std::uint64_t> maybe_flip(std::uint64_t key, unsigned tile, std::span<std::byte> output) const;

  // How many times longer actors take on `tile` (1 = normal speed).
  double slow_factor(unsigned tile) const;

 private:
  FaultInjection spec_;
};

}  // namespace redflow::fault
