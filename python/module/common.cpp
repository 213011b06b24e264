#include "common.hpp"

#include <memory>
#include <utility>

namespace redflow::python {
namespace {

PyObject* error_type = nullptr;

std::string dtype_name(const py::dtype& dtype) { return py::str(py::handle(dtype)).cast<std::string>(); }

const char* code_name(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid_argument";
    case Status::Code::kNotFound: return "not_found";
    case Status::Code::kIOError: return "io_error";
    case Status::Code::kInvalidGraph: return "invalid_graph";
    case Status::Code::kResourceExhausted: return "resource_exhausted";
    case Status::Code::kInternal: return "internal";
    case Status::Code::kActorFailed: return "actor_failed";
    case Status::Code::kDataLoss: return "data_loss";
    case Status::Code::kGaveUp: return "gave_up";
  }
  return "unknown";
}

// Checks what every array handed to redflow must be: C-contiguous, of the
// node's element type (when it has one) and exactly its size.
void check_array(const py::array& array, const DataNode& node, const std::string& role) {
  if (!(array.flags() & py::array::c_style))
    throw py::value_error(role + " is not C-contiguous: pass numpy.ascontiguousarray(...) (redflow reads arrays in place, without a copy)");
  if (node.type != ElementType::kNone) {
    const ElementType given = element_type_of(array.dtype(), role);
    if (given != node.type)
      throw py::type_error(role + " has dtype " + dtype_name(array.dtype()) + ", the graph declares " +
                           to_string(node.type) + " (" + dtype_name(dtype_of(node.type)) + ")");
  }
  const std::size_t bytes = static_cast<std::size_t>(array.nbytes());
  if (bytes != node.bytes) {
    const std::size_t item = static_cast<std::size_t>(array.itemsize());
    throw py::value_error(role + " has " + std::to_string(bytes) + " bytes (" + std::to_string(array.size()) + " elements of " +
                          std::to_string(item) + "), the graph declares " + std::to_string(node.bytes) + " bytes" +
                          (item > 0 && node.bytes % item == 0 ? " (" + std::to_string(node.bytes / item) + " elements)" : ""));
  }
}

py::array uint8_view(const void* data, std::size_t size, bool writeable) {
  // A base object makes pybind11 wrap the memory instead of copying it.
  py::array view(py::dtype::of<std::uint8_t>(), {static_cast<py::ssize_t>(size)}, {py::ssize_t{1}}, data, py::none());
  if (!writeable) view.attr("flags").attr("writeable") = false;
  return view;
}

}  // namespace

std::function<void(const std::string&)> on_listening_callback(py::object fn, const char* where) {
  auto callable = std::make_shared<Callable>(std::move(fn));
  return [callable, where](const std::string& endpoint) {
    py::gil_scoped_acquire gil;
    try {
      callable->fn(endpoint);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable(where);
    }
  };
}

std::string traceback_of(py::error_already_set& e) {
  try {
    py::object lines = py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    return py::str("").attr("join")(lines).cast<std::string>();
  } catch (py::error_already_set&) {
    return e.what();
  }
}

void define_error(py::module_& m) {
  error_type = PyErr_NewExceptionWithDoc("redflow.Error",
                                         "A redflow operation failed; str() is redflow's message, naming the node, actor or "
                                         "file at fault, and `code` the kind of failure (\"invalid_graph\", \"actor_failed\", "
                                         "\"gave_up\", ...).",
                                         PyExc_RuntimeError, nullptr);
  m.add_object("Error", py::handle(error_type));
}

void raise_if_error(const Status& status) {
  if (status.ok()) return;
  py::object type = py::reinterpret_borrow<py::object>(error_type);
  py::object error = type(status.ToString());
  error.attr("code") = code_name(status.code());
  error.attr("message") = status.message();
  PyErr_SetObject(error_type, error.ptr());
  throw py::error_already_set();
}

Redundancy redundancy_named(const std::string& text) {
  auto r = parse_redundancy(text);
  if (!r) throw py::value_error("redundancy '" + text + "': expected none, 2x-same, 3x-same, 2x-diff or 3x-diff");
  return *r;
}

ElementType element_type_of(const py::dtype& dtype, const std::string& what) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  const bool native = dtype.attr("isnative").cast<bool>();
  if (native) {
    if (kind == 'i') {
      if (size == 1) return ElementType::kI8;
      if (size == 2) return ElementType::kI16;
      if (size == 4) return ElementType::kI32;
      if (size == 8) return ElementType::kI64;
    } else if (kind == 'u') {
      if (size == 1) return ElementType::kU8;
      if (size == 2) return ElementType::kU16;
      if (size == 4) return ElementType::kU32;
      if (size == 8) return ElementType::kU64;
    } else if (kind == 'f') {
      if (size == 4) return ElementType::kF32;
      if (size == 8) return ElementType::kF64;
    }
  }
  throw py::type_error(what + ": dtype " + dtype_name(dtype) +
                       " has no redflow element type (int8..int64, uint8..uint64, float32, float64, native byte order)");
}

py::dtype dtype_of(ElementType type) {
  switch (type) {
    case ElementType::kNone:
    case ElementType::kU8: return py::dtype::of<std::uint8_t>();
    case ElementType::kI8: return py::dtype::of<std::int8_t>();
    case ElementType::kI16: return py::dtype::of<std::int16_t>();
    case ElementType::kU16: return py::dtype::of<std::uint16_t>();
    case ElementType::kI32: return py::dtype::of<std::int32_t>();
    case ElementType::kU32: return py::dtype::of<std::uint32_t>();
    case ElementType::kI64: return py::dtype::of<std::int64_t>();
    case ElementType::kU64: return py::dtype::of<std::uint64_t>();
    case ElementType::kF32: return py::dtype::of<float>();
    case ElementType::kF64: return py::dtype::of<double>();
  }
  return py::dtype::of<std::uint8_t>();
}

std::span<const std::byte> bytes_of(const py::array& array, const DataNode& node, const std::string& role) {
  check_array(array, node, role);
  return {static_cast<const std::byte*>(array.data()), node.bytes};
}

std::span<std::byte> writable_bytes_of(const py::array& array, const DataNode& node, const std::string& role) {
  check_array(array, node, role);
  if (!array.writeable()) throw py::value_error(role + " is read-only: redflow writes the output into it");
  return {static_cast<std::byte*>(const_cast<void*>(array.data())), node.bytes};
}

py::array array_owning(Bytes bytes, ElementType type) {
  auto owner = std::make_unique<Bytes>(std::move(bytes));
  const py::dtype dtype = dtype_of(type);
  const auto item = static_cast<std::size_t>(dtype.itemsize());
  const Bytes* held = owner.get();
  py::capsule capsule(owner.get(), [](void* p) { delete static_cast<Bytes*>(p); });
  owner.release();  // the capsule owns them now
  return py::array(dtype, {static_cast<py::ssize_t>(held->size() / item)}, {static_cast<py::ssize_t>(item)}, held->data(), capsule);
}

py::array view_of(std::span<const std::byte> bytes) { return uint8_view(bytes.data(), bytes.size(), false); }
py::array view_of(std::span<std::byte> bytes) { return uint8_view(bytes.data(), bytes.size(), true); }

}  // namespace redflow::python
