// bytes_of({1, 2, 0xff}): a byte vector written out in a test, for the
// tests of byte formats (the wire codec, the tile protocol, the envelope).
// A pure function: safe from any thread.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace redflow::testing {

inline std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  out.reserve(values.size());
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace redflow::testing
