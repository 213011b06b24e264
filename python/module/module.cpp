// redflow._redflow: the compiled part of the Python package (python/redflow/
// adds the delayed-style API on top). docs/python.md shows how to use it.
#include <dlfcn.h>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/redundancy.hpp"

namespace {

// Python loads an extension with RTLD_LOCAL, and with it libredflow.so, so
// an actor plugin dlopen()ed later (Registry.load_plugin) would not find
// the Registry::add it calls. Loading the library again with RTLD_GLOBAL
// makes its symbols visible to such plugins.
void make_library_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&redflow::replica_count), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

}  // namespace

PYBIND11_MODULE(_redflow, m) {
  namespace py = pybind11;
  m.doc() = "redflow: coarse-grain dataflow graphs with redundancy, from Python (docs/python.md)";
  make_library_global();
  redflow::python::define_error(m);
  redflow::python::bind_graph(m);
  redflow::python::bind_registry(m);
  redflow::python::bind_runtime(m);
  redflow::python::bind_spits(m);
  redflow::python::bind_client(m);
  redflow::python::bind_worker(m);
  py::list redundancies;
  for (redflow::Redundancy r : redflow::kAllRedundancies) redundancies.append(redflow::to_string(r));
  m.attr("REDUNDANCIES") = redundancies;
}
