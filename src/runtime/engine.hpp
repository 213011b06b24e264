// Engine: the driver and the local compute tiles of one Runtime, and the
// execution of a Plan on them. The driver is a role, not a thread on the hot
// path: a tile that finishes an actor resolves its successors' readiness
// itself with atomic counters, keeps the driver's bookkeeping for its own
// slots, and moves data with the tile messages of tile.hpp. The thread that
// calls execute() plays the driver tile: it runs special and oversized actors
// on main memory.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "redflow/runtime.hpp"
#include "runtime/graph_state.hpp"
#include "runtime/local_tile.hpp"
#include "runtime/main_memory.hpp"
#include "runtime/tile.hpp"
#include "runtime/notifier.hpp"
#include "runtime/plan.hpp"
#include "runtime/driver_role.hpp"
#include "runtime/remote_tiles.hpp"
#include "runtime/replica_placement.hpp"
#include "runtime/slot_directory.hpp"
#include "runtime/tile_configuration.hpp"
#include "runtime/tile_places.hpp"
#include "runtime/voting.hpp"
#include "runtime/work_deque.hpp"

namespace redflow::fault {
class FaultInjector;
}

namespace redflow::runtime {

// What one execute() call asks for beyond the plan.
struct ExecutionRequest {
  Scheduler scheduler = Scheduler::kHeft;
  const fault::FaultInjector* faults = nullptr;  // null: no injection
  std::uint64_t fault_execution = 0;             // this execution's number in the fault stream
  ExecutionTrace* trace = nullptr;               // filled when not null
  bool time_actors = false;                      // measure TileStats::busy_s (always with a trace)
  const char* redundancy = "none";               // for stats and traces
  const FaultInjection* fault_spec = nullptr;    // what `faults` injects, sent to each tile by message
};

// One execution's shared state, each tile's runner thread, and an actor
// message on the wire (engine_job.hpp; internal to src/runtime).
struct Job;
struct Runner;
struct SentActor;

class Engine {
 public:
  // `options` with defaults resolved; with RuntimeOptions::cluster.listen, start()
  // takes the remote tiles from `remote_tiles`.
  explicit Engine(const RuntimeOptions& options, RemoteTilesFactory remote_tiles = listen_for_tiles);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Reserves tile memory and starts the tile threads (once; later calls do
  // nothing). With RuntimeOptions::cluster.listen, first binds (the factory's
  // RemoteTiles) and waits for the remote tiles.
  Status start();
  // Every actor function of `graph` that runs on tiles is in each remote
  // worker's registry (its HELLO); else an error naming actor, function and
  // worker, and that worker is refused (told what it lacks) and lost.
  Status check_remote_functions(const Graph& graph, const Registry& registry);

  // Per-graph execution state, allocated once per loaded graph.
  std::unique_ptr<GraphState> prepare(const Plan& plan);

  // Runs `plan` once. `given[i]` is the bytes of input or constant node
  // state.given[i]; outputs are read back from the state with output().
  // `output_to[i]`, when not empty and not null, is the caller's buffer for
  // output node state.outputs[i] (exactly its size): the output's bytes are
  // written there, not into main memory's own. Both are per node of those
  // lists, not per data node: an execution costs O(inputs + outputs) here.
  Status execute(const Plan& plan, GraphState& state, const ExecutionRequest& request,
                 std::span<const std::span<const std::byte>> given, std::span<std::byte* const> output_to,
                 ExecutionStats& stats);
  std::span<const std::byte> output(const GraphState& state, DataId d) const;


  // Every tile place, the ones kept for workers that may join included.
  unsigned tiles() const { return static_cast<unsigned>(tiles_.size()); }
  // The machine HEFT plans for (RuntimeOptions' tiles, cores, slots, costs).
  MachineModel machine() const;
  // Tiles taken out of service (quarantine), for the runtime's whole life.
  std::vector<unsigned> quarantined_tiles() const { return places_.quarantined(tiles()); }
  // For a give-up's message: "tile 0 quarantined, tiles 1, 2 lost, 1 of 4
  // compute tiles in service".
  std::string out_of_service() const { return places_.out_of_service(tiles()); }

 private:
  friend class EngineCalls;  // what Voting, ReplicaPlacement, MainMemory and SlotDirectory may call

  void runner_main(unsigned t);
  void steal_loop(Runner& r, Job& job);
  void heft_loop(Runner& r, Job& job);
  void driver_loop(Job& job);

  // Runs `a` on tile r and resolves its successors; returns one that became
  // ready and should run next on this tile (work-first), or ~0u. Inline
  // (engine_job.hpp): the fast path (run_in_place) first, then run_on_slots.
  ActorId run_on_tile(Runner& r, Job& job, ActorId a);
  ActorId run_on_slots(Runner& r, Job& job, ActorId a);
  void run_on_driver(Job& job, ActorId a);
  ActorId complete(Job& job, ActorId a, Runner* from);
  // complete() from tile r, with its commonest case inline (engine_job.hpp).
  ActorId complete_on_tile(Job& job, ActorId a, Runner& r);
  ActorId run_actor_message(Runner& r, Job& job, ActorId a, unsigned message);
  bool place_inputs(Runner& r, Job& job, ActorId a, ActorId& next);
  bool describe_actor_message(Runner& r, Job& job, ActorId a, unsigned message, ActorMessage& m);
  ActorId finish_actor_message(Runner& r, Job& job, ActorId a, DataTag output_tag, unsigned attempt, Completion done,
                               double trace_start);
  // Pipelined dispatch to a tile behind a link (pipeline.cpp).
  ActorId dispatch(Runner& r, Job& job, ActorId a);
  bool pipelines(const Job& job, ActorId a) const;
  void send_actor_message(Runner& r, Job& job, ActorId a);
  ActorId take_completion(Runner& r, Job& job);
  ActorId book_answer(Runner& r, Job& job, SentActor sent, Completion done);
  void take_answers_after_loss(Runner& r, Job& job);
  void drain_pipeline(Runner& r, Job& job);
  ActorId place_again(Runner& r, Job& job, ActorId a, const std::vector<SlotId>& missing);
  bool run_plain(Runner& r, Job& job, ActorId a, SlotId& out_slot);
  bool run_in_place(Runner& r, Job& job, ActorId a, ActorId& next);
  // Whether actor `h` may run in place on r (run_in_place), its inputs then in r.input_bytes.
  bool in_place_actor(const Runner& r, const GraphState& s, const ActorHot& h) const;
  bool in_place_inputs(Runner& r, Job& job, const ActorHot& h);
  bool run_one_in_place(Runner& r, Job& job, ActorId a, ActorId& next);
  void run_chain_in_place(Runner& r, Job& job, ActorId a, ActorId& next);
  ActorId run_links(Runner& r, Job& job, ActorId a, ActorId& next);
  void before_in_place(GraphState& s, ActorId a, const ActorHot& h, const PlanData& out);
  void after_in_place(Runner& r, GraphState& s, const ActorHot& h, const PlanData& out);
  [[gnu::cold]] void failed_on_tile(const Runner& r, Job& job, ActorId a, std::string_view why,
                                    Status::Code code = Status::Code::kActorFailed);
  ActorId book_completion(Runner& r, Job& job, ActorId a, SlotId out_slot, DataTag tag);

  void push_inbox(Runner& target, ActorId a);
  ActorId take_inbox(Runner& victim, Job& job, unsigned taker);
  void mark(Job& job, std::string what, std::string detail, int tile);
  void report(Job& job, ExecutionStats& stats);  // stats and trace, after the run
  // The remote tiles' counts, and per remote tile its worker, host, loss and
  // this execution's bytes; `hosts` (a trace's tile_hosts) named by worker (engine.cpp).
  void report_remote(Job& job, ExecutionStats& stats, std::vector<std::string>* hosts);

  // Lost tiles (lost_tiles.cpp): take a tile out of service for good, and
  // recompute a value that lived only in a lost tile's slots.
  void lose_tile(Job& job, unsigned t);
  ActorId hand_on_from_lost(Runner& r, Job& job, ActorId a, bool ran = true);
  bool poisoned(Job& job, ActorId a, unsigned tile);  // counts tile `tile`, lost under `a`; true (and fails the job) at the limit
  bool recompute(Job& job, DataId d, TileStats& stats, TraceBuffer& trace);
  bool only_on_lost_tile(const Job& job, DataId d) const;
  // A tile is gone (lost, or dead though not yet declared); places kept for
  // joins that no worker filled do not count (their tile says lost()).
  bool any_tile_lost() const {
    for (unsigned t = 0; t < tiles(); ++t)
      if (!places_.absent(t) && gone(t)) return true;
    return false;
  }
  // Lost, or dead already though its runner has not told the engine yet.
  bool gone(unsigned t) const { return places_.lost(t) || tiles_[t]->lost(); }
  // Sends each tile the plan's actor table and this execution's fault configuration when they changed.
  Status configure_tiles(const Plan& plan, const ExecutionRequest& request);
  // The end-to-end check (Tile::checks_values): whether some tile checks
  // the values it sends and receives, or a worker that may join will.
  bool checks_values() const;
  void fail(Job& job, std::string message, Status::Code code = Status::Code::kInternal);
  bool finished(const Job& job) const;
  void wake_all(Job& job);
  void flush_completed(Runner& r, Job& job);

  Status start_remote_tiles();

  // Probation (probation.cpp): known-answer tests of the tiles on probation
  // not tested yet in this execution; each passed one serves again.
  void test_probation(Job& job);
  ActorId probe_actor(const Plan& plan) const;  // kNone: the plan has no actor fit to test a tile with
  bool known_answer_test(Job& job, unsigned t, ActorId a, std::span<const std::byte> answer);

  // Joins (joins.cpp): a worker welcomed after the start fills a place kept
  // for it; its tile's own runner (or execute(), between executions)
  // configures it and puts it in service, and under HEFT the unstarted part
  // of the schedule is made again for the tiles now in service.
  void note_join(unsigned worker);
  bool admit_joined(unsigned t, const Plan& plan, const ExecutionRequest& request, Job* job);  // job: null between executions
  bool in_service(unsigned t) const;
  unsigned tiles_in_view() const;           // places up to the last one a worker ever filled
  bool replannable(const Job& job) const;
  // HEFT adapting to a tile that falls behind (adaptive_heft.cpp).
  bool adapting(const Job& job) const;
  bool take_late(Runner& r, Job& job);
  std::chrono::nanoseconds next_look(const Job& job) const;
  void note_running(Runner& r, const Job& job, ActorId a, double clock) const;
  double planned_start(const Job& job, ActorId a) const;
  void note_done(Runner& r, const Job& job) const;
  const Schedule& orders(const Job& job) const;
  // The tile the current schedule gives actor `a` (kDriverTile: the driver):
  // a re-plan's, or the plan's (kept in ActorHot, not in Plan::heft).
  int scheduled_tile(const Job& job, ActorId a) const;
  void replan(Job& job);
  const Schedule* start_schedule(Job& job);  // null: the plan's own fits the tiles in service
  std::vector<bool> tiles_in_service() const;
  std::unique_ptr<Schedule> make_schedule(const Job& job, const std::vector<bool>& service) const;
  // Speculative copies of stragglers (speculation.cpp).
  bool book_once(Runner& r, Job& job, ActorId a, double seconds);  // false: another run of `a` was booked first
  bool already_booked(const Job& job, ActorId a) const;
  void note_sent(Runner& r, Job& job, ActorId a);
  void note_answered(Runner& r, Job& job);
  void note_unsent(Runner& r, Job& job);
  bool await_completion(Runner& r, Job& job);
  double estimate(const Job& job, ActorId a) const;
  double answer_budget(const Job& job, ActorId a) const;  // a worker's deadline for `a` (0: none of its own)
  bool inputs_without(const Job& job, ActorId a, unsigned v) const;
  ActorId find_straggler(Runner& r, Job& job);
  // Tile v fell behind and another tile copies or takes over its actor a:
  // counted (TileStats::straggled), and marked "straggler" once an execution.
  void note_straggler(Job& job, Runner& v, ActorId a);
  bool speculate_while_idle(Runner& r, Job& job);
  bool straggling_locked(const Job& job, const Runner& v, double now) const;
  bool straggling(Runner& r, Job& job);
  bool take_over(Runner& r, Job& job);
  // Walks `order` from the start, skipping claimed actors, until its end, an
  // abort or a new schedule (replan epoch other than `epoch`). With `chain`,
  // the runner whose run() may take the actors after one in place
  // (Runner::chaining), and the walk goes on after them.
  template <typename Wait, typename Run>
  void walk_order(Job& job, std::span<const ActorId> order, std::uint32_t epoch, Wait&& wait, Run&& run,
                  std::atomic<std::uint32_t>* at = nullptr, Runner* chain = nullptr);

  RuntimeOptions options_;
  RemoteTilesFactory remote_factory_;
  bool in_process_tiles_ = false;                    // wire mode: every tile's worker is a thread of this process (serve_tiles_in_process)
  std::unique_ptr<RemoteTiles> remote_;              // remote tiles only; outlives tiles_
  std::vector<WorkerTile*> worker_tiles_;            // per worker place: its tile in tiles_ (local_tiles() + place)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> traffic_seen_;  // per worker: bytes sent, received by the last report
  bool all_local_ = true;                            // every tile is a LocalTile called directly (the fast path may run)
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Tile*> tile_ptrs_;                     // the tiles' peers (a transfer's source)
  TileConfiguration configuration_;                  // the actor table and fault configuration each tile holds
  TilePlaces places_;                                // per place: in service, lost, kept for a join; lost votes
  ReplicaPlacement placement_{places_, EngineCalls(*this)};     // where replicas run, and work from a tile out of service
  Voting voting_{places_, placement_, EngineCalls(*this)};      // compare actors' votes, re-execution, quarantine
  MainMemory memory_{EngineCalls(*this)};                        // homes of the data nodes, moves between slots and homes
  SlotDirectory slots_{memory_, EngineCalls(*this)};             // each tile's slots: inputs placed, slots chosen
  std::atomic<bool> runners_ready_{false};           // runners_ is built: a join may wake them
  // Between executions: the schedule made for the tiles in service (and which).
  std::uint64_t replan_plan_ = 0;
  std::vector<bool> replan_service_;
  std::unique_ptr<Schedule> replan_cache_;
  std::vector<std::unique_ptr<Runner>> runners_;
  std::vector<std::thread> threads_;

  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> active_{0};
  std::atomic<bool> stop_{false};
  std::atomic<Job*> job_{nullptr};
  std::uint32_t execution_counter_ = 0;
  std::uint64_t probes_ = 0;                 // known-answer test runs so far (each its own fault decisions)
  std::vector<std::uint32_t> tested_in_;     // per place: the execution in which its last known-answer test ran

  Notifier steal_notifier_;   // idle stealing tiles
  DriverRole driver_;         // the thread that calls execute(): its queue, stats, trace
};

}  // namespace redflow::runtime
