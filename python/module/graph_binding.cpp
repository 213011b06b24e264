// redflow.Graph: a graph built from Python, or read from extended DOT, and
// written back as DOT. Data nodes are declared by shape and dtype (their
// bytes and element type follow) or by a byte count; actors name their
// inputs and output by data-node name or id.
#include <pybind11/stl.h>

#include <numeric>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/redundancy.hpp"

namespace redflow::python {
namespace {

// A data node of `kind` from Python's (shape, dtype) or nbytes.
DataNode make_node(DataKind kind, const std::string& name, const py::object& shape, const py::object& dtype, const py::object& nbytes) {
  DataNode node;
  node.name = name;
  node.kind = kind;
  const std::string what = std::string(to_string(kind)) + " '" + name + "'";
  if (!dtype.is_none()) node.type = element_type_of(py::dtype::from_args(dtype), what);
  if (!shape.is_none()) {
    if (!nbytes.is_none()) throw py::value_error(what + ": give a shape or nbytes, not both");
    std::vector<std::size_t> dims;
    if (py::isinstance<py::int_>(shape))
      dims.push_back(shape.cast<std::size_t>());
    else
      dims = shape.cast<std::vector<std::size_t>>();
    if (dtype.is_none()) throw py::value_error(what + ": a shape needs a dtype (e.g. dtype=numpy.float64)");
    node.bytes = std::accumulate(dims.begin(), dims.end(), element_size(node.type), std::multiplies<>());
  } else if (!nbytes.is_none()) {
    node.bytes = nbytes.cast<std::size_t>();
  } else {
    throw py::value_error(what + ": give its shape and dtype, or nbytes");
  }
  if (node.type != ElementType::kNone && node.bytes % element_size(node.type) != 0)
    throw py::value_error(what + ": " + std::to_string(node.bytes) + " bytes is not a whole number of " + to_string(node.type) + " elements");
  return node;
}

DataId data_id(const Graph& g, const py::handle& ref, const std::string& role) {
  if (py::isinstance<py::str>(ref)) {
    const std::string name = ref.cast<std::string>();
    if (auto id = g.find_data(name)) return *id;
    throw py::key_error(role + ": no data node '" + name + "' in graph '" + g.name() + "'");
  }
  const auto id = ref.cast<DataId>();
  if (id >= g.data().size()) throw py::index_error(role + ": data node id " + std::to_string(id) + " is not in the graph");
  return id;
}

py::dict describe_data(const DataNode& n) {
  py::dict d;
  d["name"] = n.name;
  d["kind"] = to_string(n.kind);
  d["nbytes"] = n.bytes;
  d["dtype"] = n.type == ElementType::kNone ? py::object(py::none()) : py::object(dtype_of(n.type));
  return d;
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<Graph>(m, "Graph", "A dataflow graph: data nodes and actors (docs/python.md).")
      .def(py::init<std::string>(), py::arg("name") = "redflow")
      .def_property("name", &Graph::name, &Graph::set_name)
      .def(
          "input",
          [](Graph& g, const std::string& name, py::object shape, py::object dtype, py::object nbytes) {
            return g.add_data(make_node(DataKind::kInput, name, shape, dtype, nbytes));
          },
          py::arg("name"), py::arg("shape") = py::none(), py::arg("dtype") = py::none(), py::arg("nbytes") = py::none(),
          "An input data node; returns its id. Its size: shape and dtype, or nbytes.")
      .def(
          "output",
          [](Graph& g, const std::string& name, py::object shape, py::object dtype, py::object nbytes) {
            return g.add_data(make_node(DataKind::kOutput, name, shape, dtype, nbytes));
          },
          py::arg("name"), py::arg("shape") = py::none(), py::arg("dtype") = py::none(), py::arg("nbytes") = py::none())
      .def(
          "inner",
          [](Graph& g, const std::string& name, py::object shape, py::object dtype, py::object nbytes) {
            return g.add_data(make_node(DataKind::kInner, name, shape, dtype, nbytes));
          },
          py::arg("name"), py::arg("shape") = py::none(), py::arg("dtype") = py::none(), py::arg("nbytes") = py::none())
      .def(
          "constant",
          [](Graph& g, const std::string& name, const py::array& value) {
            DataNode node;
            node.name = name;
            node.kind = DataKind::kConstant;
            node.type = element_type_of(value.dtype(), "constant '" + name + "'");
            const py::array contiguous = py::array::ensure(value, py::array::c_style);
            const auto* begin = static_cast<const std::byte*>(contiguous.data());
            node.contents.assign(begin, begin + contiguous.nbytes());  // the graph owns its constants: one copy
            node.bytes = node.contents.size();
            return g.add_data(std::move(node));
          },
          py::arg("name"), py::arg("value"), "A constant data node holding a copy of `value` (the graph owns it).")
      .def(
          "actor",
          [](Graph& g, const std::string& name, const std::string& function, const py::sequence& inputs, const py::object& output,
             const std::string& args, double work, std::optional<std::string> redundancy) {
            std::vector<DataId> ids;
            for (std::size_t port = 0; port < inputs.size(); ++port)
              ids.push_back(data_id(g, inputs[port], "actor '" + name + "' input " + std::to_string(port)));
            const DataId out = data_id(g, output, "actor '" + name + "' output");
            ActorBuilder b = g.actor(name, function, std::move(ids), out);
            if (!args.empty()) b.args(args);
            if (work > 0) b.work(work);
            if (redundancy) b.redundancy(redundancy_named(*redundancy));
            return b.id();
          },
          py::arg("name"), py::arg("function"), py::arg("inputs"), py::arg("output"), py::arg("args") = "", py::arg("work") = 0.0,
          py::arg("redundancy") = py::none(),
          "An actor running the registered `function` on `inputs` (names or ids, port order) into `output`; returns its id.")
      .def("validate",
           [](const Graph& g) { raise_if_error(g.validate_structure()); },
           "Raises redflow.Error naming what is wrong (no registry needed).")
      .def("to_dot", &Graph::to_dot)
      .def(
          "write_dot", [](const Graph& g, const std::string& path) { raise_if_error(g.write_dot_file(path)); }, py::arg("path"),
          "Writes DOT atomically; constants built here go beside it as NAME.bin.")
      .def_static(
          "from_dot", [](const std::string& path) { return value_or_raise(Graph::from_dot_file(path)); }, py::arg("path"))
      .def_static(
          "from_dot_string",
          [](const std::string& text, const std::string& base_dir) { return value_or_raise(Graph::from_dot_string(text, base_dir)); },
          py::arg("text"), py::arg("base_dir") = ".")
      .def_property_readonly("data",
                             [](const Graph& g) {
                               py::list out;
                               for (const DataNode& n : g.data()) out.append(describe_data(n));
                               return out;
                             })
      .def_property_readonly("actors",
                             [](const Graph& g) {
                               py::list out;
                               for (const ActorNode& a : g.actors()) {
                                 py::dict d;
                                 d["name"] = a.name;
                                 d["function"] = a.function;
                                 d["args"] = a.args;
                                 py::list ins;
                                 for (DataId i : a.inputs) ins.append(g.data(i).name);
                                 d["inputs"] = ins;
                                 d["output"] = a.outputs.empty() ? std::string() : g.data(a.outputs[0]).name;
                                 d["redundancy"] = a.redundancy ? py::object(py::str(to_string(*a.redundancy))) : py::object(py::none());
                                 out.append(d);
                               }
                               return out;
                             })
      .def("__repr__", [](const Graph& g) {
        return "<redflow.Graph '" + g.name() + "': " + std::to_string(g.actors().size()) + " actors, " + std::to_string(g.data().size()) +
               " data nodes>";
      });
}

}  // namespace redflow::python
