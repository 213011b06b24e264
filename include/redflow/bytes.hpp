// Bytes and ByteMap: a value's bytes, and named values, the type a model's
// outputs come in: a graph's outputs by data-node name (Outputs) and a REM
// run's result labels by name (rem::Run::outputs, read_results). Plain
// bytes, little-endian as the producers wrote them; a value type (copy it,
// move it, read it from any thread that owns it).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace redflow {

using Bytes = std::vector<std::byte>;
using ByteMap = std::map<std::string, Bytes>;

}  // namespace redflow
