// Element types of data nodes (DOT `type=`): names and sizes.
#include <array>
#include <string_view>
#include <utility>

#include "redflow/graph.hpp"

namespace redflow {
namespace {

struct TypeInfo {
  ElementType type;
  const char* name;
  std::size_t size;
};
constexpr std::array<TypeInfo, 10> kTypes = {{{ElementType::kI8, "i8", 1},
                                              {ElementType::kU8, "u8", 1},
                                              {ElementType::kI16, "i16", 2},
                                              {ElementType::kU16, "u16", 2},
                                              {ElementType::kI32, "i32", 4},
                                              {ElementType::kU32, "u32", 4},
                                              {ElementType::kI64, "i64", 8},
                                              {ElementType::kU64, "u64", 8},
                                              {ElementType::kF32, "f32", 4},
                                              {ElementType::kF64, "f64", 8}}};

}  // namespace

const char* to_string(ElementType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return t.name;
  return "";
}

std::optional<ElementType> parse_element_type(std::string_view text) {
  for (const TypeInfo& t : kTypes)
    if (text == t.name) return t.type;
  return std::nullopt;
}

std::size_t element_size(ElementType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return t.size;
  return 1;
}

}  // namespace redflow
