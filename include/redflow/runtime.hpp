// Runtime: the driver and its compute tiles on this machine (the embedded
// default: one process, local tiles, no server). Load a graph once, which
// validates it and computes its schedules, then execute it many times with new
// inputs (Algorithm 1 of Kühbacher et al.).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "redflow/bytes.hpp"
#include "redflow/cluster.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "redflow/status.hpp"
#include "redflow/trace.hpp"

namespace redflow {

enum class Scheduler : std::uint8_t { kHeft, kSteal };
const char* to_string(Scheduler s);

enum class TileTransport { kDirect, kWire };

struct RuntimeOptions {
  unsigned tiles = 0;                          // compute tiles; 0 = one per hardware thread
  unsigned cores_per_tile = 1;                 // worker threads per tile (parallel_for width)
  unsigned slots = 16;                         // slots per tile (tile-local memory)
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::size_t driver_bytes = 0;                // main memory the driver may use; 0 = half of physical memory
  Scheduler scheduler = Scheduler::kHeft;
  std::uint64_t seed = 1;                      // random choices of work stealing
  Redundancy redundancy = Redundancy::kNone;   // graph-wide configuration; an actor's own `redundancy` wins
  FaultInjection faults = {};                  // none by default
  // Quarantine in two steps (docs/redundancy.md, "Quarantine"): a tile that
  // loses this many votes in one execution leaves service at once, on
  // probation (0 = never); a known-answer test after that execution, and
  // before each later one, puts it back when it passes, and this many failed
  // tests in a row quarantine it for good (0 = the suspicion alone does).
  unsigned quarantine_after = 3;
  unsigned probation_rounds = 3;
  // The crash limit: an actor under which this many tiles were lost (their
  // worker processes died while it ran) is poisoned, named in the error, and
  // not retried: the execution fails with kGaveUp rather than hand a task
  // that kills workers to the next one. At least 1.
  unsigned crash_limit = 3;
  bool trace = false;                          // record an ExecutionTrace of every execution
  // Read the clock around every actor for TileStats::busy_s (always done
  // with a trace). Off by default: two clock reads are a large share of an
  // empty actor's cost; busy_s is then 0 on the fast path.
  bool time_actors = false;
  // Refuse (load and execute) a redundancy configuration under which some
  // actor would run unprotected on the driver (unprotected_actors()).
  bool require_protection = false;
  // HEFT's estimate of each actor's fixed cost on this machine, in seconds
  // (MachineModel::actor_overhead_s); 0 = not modelled. `redflow schedule
  // --calibrate` measures it.
  double actor_overhead_s = 0;
  // How the driver reaches its tiles (docs/architecture.md, "The tile
  // protocol"): kDirect calls them on the runner threads; kWire makes every
  // tile a remote tile served by a worker on a thread of this process, over
  // the tile server and the worker session a `redflow worker` runs
  // (docs/remote.md): the production path, in one process. kWire cannot be
  // combined with `listen`. The environment variable
  // REDFLOW_TILE_TRANSPORT=wire|direct overrides this (so a test suite can
  // run in wire mode).
  TileTransport tile_transport = TileTransport::kDirect;
  // HEFT's fixed cost of one transfer between tiles, in seconds
  // (MachineModel::transfer_latency_s).
  double transfer_latency_s = 5e-6;
  // Compute every redundancy configuration's executed graph and HEFT
  // schedule, and allocate its execution state, at load, as the paper does
  // (section 5.1), so that the first execution under another configuration
  // costs no more than the next. Default: only the runtime's configuration
  // at load; the others when first used (docs/runtime.md, "Lazy configurations").
  bool eager_schedules = false;
  // Remote tiles (docs/remote.md): with cluster.listen the driver binds a
  // ZeroMQ ROUTER there and, at start (the first load), waits up to
  // cluster.wait_s for cluster.min_workers worker processes (`redflow worker
  // --connect`). They are tiles local_tiles()..tiles-1: `tiles` counts local
  // and remote tiles together, and 0 then means no local tile. More may join
  // at any time, mid-run too, up to cluster.max_workers remote tiles in all
  // (docs/remote.md, "Joins"): each place kept for a join costs a sleeping
  // thread and a slot directory per loaded graph, not tile memory. A worker
  // silent for cluster.heartbeat_timeout_s is lost (its work is re-run
  // elsewhere). Default: no listen, every tile local.
  ClusterOptions cluster = {};
  // Speculative copies of stragglers (docs/remote.md, "Stragglers"): a tile
  // with nothing to do runs a copy of an actor that a worker has been running
  // for more than 4 times its estimate and at least this many seconds; the
  // first result is used, the other dropped. 0: never.
  double speculate_after_s = 0.1;
  // HEFT adapts to a tile that falls behind its plan (docs/scheduling.md,
  // "HEFT under load"): an idle tile takes over the next ready actor of a
  // tile whose running actor has run twice its planned time, or which has
  // left a ready actor waiting for a millisecond (its thread descheduled).
  // Only for plans whose actors are coarse enough (20 us planned on
  // average) and without redundancy. false: every tile walks its plan.
  bool heft_adapts = true;
  // Actor messages a remote tile may have on the wire before the engine
  // takes the first completion back (docs/remote.md, "Pipelined dispatch").
  // 1: one round trip per actor, as in-process tiles.
  unsigned pipeline_depth = 32;
  // A value in one worker's slot goes straight to the worker that needs it
  // (the paper's TLM-to-TLM transfer, docs/remote.md "Transfers"); false:
  // every transfer relays through the driver (a baseline for bench/).
  bool peer_transfers = true;
  // Told of each event of an execution as it happens, with or without a
  // trace: the marks a trace records (TracedMark: "tile-lost",
  // "quarantine", "vote-failed", "speculative-copy", ...; time_s from the
  // execution's start). A live view (the dashboard) shows a lost or
  // quarantined tile from it at once, not at the execution's end. Called on
  // the runtime's own threads, several at once: it must be thread-safe,
  // quick, and must not call back into the runtime. Default: none.
  std::function<void(const TracedMark&)> on_mark = {};
  unsigned local_tiles() const { return tiles - (cluster.listen.empty() ? 0 : cluster.min_workers); }
  // Tiles a worker may still join as, beyond `tiles` (0 without cluster.listen).
  unsigned join_places() const {
    if (cluster.listen.empty()) return 0;
    const unsigned most = cluster.max_workers == 0 ? cluster.min_workers + 8 : cluster.max_workers;
    return most > cluster.min_workers ? most - cluster.min_workers : 0;
  }
};

// Per-execution choices that override the runtime's options for one execute().
struct ExecuteOptions {
  std::optional<Redundancy> redundancy = {};
  std::optional<FaultInjection> faults = {};
  std::optional<bool> trace = {};
  std::optional<bool> time_actors = {};
};

// Bytes handed to or returned from an execution, by data-node name.
using Inputs = std::map<std::string, std::span<const std::byte>>;
using Outputs = ByteMap;
// Caller-provided memory for an execution's outputs, by data-node name.
using OutputBuffers = std::map<std::string, std::span<std::byte>>;

template <typename T>
std::span<const std::byte> as_bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

struct TileStats {
  double busy_s = 0;
  double checksum_s = 0;              // of busy_s, computing output checksums (redundancy)
  std::uint64_t actors = 0;
  std::uint64_t transfers_in = 0;     // data nodes copied into this tile's slots (the driver: into main memory, pulled by the driver)
  std::uint64_t transfers_out = 0;    // data nodes this tile copied out of its slots into main memory (write-backs)
  std::uint64_t steals = 0;           // actors this tile stole
  std::uint64_t displacements = 0;    // live data nodes pushed out of a slot for lack of room
  std::uint64_t lost_votes = 0;       // replica results computed here that a vote found wrong
  bool quarantined = false;           // out of service for its lost votes: on probation, or for good
  bool on_probation = false;          // of those, waiting for a known-answer test to put it back
  // Remote tiles (a worker process; empty and 0 for local tiles):
  std::string worker{};               // its name (redflow tile --name, or HOST:PID)
  std::string host{};                 // the host it runs on
  bool lost = false;                  // declared lost (crashed, cut off, silent)
  std::uint64_t bytes_sent = 0;       // driver -> worker during this execution
  std::uint64_t bytes_received = 0;   // worker -> driver during this execution
  std::uint64_t peer_bytes_in = 0;    // fetched straight from another worker during this execution (not through the driver)
  std::uint64_t corrupted_transfers = 0;  // values to or from it whose bytes failed the end-to-end check this execution (each placed, read or recomputed again)
  std::uint64_t most_in_flight = 0;   // most actor messages unanswered at once: 1 one at a time, up to RuntimeOptions::pipeline_depth for a worker (0: local fast path only)
  bool joined = false;                // a worker that joined after the runtime started (docs/remote.md, "Joins")
  std::uint64_t speculative = 0;      // speculative copies of stragglers this tile ran
  std::uint64_t straggled = 0;        // its actors other tiles copied or took over because it fell behind
};

struct ExecutionStats {
  double makespan_s = 0;
  std::uint64_t actors_executed = 0;
  std::uint64_t transfers = 0;        // copies: driver->tile, tile->tile and tile->main memory (reads in place and 0-byte nodes are not transfers)
  std::uint64_t transfer_bytes = 0;
  std::uint64_t steals = 0;
  std::uint64_t displacements = 0;
  std::uint64_t injected_faults = 0;   // outputs corrupted by fault injection
  std::uint64_t detected_faults = 0;   // replica results a vote found different from the confirmed one
  std::uint64_t reexecutions = 0;      // actor executions repeated because no two replicas agreed
  std::uint64_t lost_tiles = 0;        // tiles lost (crashed) during this execution
  std::uint64_t recomputed_actors = 0; // producers re-run for values that lived only on a lost tile
  std::uint64_t joined_tiles = 0;      // workers that joined during this execution and took work
  std::uint64_t replans = 0;           // HEFT schedules made again for a changed set of tiles
  std::uint64_t speculative_copies = 0;  // copies of stragglers run on idle tiles
  std::uint64_t speculative_wins = 0;    // of them, the ones whose result was used (the straggler's was dropped)
  std::uint64_t abandoned = 0;           // answers of stragglers not waited for: the execution had ended without them
  std::uint64_t taken_over = 0;          // HEFT: actors of a straggler's order an idle tile ran instead
  std::uint64_t late_messages = 0;     // remote tiles: replies and messages from lost workers, discarded (runtime's life)
  std::uint64_t refused_messages = 0;  // remote tiles: malformed or oversized messages refused (runtime's life)
  std::uint64_t corrupted_transfers = 0;  // remote tiles: values whose bytes crossed the wire corrupted, caught by the end-to-end check (this execution)
  std::uint64_t batched_messages = 0;  // remote tiles: requests and replies that shared a message with others (runtime's life)
  std::uint64_t unprotected_actors = 0;  // actors redundancy asked for that ran once on the driver (LoadedGraph::unprotected_actors)
  std::vector<unsigned> quarantined_tiles;  // out of service for their lost votes (on probation or for good) after this execution
  std::vector<unsigned> probation_tiles;    // of those, the ones on probation
  std::vector<unsigned> reinstated_tiles;   // tiles that passed a known-answer test during this execution and serve again
  std::uint64_t probation_tests = 0;        // known-answer tests run on tiles on probation (each five runs of one actor)
  // Degraded: replicas of a *-diff configuration not run because fewer
  // distinct tiles were in service than replicas; their actors were voted
  // on the replicas left (3x-diff as 2 replicas). 0: every actor got the
  // replicas it asked for. RuntimeOptions::require_protection fails such a run.
  std::uint64_t skipped_replicas = 0;
  bool degraded() const { return skipped_replicas > 0; }
  std::vector<TileStats> tiles;
  TileStats driver;
  std::string scheduler;
  std::string redundancy;
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
  // The outputs' bytes are written once, by their producers, into the
  // returned vectors (no copy out of main memory afterwards).
  Result<Outputs> execute(const Inputs& inputs, const ExecuteOptions& options = {});
  // Runs the graph once and writes every output into the caller's buffer:
  // `outputs` names every output node once, each buffer exactly its declared
  // size, overlapping no input and no other output (else InvalidArgument,
  // and nothing is run or written). The producers write straight into these
  // buffers (a collect's inputs too). Warm (an earlier execution under the
  // same redundancy configuration), without a trace and without fault
  // injection, it performs no heap allocation (tests/alloc/warm_execute_test.cpp).
  Status execute_into(const Inputs& inputs, const OutputBuffers& outputs, const ExecuteOptions& options = {});

  const Graph& graph() const;
  // The graph as executed under `r` (after the redundancy transformation),
  // or usable(r)'s error when `r` cannot run on this runtime (never another
  // configuration's graph in its place).
  Result<const Graph*> executed_graph(Redundancy r) const;
  // The HEFT schedule of executed_graph(r) (redundant HEFT for *-diff), or
  // usable(r)'s error.
  const Schedule& heft_schedule() const;  // under the runtime's configuration, which load() checked
  Result<const Schedule*> heft_schedule(Redundancy r) const;
  const ExecutionStats& last_stats() const;
  const ExecutionTrace& last_trace() const;  // empty unless tracing was on
  // Whether configuration `r` can run on this runtime (e.g. 3x-diff needs 3 tiles), and why not.
  Status usable(Redundancy r) const;
  // Actors configuration `r` cannot protect on this runtime: they run once on
  // the driver (data larger than a slot, more inputs than slots).
  const std::vector<UnprotectedActor>& unprotected_actors(Redundancy r) const;
  // Configurations other than the runtime's are built when first used
  // (execute, usable, executed_graph, heft_schedule, unprotected_actors)
  // unless RuntimeOptions::eager_schedules built them all at load.
  // scheduled(r): r's executed graph, plan and HEFT schedule exist.
  // prepared(r): its execution state (main memory) is allocated too.
  // Neither builds anything.
  bool scheduled(Redundancy r) const;
  bool prepared(Redundancy r) const;

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
  // the schedule and allocates the execution state of the runtime's
  // redundancy configuration (of every configuration with eager_schedules).
  // The runtime must outlive the LoadedGraph.
  Result<LoadedGraph> load(Graph graph, const Registry& registry);
  // Everything load() checks (the machine, validate(), the configuration's
  // needs such as tiles for *-diff and require_protection), without starting
  // tiles or allocating: `redflow graph` answers "would `run` accept this?".
  Status check(const Graph& graph, const Registry& registry) const;

  const RuntimeOptions& options() const;  // with defaults resolved (tiles > 0, driver_bytes > 0)
  // Tiles out of service for their lost votes: on probation (a known-answer
  // test may put them back) or quarantined for good (for the runtime's life).
  std::vector<unsigned> quarantined_tiles() const;
  MachineModel machine() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL that print the
// name of the actor the crashing thread was running ("redflow: fatal: SIGSEGV
// ... inside actor 'x'"), then hand the signal to the handler installed before
// (by default the process dies as it would have). The redflow command calls
// it; a program embedding redflow may. Call it once, before executing graphs.
void report_actor_crashes();

// Full validation: structure, known actor functions and their shape checks,
// and that every data node fits some memory (a tile slot or the driver).
Status validate(const Graph& graph, const Registry& registry, const RuntimeOptions& options);

}  // namespace redflow
