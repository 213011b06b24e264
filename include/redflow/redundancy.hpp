// Redundancy: the five configurations of section 5 of Kühbacher et al.
// (SAC'22), per graph or per actor, and the fault injection that exercises
// them. An actor runs once (none), two or three times back to back on one
// tile (*-same: the tile votes), or as two or three replicas on distinct
// tiles whose checksums the driver votes on (*-diff, Fig. 3 of the paper).
// Results are never used before they are confirmed (non-speculative).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/status.hpp"

namespace redflow {

class Graph;
class Registry;
struct MachineModel;

enum class Redundancy : std::uint8_t { kNone, kDoubleSame, kTripleSame, kDoubleDiff, kTripleDiff };

inline constexpr Redundancy kAllRedundancies[] = {Redundancy::kNone, Redundancy::kDoubleSame, Redundancy::kTripleSame,
                                                  Redundancy::kDoubleDiff, Redundancy::kTripleDiff};

// "none", "2x-same", "3x-same", "2x-diff", "3x-diff".
const char* to_string(Redundancy r);
std::optional<Redundancy> parse_redundancy(std::string_view text);
// A comma list ("none,3x-diff"); the error names the bad element.
Result<std::vector<Redundancy>> parse_redundancy_list(std::string_view text);

// How many times an actor under `r` is executed (1, 2 or 3).
unsigned replica_count(Redundancy r);
// True for 2x-diff and 3x-diff: replicas on distinct tiles, voted by the driver.
bool replicas_on_distinct_tiles(Redundancy r);

// The redundancy transformation (Fig. 3 of the paper). Every actor under a
// *-diff configuration (its own `redundancy` or else `graph_default`) becomes
// replicas NAME.r1, NAME.r2 [, NAME.r3] writing DATA.r1, DATA.r2 [, DATA.r3],
// and a compare actor NAME.compare (function rf.compare) that votes on them
// and writes the actor's original output node, so consumers are unchanged.
// Actors under *-same keep one node, with `redundancy` set. Actors that run on
// the driver (special actors, data too large for a slot: Algorithm 2's rule
// on `machine`) are not replicated, as in the paper; asking for redundancy on
// one explicitly is an error naming it. `graph` must be valid.
Result<Graph> apply_redundancy(const Graph& graph, Redundancy graph_default, const MachineModel& machine,
                               const Registry& registry);

// An actor that redundancy asked to protect but that runs once, on the
// driver, which never replicates actors: its data does not fit a tile slot,
// or it reads more inputs than a tile has slots. `reason` says which.
struct UnprotectedActor {
  std::string name;
  std::string reason;
};
// The unprotected actors of `graph` under `graph_default` (or an actor's own
// setting) on `machine`. Special actors (rf.split, ...) are not listed: they
// only move bytes, and always run on the driver.
std::vector<UnprotectedActor> unprotected_actors(const Graph& graph, Redundancy graph_default, const MachineModel& machine,
                                                 const Registry& registry);
// "2 actor(s) run once on the driver, without the protection of redundancy
// 3x-diff: 'mm' (its output 'P' has 256 bytes, more than a slot's 16 (--slot-bytes)); ...".
// Empty when `actors` is.
std::string describe_unprotected(const std::vector<UnprotectedActor>& actors, Redundancy r);

// Faults injected on compute tiles, reproducibly: the same seed and the same
// sequence of executions flip the same bits of the same actor replicas
// (decisions hash the execution, actor, replica and re-execution number).
// Only a quarantine, whose timing depends on the schedule, can change which
// replicas run at all, and with them the count of injected faults.
// A flip is applied to the output in the tile's slot before its checksum is
// taken, so voting sees corrupted data exactly as it would see a real upset.
struct FaultInjection {
  double bitflip_probability = 0;   // bitflip:p=P: per actor execution on a tile
  std::uint64_t seed = 1;           // bitflip:...,seed=S
  std::vector<unsigned> faulty_tiles;                      // faulty-tile:T: every output computed there is flipped
  std::vector<std::pair<unsigned, double>> slow_tiles;     // slow-tile:T,factor=F: actors there take F times as long
  std::vector<std::pair<unsigned, std::uint64_t>> crash_tiles;  // crash-tile:T,after=K: tile T dies after K actors
  bool any() const { return bitflip_probability > 0 || !faulty_tiles.empty() || !slow_tiles.empty() || !crash_tiles.empty(); }
};

// Adds one --inject SPEC to `into`: "bitflip:p=0.01,seed=7", "faulty-tile:1",
// "slow-tile:0,factor=4", "crash-tile:1,after=20" (after defaults to 0). The error names the bad part.
Status parse_fault_spec(std::string_view spec, FaultInjection& into);

// Checks that every tile `faults` names exists on a runtime of `tiles` compute tiles.
Status check_fault_tiles(const FaultInjection& faults, unsigned tiles);

}  // namespace redflow
