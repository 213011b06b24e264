// Runtime: the driver and its compute tiles on this machine (the embedded
// default: one process, local tiles, no server). Load a graph once, which
// validates it and computes its schedules, then execute it many times with new
// inputs (Algorithm 1 of Kühbacher et al.).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "redflow/status.hpp"

namespace redflow {

enum class Scheduler : std::uint8_t { kHeft, kSteal };
const char* to_string(Scheduler s);

struct RuntimeOptions {
  unsigned tiles = 0;                          // compute tiles; 0 = one per hardware thread
  unsigned cores_per_tile = 1;                 // worker threads per tile (parallel_for width)
  unsigned slots = 16;                         // slots per tile (tile-local memory)
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::size_t driver_bytes = 0;                // main memory the driver may use; 0 = half of physical memory
  Scheduler scheduler = Scheduler::kHeft;
  std::uint64_t seed = 1;                      // random choices of work stealing
};

// Bytes handed to or returned from an execution, by data-node name.
using Inputs = std::map<std::string, std::span<const std::byte>>;
using Outputs = std::map<std::string, std::vector<std::byte>>;

template <typename T>
std::span<const std::byte> as_bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

struct TileStats {
  double busy_s = 0;
  std::uint64_t actors = 0;
  std::uint64_t transfers_in = 0;     // data nodes copied into this tile's slots
  std::uint64_t steals = 0;           // actors this tile stole
  std::uint64_t displacements = 0;    // live data nodes pushed out of a slot for lack of room
};

struct ExecutionStats {
  double makespan_s = 0;
  std::uint64_t actors_executed = 0;
  std::uint64_t transfers = 0;        // driver->tile, tile->tile and tile->driver copies
  std::uint64_t transfer_bytes = 0;
  std::uint64_t steals = 0;
  std::uint64_t displacements = 0;
  std::vector<TileStats> tiles;
  TileStats driver;
  std::string scheduler;
  std::string to_json() const;        // schema: docs/runtime.md, "Stats JSON"
};

class Runtime;

// A graph that passed validation, with its schedules, ready to execute.
class LoadedGraph {
 public:
  LoadedGraph(LoadedGraph&&) noexcept;
  LoadedGraph& operator=(LoadedGraph&&) noexcept;
  ~LoadedGraph();

  // Runs the graph once. Every input node must be given, with exactly its
  // declared size; outputs are returned by name.
  Result<Outputs> execute(const Inputs& inputs);

  const Graph& graph() const;
  const Schedule& heft_schedule() const;
  const ExecutionStats& last_stats() const;

  struct Impl;

 private:
  friend class Runtime;
  explicit LoadedGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Validates `graph` against `registry` and this runtime's memory, computes
  // its schedules. The runtime must outlive the LoadedGraph.
  Result<LoadedGraph> load(Graph graph, const Registry& registry);

  const RuntimeOptions& options() const;  // with defaults resolved (tiles > 0, driver_bytes > 0)
  MachineModel machine() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Full validation: structure, known actor functions and their shape checks,
// and that every data node fits some memory (a tile slot or the driver).
Status validate(const Graph& graph, const Registry& registry, const RuntimeOptions& options);

}  // namespace redflow
