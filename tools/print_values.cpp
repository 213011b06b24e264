// `run --print`: an output's values by its element type (DOT `type=`), so
// doubles print as doubles; untyped outputs print as int32, as they always did.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

template <typename T>
std::string format_value(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::is_floating_point_v<T>) {
    return fmt::format("{:.6g}", v);
  } else {
    return fmt::format("{}", static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(v));
  }
}

std::string format_element(ElementType type, const std::byte* p) {
  switch (type) {
    case ElementType::kI8: return format_value<std::int8_t>(p);
    case ElementType::kU8: return format_value<std::uint8_t>(p);
    case ElementType::kI16: return format_value<std::int16_t>(p);
    case ElementType::kU16: return format_value<std::uint16_t>(p);
    case ElementType::kNone:
    case ElementType::kI32: return format_value<std::int32_t>(p);
    case ElementType::kU32: return format_value<std::uint32_t>(p);
    case ElementType::kI64: return format_value<std::int64_t>(p);
    case ElementType::kU64: return format_value<std::uint64_t>(p);
    case ElementType::kF32: return format_value<float>(p);
    case ElementType::kF64: return format_value<double>(p);
  }
  return "?";
}

}  // namespace

void print_values(const std::string& name, const std::vector<std::byte>& bytes, ElementType type) {
  const ElementType shown_as = type == ElementType::kNone ? ElementType::kI32 : type;
  const std::size_t size = element_size(shown_as);
  const std::size_t n = bytes.size() / size;
  // Untyped outputs keep the header they always had.
  fmt::print("{} ({} {}):\n", name, n, type == ElementType::kNone ? "int32" : to_string(type));
  const std::size_t shown = std::min<std::size_t>(n, 256);
  for (std::size_t i = 0; i < shown; ++i)
    fmt::print("{:>8}{}", format_element(shown_as, bytes.data() + size * i), (i % 8 == 7 || i + 1 == shown) ? "\n" : " ");
  if (shown < n) fmt::print("  ... {} more\n", n - shown);
}

}  // namespace redflow::cli
