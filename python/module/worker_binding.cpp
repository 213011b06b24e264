// redflow.run_worker: this Python process as a redflow worker
// (include/redflow/worker.hpp), whose tiles run the actors of a Registry
// built here, Python actors included. Each worker process has its own
// interpreter and GIL, so Python actors on several workers run in
// parallel. `python3 -m redflow.worker` (python/redflow/worker.py) is this
// function behind a command line.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/worker.hpp"

namespace redflow::python {

void bind_worker(py::module_& m) {
  m.def(
      "run_worker",
      [](const Registry& registry, const std::string& connect, unsigned slots, std::size_t slot_bytes, unsigned cores, const std::string& name,
         bool persist, double connect_timeout_s, const std::string& key_file, const std::string& server_key_file) {
        WorkerOptions o;
        o.connect = connect;
        o.slots = slots;
        o.slot_bytes = slot_bytes;
        o.cores = cores;
        o.name = name;
        o.persist = persist;
        o.connect_timeout_s = connect_timeout_s;
        o.key_file = key_file;
        o.server_key_file = server_key_file;
        Status s;
        {
          py::gil_scoped_release release;
          s = run_worker(o, registry);
        }
        raise_if_error(s);
      },
      py::arg("registry"), py::kw_only(), py::arg("connect"), py::arg("slots") = 16, py::arg("slot_bytes") = std::size_t{8} << 20,
      py::arg("cores") = 1, py::arg("name") = "", py::arg("persist") = false, py::arg("connect_timeout_s") = 30.0, py::arg("key_file") = "",
      py::arg("server_key_file") = "",
      "Serves the driver at `connect` (tcp://HOST:PORT) as a worker whose tiles run `registry`'s actors, until its BYE "
      "(with persist: driver after driver); redflow.Error says why it stopped otherwise.");
}

}  // namespace redflow::python
