// The parts of the Python module, one binding file each; module.cpp calls
// them in this order when Python imports redflow._redflow.
#pragma once
#include <pybind11/pybind11.h>

namespace redflow::python {

void bind_graph(pybind11::module_& m);     // graph_binding.cpp: Graph
void bind_registry(pybind11::module_& m);  // registry_binding.cpp: Registry, Python actors
void bind_runtime(pybind11::module_& m);   // runtime_binding.cpp: Runtime, LoadedGraph
void bind_spits(pybind11::module_& m);     // spits_binding.cpp: spits_run
void bind_client(pybind11::module_& m);    // client_binding.cpp: Client
void bind_worker(pybind11::module_& m);    // worker_binding.cpp: run_worker

}  // namespace redflow::python
