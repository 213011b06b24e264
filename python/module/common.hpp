// What the Python module's binding files share: redflow's errors as the
// Python exception redflow.Error, and the mapping between NumPy arrays and a
// data node's bytes (dtype <-> ElementType, checked views, arrays over bytes
// the runtime wrote). Every function here is called with the GIL held.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "redflow/bytes.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/status.hpp"

namespace redflow::python {

namespace py = pybind11;

// A Python callable that C++ may copy and drop on any thread: copies share
// this holder (std::shared_ptr<Callable>), so no thread touches the
// callable's reference count without the GIL; the last copy drops it
// holding the GIL.
struct Callable {
  explicit Callable(py::object f) : fn(std::move(f)) {}
  Callable(const Callable&) = delete;
  Callable& operator=(const Callable&) = delete;
  ~Callable() {
    py::gil_scoped_acquire gil;
    fn = py::object();
  }
  py::object fn;
};

// `fn(endpoint)` as a driver's on_listening callback (ClusterOptions),
// called on the runtime's thread with the GIL taken. What it raises is
// printed as unraisable (`where` names it), not thrown through the runtime:
// no worker comes, and the driver says so after its wait.
std::function<void(const std::string&)> on_listening_callback(py::object fn, const char* where);

// The Python exception `e` with its traceback, as Python prints it.
std::string traceback_of(py::error_already_set& e);

// Creates redflow.Error (a RuntimeError whose `code` is the Status code's
// name: "invalid_graph", "actor_failed", "gave_up", ...) in `m`.
void define_error(py::module_& m);
// Raises redflow.Error for a failed `status` (returns when it is ok).
void raise_if_error(const Status& status);
template <typename T>
T value_or_raise(Result<T> result) {
  raise_if_error(result.status());
  return std::move(result).value();
}

// A redundancy configuration by its name ("none", "2x-same", "3x-same",
// "2x-diff", "3x-diff"); ValueError listing them for any other.
Redundancy redundancy_named(const std::string& text);

// The element type of a NumPy dtype (int8..uint64, float32, float64, native
// byte order); TypeError naming `what` for any other.
ElementType element_type_of(const py::dtype& dtype, const std::string& what);
// The NumPy dtype of an element type; uint8 for kNone (raw bytes).
py::dtype dtype_of(ElementType type);

// The bytes of `array` for data node `node`, without a copy: C-contiguous,
// exactly the node's size, and of its element type when it has one; else a
// TypeError or ValueError naming `role` (e.g. "input 'x'") and the fix.
std::span<const std::byte> bytes_of(const py::array& array, const DataNode& node, const std::string& role);
// The same for memory redflow writes into: the array must be writeable too.
std::span<std::byte> writable_bytes_of(const py::array& array, const DataNode& node, const std::string& role);
// A 1-D array of `type` over `bytes`, which it takes over (no copy): the
// array owns them, through a capsule, for as long as Python keeps it.
py::array array_owning(Bytes bytes, ElementType type);
// A 1-D uint8 view of memory that stays valid only while an actor runs.
py::array view_of(std::span<const std::byte> bytes);
py::array view_of(std::span<std::byte> bytes);

}  // namespace redflow::python
