// Runtime and LoadedGraph: validation, schedules and state at load time;
// input checking, execution and output extraction per execute().
#include "redflow/runtime.hpp"

#include <unistd.h>

#include <algorithm>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

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
  if (o.tiles == 0) o.tiles = std::max(1u, std::thread::hardware_concurrency());
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

struct LoadedGraph::Impl {
  Runtime::Impl* runtime = nullptr;
  Graph graph;
  Registry registry;  // a copy: the plan points at its functions
  runtime::Plan plan;
  std::unique_ptr<runtime::GraphState> state;
  std::vector<std::span<const std::byte>> homes;
  // Found at load time so that execute() costs O(inputs + outputs), not a scan of every data node.
  std::map<std::string, DataId, std::less<>> input_ids;  // by name
  std::vector<DataId> output_ids;
  ExecutionStats last;
  ExecutionTrace trace;
};

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;
const RuntimeOptions& Runtime::options() const { return impl_->options; }

MachineModel Runtime::machine() const {
  MachineModel m;
  m.tiles = impl_->options.tiles;
  m.cores_per_tile = impl_->options.cores_per_tile;
  m.slots = impl_->options.slots;
  m.slot_bytes = impl_->options.slot_bytes;
  return m;
}

Result<LoadedGraph> Runtime::load(Graph graph, const Registry& registry) {
  if (impl_->options.slots < 2) return Status::InvalidArgument("--slots must be at least 2 (an input and an output), got " + std::to_string(impl_->options.slots));
  REDFLOW_RETURN_IF_ERROR(check_tile_memory(impl_->options));
  REDFLOW_RETURN_IF_ERROR(validate(graph, registry, impl_->options));
  auto g = std::make_unique<LoadedGraph::Impl>();
  g->runtime = impl_.get();
  g->graph = std::move(graph);
  g->registry = registry;
  Schedule heft = heft_schedule(g->graph, machine(), g->registry);
  g->plan = runtime::make_plan(g->graph, g->registry, machine(), std::move(heft));
  REDFLOW_RETURN_IF_ERROR(impl_->engine.start());
  try {
    g->state = impl_->engine.prepare(g->plan);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("cannot allocate main memory for the data nodes of graph '" + g->graph.name() + "'");
  }
  g->homes.resize(g->graph.data().size());
  for (DataId d = 0; d < g->graph.data().size(); ++d) {
    const DataNode& n = g->graph.data(d);
    if (n.kind == DataKind::kConstant) g->homes[d] = n.contents;
    if (n.kind == DataKind::kInput) g->input_ids.emplace(n.name, d);
    if (n.kind == DataKind::kOutput) g->output_ids.push_back(d);
  }
  return LoadedGraph(std::move(g));
}

LoadedGraph::LoadedGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoadedGraph::LoadedGraph(LoadedGraph&&) noexcept = default;
LoadedGraph& LoadedGraph::operator=(LoadedGraph&&) noexcept = default;
LoadedGraph::~LoadedGraph() = default;

const Graph& LoadedGraph::graph() const { return impl_->graph; }
const Schedule& LoadedGraph::heft_schedule() const { return impl_->plan.heft; }
const ExecutionStats& LoadedGraph::last_stats() const { return impl_->last; }
const Graph& LoadedGraph::executed_graph(Redundancy) const { return impl_->graph; }
const Schedule& LoadedGraph::heft_schedule(Redundancy) const { return impl_->plan.heft; }
const ExecutionTrace& LoadedGraph::last_trace() const { return impl_->trace; }

Result<Outputs> LoadedGraph::execute(const Inputs& inputs, const ExecuteOptions& options) {
  Impl& g = *impl_;
  if (options.redundancy.value_or(g.runtime->options.redundancy) != Redundancy::kNone)
    return Status::InvalidArgument("redundancy is not implemented yet");
  for (const auto& [name, bytes] : inputs) {
    auto it = g.input_ids.find(name);
    if (it == g.input_ids.end()) return Status::InvalidArgument("graph '" + g.graph.name() + "' has no input data node '" + name + "'");
    const DataId d = it->second;
    if (bytes.size() != g.graph.data(d).bytes)
      return Status::InvalidArgument("input '" + name + "' has " + std::to_string(bytes.size()) + " bytes, its data node declares " + std::to_string(g.graph.data(d).bytes));
    g.homes[d] = bytes;
  }
  if (inputs.size() != g.input_ids.size()) {
    // Names are unique, so some input was not given: name the first in graph order.
    DataId missing = ~DataId{0};
    for (const auto& [name, d] : g.input_ids)
      if (inputs.find(name) == inputs.end()) missing = std::min(missing, d);
    return Status::InvalidArgument("input data node '" + g.graph.data(missing).name + "' was not given");
  }
  std::lock_guard<std::mutex> lock(g.runtime->execution_mutex);
  REDFLOW_RETURN_IF_ERROR(g.runtime->engine.execute(g.plan, *g.state, g.runtime->options.scheduler, g.homes, g.last));
  Outputs out;
  for (DataId d : g.output_ids) {
    auto bytes = g.runtime->engine.output(*g.state, d);
    out.emplace(g.graph.data(d).name, std::vector<std::byte>(bytes.begin(), bytes.end()));
  }
  return out;
}

std::string ExecutionStats::to_json() const {
  auto tile_json = [](const TileStats& t) {
    return nlohmann::json{{"busy_s", t.busy_s}, {"actors", t.actors}, {"transfers_in", t.transfers_in},
                          {"steals", t.steals}, {"displacements", t.displacements}};
  };
  nlohmann::json j{{"makespan_s", makespan_s}, {"actors_executed", actors_executed}, {"transfers", transfers},
                   {"transfer_bytes", transfer_bytes}, {"steals", steals}, {"displacements", displacements},
                   {"scheduler", scheduler}, {"driver", tile_json(driver)}};
  j["tiles"] = nlohmann::json::array();
  for (const auto& t : tiles) j["tiles"].push_back(tile_json(t));
  return j.dump(2);
}

}  // namespace redflow
