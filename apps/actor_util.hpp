// Helpers shared by the application actors: reading integer args and
// building shape-check messages. Internal to apps/; nothing here is API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "redflow/actor_context.hpp"

namespace redflow::apps::detail {

// Reads a required unsigned integer arg. Returns "" and sets *out, or a
// message naming the arg (for shape checks and ctx.fail).
inline std::string arg_u64(std::string_view args, std::string_view key, std::uint64_t* out) {
  auto raw = ActorContext::find_arg(args, key);
  if (!raw) return "missing required arg '" + std::string(key) + "'";
  auto v = ActorContext::find_arg_u64(args, key);
  if (!v) return "arg '" + std::string(key) + "' must be a non-negative integer, got '" + std::string(*raw) + "'";
  *out = *v;
  return "";
}

// As arg_u64, and the value must be > 0.
inline std::string arg_positive(std::string_view args, std::string_view key, std::uint64_t* out) {
  if (auto e = arg_u64(args, key, out); !e.empty()) return e;
  if (*out == 0) return "arg '" + std::string(key) + "' must be > 0";
  return "";
}

inline std::string expect_inputs(std::size_t got, std::size_t want) {
  if (got == want) return "";
  return "expects " + std::to_string(want) + " input" + (want == 1 ? "" : "s") + ", got " + std::to_string(got);
}

inline bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

inline unsigned log2_exact(std::uint64_t v) {
  unsigned k = 0;
  while ((std::uint64_t{1} << k) < v) ++k;
  return k;
}

}  // namespace redflow::apps::detail
