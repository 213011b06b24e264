// NumPy .npy files (format versions 1.0 to 3.0), so that typed inputs and
// outputs need no hand-packed bytes: np.save("x.npy", np.arange(4, dtype=np.int32))
// and np.load("y.npy"). Only little-endian, C-order arrays of the element
// types redflow knows (ElementType) are read; arrays are written 1-D.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/status.hpp"

namespace redflow {

struct NpyArray {
  ElementType type = ElementType::kNone;
  std::vector<std::size_t> shape;
  std::span<const std::byte> data;  // a view into the file's bytes
};

// Parses a whole .npy file held in `file`; errors say what is wrong with it.
Result<NpyArray> parse_npy(std::span<const std::byte> file);

// The bytes for data node `node`'s value `data` read from a .npy file: its
// dtype must be the node's type (any dtype for an untyped node) and its
// elements fill exactly the node's bytes. Errors name the file and the node.
Result<std::span<const std::byte>> npy_data_for(const std::string& path, std::span<const std::byte> file, const DataNode& node);

// A .npy file (version 1.0) holding `data` as a 1-D array of `type`, which
// must not be kNone and must divide data.size().
std::vector<std::byte> to_npy(ElementType type, std::span<const std::byte> data);

}  // namespace redflow
