// redflow.Runtime and redflow.LoadedGraph: the driver and its tiles, a graph
// loaded once and executed many times with NumPy inputs. Inputs are read in
// place (the driver copies them into tile slots, as for every caller);
// outputs come back as arrays over the bytes their producers wrote
// (execute) or are written straight into the caller's arrays
// (execute_into): no copy at the boundary either way. The GIL is released
// while an execution runs, so Python actors on the tiles can take it.
#include <pybind11/stl.h>

#include <mutex>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/runtime.hpp"
#include "redflow/visualize.hpp"

namespace redflow::python {
namespace {

Scheduler scheduler_named(const std::string& text) {
  if (text == "heft") return Scheduler::kHeft;
  if (text == "steal") return Scheduler::kSteal;
  throw py::value_error("scheduler '" + text + "': expected heft or steal");
}

FaultInjection faults_from(const std::vector<std::string>& specs) {
  FaultInjection faults;
  for (const std::string& spec : specs) raise_if_error(parse_fault_spec(spec, faults));
  return faults;
}

// The runtime with the registry its loaded graphs run: a LoadedGraph keeps
// this alive (pybind11 keep_alive), so neither dies under an execution.
struct PyRuntime {
  std::unique_ptr<Runtime> runtime;
};

// The data node `name` of `g`, which must be of `kind`, and `value` as an
// array; KeyError or TypeError naming it otherwise.
std::pair<const DataNode*, py::array> node_and_array(const Graph& g, const std::string& name, const py::handle& value, DataKind kind) {
  const char* role = to_string(kind);
  const auto id = g.find_data(name);
  if (!id || g.data(*id).kind != kind) throw py::key_error("'" + name + "' is not an " + role + " of graph '" + g.name() + "'");
  py::array array = py::array::ensure(value);
  if (!array) throw py::type_error(std::string(role) + " '" + name + "' is not an array: " + std::string(py::repr(value)));
  return {&g.data(*id), std::move(array)};
}

// The inputs of an execution, checked against the graph's input nodes and
// held as views of the caller's arrays (which the caller's dict keeps alive).
Inputs inputs_of(const Graph& g, const py::dict& given) {
  Inputs inputs;
  for (auto [key, value] : given) {
    const std::string name = py::cast<std::string>(key);
    const auto [node, array] = node_and_array(g, name, value, DataKind::kInput);
    inputs.emplace(name, bytes_of(array, *node, "input '" + name + "'"));
  }
  return inputs;
}

ExecuteOptions execute_options(std::optional<std::string> redundancy, std::optional<std::vector<std::string>> inject,
                               std::optional<bool> trace) {
  ExecuteOptions o;
  if (redundancy) o.redundancy = redundancy_named(*redundancy);
  if (inject) o.faults = faults_from(*inject);
  o.trace = trace;
  return o;
}

py::object stats_of(const LoadedGraph& loaded) {
  return py::module_::import("json").attr("loads")(loaded.last_stats().to_json());
}

}  // namespace

void bind_runtime(py::module_& m) {
  py::class_<PyRuntime>(m, "Runtime", "The driver and its compute tiles on this machine (the embedded default).")
      .def(py::init([](unsigned tiles, const std::string& scheduler, const std::string& redundancy, unsigned slots,
                       std::size_t slot_bytes, unsigned cores_per_tile, std::uint64_t seed, const std::vector<std::string>& inject,
                       bool trace, unsigned quarantine_after, unsigned crash_limit, const std::string& listen, unsigned workers,
                       double wait_s, const std::string& key_file, const std::string& authorized_keys_file, py::object on_listening) {
             RuntimeOptions o;
             o.tiles = tiles;
             o.scheduler = scheduler_named(scheduler);
             o.redundancy = redundancy_named(redundancy);
             o.slots = slots;
             o.slot_bytes = slot_bytes;
             o.cores_per_tile = cores_per_tile;
             o.seed = seed;
             o.faults = faults_from(inject);
             o.trace = trace;
             o.quarantine_after = quarantine_after;
             o.crash_limit = crash_limit;
             o.cluster.listen = listen;
             o.cluster.min_workers = workers;
             o.cluster.wait_s = wait_s;
             o.cluster.key_file = key_file;
             o.cluster.authorized_keys_file = authorized_keys_file;
             if (!listen.empty()) o.tiles += workers;  // `tiles` counts local and remote tiles together
             if (!on_listening.is_none()) {
               o.cluster.on_listening = on_listening_callback(std::move(on_listening), "redflow.Runtime on_listening");
             }
             return PyRuntime{std::make_unique<Runtime>(std::move(o))};
           }),
           py::kw_only(), py::arg("tiles") = 0, py::arg("scheduler") = "heft", py::arg("redundancy") = "none", py::arg("slots") = 16,
           py::arg("slot_bytes") = std::size_t{8} << 20, py::arg("cores_per_tile") = 1, py::arg("seed") = 1,
           py::arg("inject") = std::vector<std::string>{}, py::arg("trace") = false, py::arg("quarantine_after") = 3,
           py::arg("crash_limit") = 3, py::arg("listen") = "", py::arg("workers") = 0, py::arg("wait_s") = 30.0, py::arg("key_file") = "",
           py::arg("authorized_keys_file") = "", py::arg("on_listening") = py::none(),
           "tiles: local compute tiles (0: one per hardware thread); scheduler: heft or steal; redundancy: none, 2x-same, "
           "3x-same, 2x-diff, 3x-diff; inject: fault specs (\"bitflip:p=0.01,seed=7\", \"faulty-tile:1\", ...); listen and "
           "workers: wait for that many `redflow worker --connect` or `python3 -m redflow.worker` processes (docs/remote.md); "
           "on_listening(endpoint) is called once the driver listens (\"tcp://127.0.0.1:*\" picks a free port): start them there.")
      .def(
          "load",
          [](PyRuntime& self, const Graph& graph, const Registry& registry) {
            Result<LoadedGraph> loaded = [&] {
              py::gil_scoped_release release;  // load may wait for workers
              return self.runtime->load(graph, registry);
            }();
            return value_or_raise(std::move(loaded));
          },
          py::arg("graph"), py::arg("registry"), py::keep_alive<0, 1>(), py::keep_alive<0, 3>(),
          "Validates the graph against the registry, schedules it and allocates its state; raises redflow.Error naming "
          "what is wrong.")
      .def(
          "check", [](const PyRuntime& self, const Graph& graph, const Registry& registry) { raise_if_error(self.runtime->check(graph, registry)); },
          py::arg("graph"), py::arg("registry"))
      .def_property_readonly("tiles", [](const PyRuntime& self) { return self.runtime->options().tiles; })
      .def_property_readonly("quarantined_tiles", [](const PyRuntime& self) { return self.runtime->quarantined_tiles(); });

  py::class_<LoadedGraph>(m, "LoadedGraph", "A validated, scheduled graph: execute it many times.")
      .def(
          "execute",
          [](LoadedGraph& self, const py::dict& inputs, std::optional<std::string> redundancy,
             std::optional<std::vector<std::string>> inject, std::optional<bool> trace) {
            const Inputs in = inputs_of(self.graph(), inputs);
            const ExecuteOptions options = execute_options(std::move(redundancy), std::move(inject), trace);
            Result<Outputs> out = [&] {
              py::gil_scoped_release release;
              return self.execute(in, options);
            }();
            Outputs values = value_or_raise(std::move(out));
            py::dict result;
            for (auto& [name, bytes] : values) {
              const auto id = self.graph().find_data(name);
              result[py::str(name)] = array_owning(std::move(bytes), id ? self.graph().data(*id).type : ElementType::kNone);
            }
            return result;
          },
          py::arg("inputs") = py::dict(), py::kw_only(), py::arg("redundancy") = py::none(), py::arg("inject") = py::none(),
          py::arg("trace") = py::none(),
          "Runs the graph once on `inputs` ({name: array}); returns {output name: 1-D array} over the bytes the producers "
          "wrote. redundancy and inject override the runtime's for this execution.")
      .def(
          "execute_into",
          [](LoadedGraph& self, const py::dict& inputs, const py::dict& outputs, std::optional<std::string> redundancy,
             std::optional<std::vector<std::string>> inject) {
            const Graph& g = self.graph();
            const Inputs in = inputs_of(g, inputs);
            OutputBuffers buffers;
            for (auto [key, value] : outputs) {
              const std::string name = py::cast<std::string>(key);
              const auto [node, array] = node_and_array(g, name, value, DataKind::kOutput);
              buffers.emplace(name, writable_bytes_of(array, *node, "output '" + name + "'"));
            }
            const ExecuteOptions options = execute_options(std::move(redundancy), std::move(inject), std::nullopt);
            Status status;
            {
              py::gil_scoped_release release;
              status = self.execute_into(in, buffers, options);
            }
            raise_if_error(status);
          },
          py::arg("inputs"), py::arg("outputs"), py::kw_only(), py::arg("redundancy") = py::none(), py::arg("inject") = py::none(),
          "Runs the graph once and writes each output straight into the caller's array ({name: array}, every output once).")
      .def_property_readonly("stats", &stats_of, "The last execution's statistics (docs/runtime.md, \"Stats JSON\") as a dict.")
      .def_property_readonly(
          "trace",
          [](const LoadedGraph& self) { return py::module_::import("json").attr("loads")(to_chrome_trace(self.last_trace())); },
          "The last execution as a Chrome trace (a dict: json.dump it and open it in ui.perfetto.dev); its events are "
          "empty unless the runtime or the execution had trace=True.")
      .def_property_readonly("graph", &LoadedGraph::graph, py::return_value_policy::reference_internal)
      .def(
          "executed_graph",
          [](const LoadedGraph& self, const std::string& redundancy) { return *value_or_raise(self.executed_graph(redundancy_named(redundancy))); },
          py::arg("redundancy"), "The graph as executed under a configuration (replicas and compare actors for *-diff).")
      .def(
          "unprotected_actors",
          [](const LoadedGraph& self, const std::string& redundancy) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const UnprotectedActor& a : self.unprotected_actors(redundancy_named(redundancy))) out.emplace_back(a.name, a.reason);
            return out;
          },
          py::arg("redundancy"));
}

}  // namespace redflow::python
