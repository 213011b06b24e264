// redflow.Registry: the actor functions a graph may name. Built-ins (rf.*,
// i32.*), C++ plugins loaded by path, and Python callables registered as
// actors. A Python actor runs on the runtime's tile threads holding the GIL
// (one Python actor at a time per process; C++ actors beside it run in
// parallel), over NumPy views of its input slots (read-only) and its
// output slot: no copy in or out. A Python exception fails the execution
// with its traceback in the error.
#include <pybind11/stl.h>

#include <memory>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/registry.hpp"

namespace redflow::python {
namespace {

// Runs `callable` as the actor `ctx` describes: fn(inputs, output, args).
void run_python_actor(const Callable& callable, ActorContext& ctx) {
  py::gil_scoped_acquire gil;
  try {
    py::list inputs;
    for (std::size_t port = 0; port < ctx.num_inputs(); ++port) inputs.append(view_of(ctx.input_bytes(port)));
    py::array output = view_of(ctx.output_bytes());
    callable.fn(inputs, output, std::string(ctx.args()));
  } catch (py::error_already_set& e) {
    ctx.fail("Python actor '" + std::string(ctx.actor_name()) + "' raised:\n" + traceback_of(e));
  }
}

}  // namespace

void bind_registry(py::module_& m) {
  py::class_<Registry>(m, "Registry", "The actor functions a graph may name: built-ins, C++ plugins, Python callables.")
      .def(py::init([](bool builtins) { return builtins ? Registry::with_builtins() : Registry(); }), py::arg("builtins") = true,
           "With the built-in actors (rf.split, rf.collect, i32.add, ...) unless builtins=False.")
      .def(
          "add",
          [](Registry& r, const std::string& name, py::object fn, std::optional<std::size_t> inputs, const std::string& summary) {
            if (!PyCallable_Check(fn.ptr())) throw py::type_error("actor '" + name + "': " + std::string(py::repr(fn)) + " is not callable");
            if (r.find(name) != nullptr) throw py::key_error("actor function '" + name + "' is already registered");
            auto callable = std::make_shared<Callable>(std::move(fn));
            ActorSpec spec;
            spec.function = [callable](ActorContext& ctx) { run_python_actor(*callable, ctx); };
            if (inputs) spec.check = shape::inputs(*inputs);
            spec.summary = summary.empty() ? "a Python actor" : summary;
            r.add(name, std::move(spec));
            raise_if_error(r.status());
          },
          py::arg("name"), py::arg("function"), py::arg("inputs") = py::none(), py::arg("summary") = "",
          "Registers function(inputs, output, args) as actor `name`: inputs is a list of read-only uint8 arrays (one per port), "
          "output a writeable uint8 array the function fills; use .view(dtype) for typed access. The arrays are views of "
          "the runtime's memory, valid only during the call. inputs=N refuses graphs that give it another number of inputs.")
      .def(
          "load_plugin", [](Registry& r, const std::string& path) { raise_if_error(r.load_plugin(path)); }, py::arg("path"),
          "Loads a C++ actor plugin (a .so with REDFLOW_PLUGIN).")
      .def("names", &Registry::names)
      .def("__contains__", [](const Registry& r, const std::string& name) { return r.find(name) != nullptr; });
}

}  // namespace redflow::python
