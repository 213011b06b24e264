// Runtime and LoadedGraph: validation, schedules and state at load time;
// input checking, execution and output extraction per execute().
#include "redflow/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fault/injector.hpp"
#include "runtime/engine.hpp"
#include "runtime/plan.hpp"
#include "schedule/heft.hpp"

namespace redflow {

const char* to_string(Scheduler s) { return s == Scheduler::kHeft ? "heft" : "steal"; }

namespace {

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : std::size_t{1} << 33;
}

// Tile-local memory is real memory: refuse a budget larger than the machine
// before reserving it (sanitizers abort on impossible allocations instead of
// throwing, and an overcommitted reservation would fail later, mid-run).
Status check_tile_memory(const RuntimeOptions& o) {
  const std::size_t limit = physical_memory_bytes();
  const std::size_t per_tile_max = o.slots == 0 ? limit : limit / o.slots;
  const bool fits = o.slot_bytes <= per_tile_max && (o.tiles == 0 || o.slot_bytes * o.slots <= limit / o.tiles);
  if (fits) return Status::Ok();
  return Status::ResourceExhausted("tile memory of " + std::to_string(o.tiles) + " tiles x " + std::to_string(o.slots) +
                                   " slots x " + std::to_string(o.slot_bytes) + " bytes exceeds this machine's " +
                                   std::to_string(limit) + " bytes of memory (lower --tiles, --slots or --slot-bytes)");
}

RuntimeOptions resolve(RuntimeOptions o) {
  if (o.tiles == 0) o.tiles = o.cluster.listen.empty() ? std::max(1u, std::thread::hardware_concurrency()) : std::max(1u, o.cluster.min_workers);
  if (o.cores_per_tile == 0) o.cores_per_tile = 1;
  if (o.driver_bytes == 0) o.driver_bytes = physical_memory_bytes() / 2;
  return o;
}

}  // namespace

struct Runtime::Impl {
  explicit Impl(const RuntimeOptions& o) : options(resolve(o)), engine(options) {}
  RuntimeOptions options;
  runtime::Engine engine;
  std::mutex execution_mutex;  // one execution at a time, as in the paper
};

// One redundancy configuration of a loaded graph: the transformed graph
// (Fig. 3), its plan and HEFT schedule, and its execution state (main memory
// for every replica's data). The runtime's configuration is built at load;
// the others when first used, or at load too with eager_schedules.
struct Variant {
  Status status;  // why this configuration cannot run here, if it cannot
  std::vector<UnprotectedActor> unprotected;  // actors it asks to protect that run once on the driver
  std::optional<Graph> owned;    // the transformed graph, when replicas change it
  const Graph* graph = nullptr;  // what executes: `owned` or the user's graph
  runtime::Plan plan;
  // The whole HEFT schedule, computed when heft_schedule() first asks: a
  // work-stealing plan has none, a HEFT plan keeps only the orders it runs.
  std::optional<Schedule> heft;
  std::unique_ptr<runtime::GraphState> state;
};

struct LoadedGraph::Impl {
  Runtime::Impl* runtime = nullptr;
  MachineModel machine;
  Graph graph;
  Registry registry;  // a copy: the plans point at its functions
  // Built on first use (variant()); null until then. Built variants never
  // move or change (but for their state, which only execute() touches).
  mutable std::array<std::unique_ptr<Variant>, std::size(kAllRedundancies)> variants;
  mutable std::mutex variants_mutex;  // building a variant: accessors may race with execute()
  // Found at load time so that execute() costs O(inputs + outputs), not a
  // scan of every data node, and kept per given or output node, not per data
  // node (at 10^6 nodes a per-node array is 8-16 MB, and copying it per
  // execution is O(nodes)).
  std::vector<DataId> given_ids;                       // input and constant nodes, in data id order
  std::vector<std::span<const std::byte>> given_bytes; // per given_ids entry: this execution's bytes
  std::map<std::string, std::size_t, std::less<>> input_ids;  // by name: index into given_ids
  std::vector<DataId> output_ids;                      // in data id order
  std::vector<std::byte*> output_to;  // per output_ids entry: execute_into()'s buffer
  ExecutionStats last;
  ExecutionTrace trace;
  std::uint64_t executions = 0;  // numbers executions for reproducible fault injection

  // Configuration `r`, built (executed graph, plan, schedule) if it was not yet.
  Variant& variant(Redundancy r) const;
  // Its HEFT schedule: the plan's, or computed now for a work-stealing runtime.
  const Schedule& schedule(Variant& v) const;
  bool built(Redundancy r) const {
    std::lock_guard<std::mutex> lock(variants_mutex);
    return variants[static_cast<std::size_t>(r)] != nullptr;
  }
  Status prepare(Redundancy r);
};

namespace {

// Builds the executed graph, schedule and plan of one configuration.
// True when `r` (or an actor's own setting) asks for replicas on distinct
// tiles: only then does the executed graph differ from the user's.
bool needs_replicas(const Graph& graph, Redundancy r) {
  if (replicas_on_distinct_tiles(r)) return true;
  for (const ActorNode& a : graph.actors())
    if (a.redundancy && replicas_on_distinct_tiles(*a.redundancy)) return true;
  return false;
}

// `with_heft`: compute the HEFT schedule into the plan (the HEFT scheduler
// runs it; work stealing does not need it).
Status build_variant(Variant& v, const Graph& graph, const Registry& registry, Redundancy r, const MachineModel& m,
                     bool require_protection, bool with_heft) {
  v.unprotected = unprotected_actors(graph, r, m, registry);
  if (require_protection && !v.unprotected.empty())
    return Status::InvalidArgument(describe_unprotected(v.unprotected, r) +
                                   " Protection is required (--require-protection): raise --slot-bytes or --slots, or split the actor's data.");
  if (needs_replicas(graph, r)) {
    auto transformed = apply_redundancy(graph, r, m, registry);
    if (!transformed.ok()) return transformed.status();
    v.owned = std::move(*transformed);
    // Constants stay in the user's graph; the copy keeps only their sizes.
    for (DataId d = 0; d < v.owned->data().size(); ++d) v.owned->mutable_data(d).contents = {};
    v.graph = &*v.owned;
  } else {
    // *-same and none execute the user's graph as it is; the plan knows the runs.
    for (ActorId a = 0; a < graph.actors().size(); ++a) {
      const ActorNode& node = graph.actor(a);
      if (node.redundancy && *node.redundancy != Redundancy::kNone && runs_on_driver(graph, a, m, registry))
        return Status::InvalidGraph("actor '" + node.name + "' asks for redundancy=" + to_string(*node.redundancy) +
                                    " but runs on the driver (a special actor, or data larger than a slot), which never replicates actors");
    }
    v.graph = &graph;
  }
  const Graph& g = *v.graph;
  Schedule heft = with_heft ? heft_schedule(g, m, registry) : Schedule{};
  v.plan = runtime::make_plan(g, registry, m, std::move(heft), replicas_on_distinct_tiles(r) ? Redundancy::kNone : r);
  // *-same needs a slot for every run's result besides the inputs (section 5.2).
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    const runtime::PlanActor& pa = v.plan.actors[a];
    if (pa.runs <= 1) continue;
    const std::size_t distinct = g.actor(a).distinct_inputs();
    if (distinct + pa.runs > m.slots)
      return Status::InvalidArgument("actor '" + g.actor(a).name + "' under " + std::to_string(pa.runs) + "x-same needs " +
                                     std::to_string(distinct + pa.runs) + " slots (its inputs and " + std::to_string(pa.runs) +
                                     " results) but tiles have " + std::to_string(m.slots) + " (--slots)");
  }
  // Replicas on distinct tiles need that many tiles.
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    const runtime::PlanActor& pa = v.plan.actors[a];
    const runtime::ActorHot& hot = v.plan.hot[a];
    if (!pa.is_vote || hot.input_count <= m.tiles) continue;
    return Status::InvalidArgument("actor '" + std::string(v.plan.original(a)) + "' under " + std::to_string(hot.input_count) + "x-diff needs " +
                                   std::to_string(hot.input_count) + " compute tiles for its replicas, but the runtime has " +
                                   std::to_string(m.tiles) + " (--tiles)");
  }
  return Status::Ok();
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;
const RuntimeOptions& Runtime::options() const { return impl_->options; }

MachineModel Runtime::machine() const { return impl_->engine.machine(); }

std::vector<unsigned> Runtime::quarantined_tiles() const { return impl_->engine.quarantined_tiles(); }

namespace {

// What load() checks before it validates a graph: a usable machine.
Status check_options(const RuntimeOptions& o) {
  if (o.slots < 2) return Status::InvalidArgument("--slots must be at least 2 (an input and an output), got " + std::to_string(o.slots));
  if (o.crash_limit < 1) return Status::InvalidArgument("--crash-limit must be at least 1 (the tiles an actor may lose before it is poisoned), got 0");
  return check_tile_memory(o);
}

// `registry` plus the redundancy transformation's compare actor, whatever registry the user built.
Registry with_compare(const Registry& registry) {
  Registry out = registry;
  if (out.find("rf.compare") == nullptr) out.add("rf.compare", *Registry::with_builtins().find("rf.compare"));
  return out;
}

}  // namespace

Status Runtime::check(const Graph& graph, const Registry& registry) const {
  REDFLOW_RETURN_IF_ERROR(check_options(impl_->options));
  const Registry reg = with_compare(registry);
  REDFLOW_RETURN_IF_ERROR(validate(graph, reg, impl_->options));
  REDFLOW_RETURN_IF_ERROR(registry.status());
  Variant v;
  return build_variant(v, graph, reg, impl_->options.redundancy, machine(), impl_->options.require_protection, false);
}

Result<LoadedGraph> Runtime::load(Graph graph, const Registry& registry) {
  REDFLOW_RETURN_IF_ERROR(check_options(impl_->options));
  REDFLOW_RETURN_IF_ERROR(registry.status());
  auto g = std::make_unique<LoadedGraph::Impl>();
  g->runtime = impl_.get();
  g->machine = machine();
  g->registry = with_compare(registry);
  REDFLOW_RETURN_IF_ERROR(validate(graph, g->registry, impl_->options));
  g->graph = std::move(graph);
  // The runtime's configuration now, so a graph it cannot run fails here.
  // The paper computes every configuration's schedule at load (section 5.1);
  // that costs five schedules, three of them of a graph two or three times
  // larger, so the others wait for their first use unless asked for.
  if (Status s = g->variant(impl_->options.redundancy).status; !s.ok()) return s;
  if (impl_->options.eager_schedules)
    for (Redundancy r : kAllRedundancies) g->variant(r);
  REDFLOW_RETURN_IF_ERROR(impl_->engine.start());
  REDFLOW_RETURN_IF_ERROR(impl_->engine.check_remote_functions(g->graph, g->registry));
  for (DataId d = 0; d < g->graph.data().size(); ++d) {
    const DataNode& n = g->graph.data(d);
    if (n.kind == DataKind::kInput) g->input_ids.emplace(n.name, g->given_ids.size());
    if (n.kind == DataKind::kInput || n.kind == DataKind::kConstant) {
      g->given_ids.push_back(d);
      g->given_bytes.push_back(n.contents);  // a constant's bytes; an input's come with each execution
    }
    if (n.kind == DataKind::kOutput) g->output_ids.push_back(d);
  }
  g->output_to.assign(g->output_ids.size(), nullptr);
  LoadedGraph loaded(std::move(g));
  // Main memory for the configuration the runtime starts with, so a graph too
  // big for it fails here (and, eager, for every configuration that can run).
  REDFLOW_RETURN_IF_ERROR(loaded.impl_->prepare(impl_->options.redundancy));
  if (impl_->options.eager_schedules)
    for (Redundancy r : kAllRedundancies)
      if (loaded.impl_->variant(r).status.ok()) REDFLOW_RETURN_IF_ERROR(loaded.impl_->prepare(r));
  return loaded;
}

LoadedGraph::LoadedGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoadedGraph::LoadedGraph(LoadedGraph&&) noexcept = default;
LoadedGraph& LoadedGraph::operator=(LoadedGraph&&) noexcept = default;
LoadedGraph::~LoadedGraph() = default;

Variant& LoadedGraph::Impl::variant(Redundancy r) const {
  std::lock_guard<std::mutex> lock(variants_mutex);
  std::unique_ptr<Variant>& v = variants[static_cast<std::size_t>(r)];
  if (!v) {
    auto built = std::make_unique<Variant>();
    const RuntimeOptions& o = runtime->options;
    built->status = build_variant(*built, graph, registry, r, machine, o.require_protection,
                                  o.scheduler == Scheduler::kHeft || o.eager_schedules);
    v = std::move(built);
  }
  return *v;
}

const Graph& LoadedGraph::graph() const { return impl_->graph; }
const ExecutionStats& LoadedGraph::last_stats() const { return impl_->last; }
const ExecutionTrace& LoadedGraph::last_trace() const { return impl_->trace; }
const std::vector<UnprotectedActor>& LoadedGraph::unprotected_actors(Redundancy r) const { return impl_->variant(r).unprotected; }
Result<const Graph*> LoadedGraph::executed_graph(Redundancy r) const {
  const Variant& v = impl_->variant(r);
  if (!v.status.ok()) return v.status;
  return v.graph;
}
const Schedule& LoadedGraph::Impl::schedule(Variant& v) const {
  // Computed again rather than kept from load: the plan keeps only the
  // orders it runs (Plan::heft), and HEFT gives the same schedule each time.
  std::lock_guard<std::mutex> lock(variants_mutex);
  if (!v.heft) v.heft = redflow::heft_schedule(*v.graph, machine, registry);
  return *v.heft;
}
const Schedule& LoadedGraph::heft_schedule() const { return impl_->schedule(impl_->variant(impl_->runtime->options.redundancy)); }
Result<const Schedule*> LoadedGraph::heft_schedule(Redundancy r) const {
  Variant& v = impl_->variant(r);
  if (!v.status.ok()) return v.status;
  return &impl_->schedule(v);
}
Status LoadedGraph::usable(Redundancy r) const { return impl_->variant(r).status; }
bool LoadedGraph::scheduled(Redundancy r) const { return impl_->built(r); }
bool LoadedGraph::prepared(Redundancy r) const {
  if (!impl_->built(r)) return false;
  std::lock_guard<std::mutex> lock(impl_->runtime->execution_mutex);  // execute() allocates states
  return impl_->variant(r).state != nullptr;
}

Status LoadedGraph::Impl::prepare(Redundancy r) {
  Variant& v = variant(r);
  if (!v.status.ok()) return v.status;
  if (v.state) return Status::Ok();
  try {
    v.state = runtime->engine.prepare(v.plan);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("cannot allocate main memory for the data nodes of graph '" + graph.name() + "' under redundancy " +
                                     to_string(r));
  }
  // The engine takes given bytes and output buffers in the order of the
  // state's lists: the transformation keeps the user's data ids of inputs,
  // constants and outputs and adds none.
  if (v.state->given != given_ids || v.state->outputs != output_ids)
    return Status::Internal("internal error: the inputs, constants or outputs of graph '" + graph.name() + "' under redundancy " +
                            to_string(r) + " are not the user's");
  return Status::Ok();
}

Result<Outputs> LoadedGraph::execute(const Inputs& inputs, const ExecuteOptions& options) {
  Outputs out;
  OutputBuffers buffers;
  for (DataId d : impl_->output_ids) {
    const DataNode& n = impl_->graph.data(d);
    auto& bytes = out[n.name];
    bytes.resize(n.bytes);
    buffers.emplace(n.name, std::span<std::byte>(bytes));
  }
  REDFLOW_RETURN_IF_ERROR(execute_into(inputs, buffers, options));
  return out;
}

namespace {
bool overlap(std::span<const std::byte> a, std::span<const std::byte> b) {
  if (a.empty() || b.empty()) return false;
  return a.data() < b.data() + b.size() && b.data() < a.data() + a.size();
}
}  // namespace

Status LoadedGraph::execute_into(const Inputs& inputs, const OutputBuffers& outputs, const ExecuteOptions& options) {
  Impl& g = *impl_;
  const RuntimeOptions& ro = g.runtime->options;
  const Redundancy r = options.redundancy.value_or(ro.redundancy);
  const FaultInjection& faults = options.faults ? *options.faults : ro.faults;
  REDFLOW_RETURN_IF_ERROR(check_fault_tiles(faults, ro.tiles));
  // Before the homes are written: they are this execution's, and a second
  // thread executing the same graph must not swap its inputs in meanwhile.
  std::lock_guard<std::mutex> lock(g.runtime->execution_mutex);
  for (const auto& [name, bytes] : inputs) {
    auto it = g.input_ids.find(name);
    if (it == g.input_ids.end()) return Status::InvalidArgument("graph '" + g.graph.name() + "' has no input data node '" + name + "'");
    const DataId d = g.given_ids[it->second];
    if (bytes.size() != g.graph.data(d).bytes)
      return Status::InvalidArgument("input '" + name + "' has " + std::to_string(bytes.size()) + " bytes, its data node declares " + std::to_string(g.graph.data(d).bytes));
    g.given_bytes[it->second] = bytes;
  }
  if (inputs.size() != g.input_ids.size()) {
    // Names are unique, so some input was not given: name the first in graph order.
    DataId missing = ~DataId{0};
    for (const auto& [name, i] : g.input_ids)
      if (inputs.find(name) == inputs.end()) missing = std::min(missing, g.given_ids[i]);
    return Status::InvalidArgument("input data node '" + g.graph.data(missing).name + "' was not given");
  }
  for (DataId d : g.output_ids) {
    const DataNode& n = g.graph.data(d);
    auto it = outputs.find(n.name);
    if (it == outputs.end()) return Status::InvalidArgument("no buffer was given for output data node '" + n.name + "'");
    if (it->second.size() != n.bytes)
      return Status::InvalidArgument("buffer for output '" + n.name + "' has " + std::to_string(it->second.size()) +
                                     " bytes, its data node declares " + std::to_string(n.bytes));
    for (const auto& [name, bytes] : inputs)
      if (overlap(it->second, bytes)) return Status::InvalidArgument("buffer for output '" + n.name + "' overlaps input '" + name + "'");
    for (const auto& [name, other] : outputs)
      if (name != n.name && overlap(it->second, other))
        return Status::InvalidArgument("buffers for outputs '" + n.name + "' and '" + name + "' overlap");
  }
  if (outputs.size() != g.output_ids.size()) {
    for (const auto& [name, bytes] : outputs) {
      const auto id = g.graph.find_data(name);
      if (!id || g.graph.data(*id).kind != DataKind::kOutput)
        return Status::InvalidArgument("graph '" + g.graph.name() + "' has no output data node '" + name + "'");
    }
  }
  REDFLOW_RETURN_IF_ERROR(g.prepare(r));
  Variant& v = g.variant(r);
  std::optional<fault::FaultInjector> injector;
  if (faults.any()) injector.emplace(faults);
  runtime::ExecutionRequest request;
  request.scheduler = ro.scheduler;
  request.faults = injector ? &*injector : nullptr;
  request.fault_spec = &faults;
  request.fault_execution = ++g.executions;
  request.trace = options.trace.value_or(ro.trace) ? &g.trace : nullptr;
  request.redundancy = to_string(r);
  request.time_actors = options.time_actors.value_or(ro.time_actors);
  if (!request.trace) g.trace = ExecutionTrace{};
  for (std::size_t i = 0; i < g.output_ids.size(); ++i) g.output_to[i] = outputs.find(g.graph.data(g.output_ids[i]).name)->second.data();
  if (Status s = g.runtime->engine.execute(v.plan, *v.state, request, g.given_bytes, g.output_to, g.last); !s.ok()) {
    // The trace of a failed execution is the one a user wants most: keep it, marked.
    if (request.trace) g.trace.failure = s.ToString();
    return s;
  }
  g.last.unprotected_actors = v.unprotected.size();
  for (std::size_t i = 0; i < g.output_ids.size(); ++i) {
    // Written in place, except a 0-byte node and a split's range left zero-copy (an aligned one).
    const auto bytes = g.runtime->engine.output(*v.state, g.output_ids[i]);
    if (bytes.data() != g.output_to[i] && !bytes.empty()) std::memcpy(g.output_to[i], bytes.data(), bytes.size());
  }
  return Status::Ok();
}

std::string ExecutionStats::to_json() const {
  auto tile_json = [](const TileStats& t) {
    return nlohmann::json{{"busy_s", t.busy_s}, {"checksum_s", t.checksum_s}, {"actors", t.actors}, {"transfers_in", t.transfers_in},
                          {"transfers_out", t.transfers_out},
                          {"steals", t.steals}, {"displacements", t.displacements}, {"lost_votes", t.lost_votes},
                          {"quarantined", t.quarantined}, {"on_probation", t.on_probation}, {"worker", t.worker}, {"host", t.host}, {"lost", t.lost},
                          {"bytes_sent", t.bytes_sent}, {"bytes_received", t.bytes_received}, {"peer_bytes_in", t.peer_bytes_in}, {"corrupted_transfers", t.corrupted_transfers},
                          {"most_in_flight", t.most_in_flight}, {"joined", t.joined}, {"speculative", t.speculative}, {"straggled", t.straggled}};
  };
  nlohmann::json j{{"makespan_s", makespan_s}, {"actors_executed", actors_executed}, {"transfers", transfers},
                   {"transfer_bytes", transfer_bytes}, {"steals", steals}, {"displacements", displacements},
                   {"scheduler", scheduler}, {"redundancy", redundancy}, {"injected_faults", injected_faults},
                   {"detected_faults", detected_faults}, {"reexecutions", reexecutions},
                   {"lost_tiles", lost_tiles}, {"recomputed_actors", recomputed_actors}, {"joined_tiles", joined_tiles}, {"replans", replans}, {"speculative_copies", speculative_copies}, {"speculative_wins", speculative_wins}, {"abandoned", abandoned}, {"taken_over", taken_over}, {"late_messages", late_messages}, {"refused_messages", refused_messages}, {"corrupted_transfers", corrupted_transfers}, {"batched_messages", batched_messages},
                   {"quarantined_tiles", quarantined_tiles}, {"probation_tiles", probation_tiles}, {"reinstated_tiles", reinstated_tiles},
                   {"probation_tests", probation_tests}, {"skipped_replicas", skipped_replicas}, {"degraded", degraded()},
                   {"unprotected_actors", unprotected_actors}, {"driver", tile_json(driver)}};
  j["tiles"] = nlohmann::json::array();
  for (const auto& t : tiles) j["tiles"].push_back(tile_json(t));
  return j.dump(2);
}

}  // namespace redflow
