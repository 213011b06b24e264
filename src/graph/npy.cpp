// Reading and writing NumPy .npy files: a magic string, a version, a header
// that is a Python dict literal ({'descr': '<f8', 'fortran_order': False,
// 'shape': (4,), }) padded to 64 bytes, then the raw array.
#include "redflow/npy.hpp"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string_view>

namespace redflow {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

// NumPy's dtype strings for redflow's element types (little-endian; '|' for single bytes).
struct Descr {
  ElementType type;
  const char* descr;
};
constexpr Descr kDescrs[] = {{ElementType::kI8, "|i1"},  {ElementType::kU8, "|u1"},  {ElementType::kI16, "<i2"}, {ElementType::kU16, "<u2"},
                             {ElementType::kI32, "<i4"}, {ElementType::kU32, "<u4"}, {ElementType::kI64, "<i8"}, {ElementType::kU64, "<u8"},
                             {ElementType::kF32, "<f4"}, {ElementType::kF64, "<f8"}};

std::optional<ElementType> type_of_descr(std::string_view d) {
  // '<' little-endian, '|' not applicable, '=' native (little-endian here).
  if (d.size() >= 2 && (d[0] == '=' || d[0] == '|' || d[0] == '<')) {
    for (const Descr& x : kDescrs)
      if (d.substr(1) == std::string_view(x.descr).substr(1)) return x.type;
  }
  return std::nullopt;
}

// The value text after 'key': in the header dict, or "" if absent.
std::string_view dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  std::size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::size_t end = 0;
  if (!rest.empty() && rest.front() == '(') {
    end = rest.find(')');
    return end == std::string_view::npos ? std::string_view() : rest.substr(0, end + 1);
  }
  if (!rest.empty() && rest.front() == '\'') {
    end = rest.find('\'', 1);
    return end == std::string_view::npos ? std::string_view() : rest.substr(0, end + 1);
  }
  end = rest.find_first_of(",}");
  return rest.substr(0, end);
}

std::optional<std::vector<std::size_t>> parse_shape(std::string_view text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::size_t> shape;
  while (!text.empty()) {
    while (!text.empty() && (text.front() == ' ' || text.front() == ',')) text.remove_prefix(1);
    if (text.empty()) break;
    std::size_t v = 0, digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
      if (__builtin_mul_overflow(v, std::size_t{10}, &v) || __builtin_add_overflow(v, std::size_t(text[digits] - '0'), &v)) return std::nullopt;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    shape.push_back(v);
    text.remove_prefix(digits);
    while (!text.empty() && text.front() == 'L') text.remove_prefix(1);  // Python 2 longs
  }
  return shape;
}

}  // namespace

Result<NpyArray> parse_npy(std::span<const std::byte> file) {
  auto bytes = reinterpret_cast<const unsigned char*>(file.data());
  if (file.size() < kMagicSize + 4 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    return Status::InvalidArgument("not a NumPy .npy file (no \\x93NUMPY magic)");
  const unsigned major = bytes[6];
  std::size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = bytes[8] | (std::size_t{bytes[9]} << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) return Status::InvalidArgument("truncated .npy header");
    header_len = bytes[8] | (std::size_t{bytes[9]} << 8) | (std::size_t{bytes[10]} << 16) | (std::size_t{bytes[11]} << 24);
    header_at = 12;
  } else {
    return Status::InvalidArgument(fmt::format(".npy format version {} is not supported (1, 2 or 3)", major));
  }
  if (header_len > file.size() - header_at) return Status::InvalidArgument("truncated .npy header");
  const std::string_view header(reinterpret_cast<const char*>(bytes + header_at), header_len);
  NpyArray a;
  std::string_view descr = dict_value(header, "descr");
  if (descr.size() < 2) return Status::InvalidArgument("the .npy header has no 'descr'");
  descr = descr.substr(1, descr.size() - 2);
  auto type = type_of_descr(descr);
  if (!type)
    return Status::InvalidArgument(fmt::format("dtype '{}' is not supported (little-endian i1, u1, i2, u2, i4, u4, i8, u8, f4, f8)", descr));
  a.type = *type;
  auto shape = parse_shape(dict_value(header, "shape"));
  if (!shape) return Status::InvalidArgument("the .npy header has no readable 'shape'");
  a.shape = *shape;
  std::size_t count = 1;
  for (std::size_t d : a.shape)
    if (__builtin_mul_overflow(count, d, &count)) return Status::InvalidArgument("the .npy shape overflows");
  if (dict_value(header, "fortran_order") == "True" && a.shape.size() > 1)
    return Status::InvalidArgument("Fortran-order arrays are not supported: save np.ascontiguousarray(a)");
  std::size_t data_bytes = 0;
  if (__builtin_mul_overflow(count, element_size(a.type), &data_bytes)) return Status::InvalidArgument("the .npy shape overflows");
  const std::size_t data_at = header_at + header_len;
  if (file.size() - data_at != data_bytes)
    return Status::InvalidArgument(fmt::format("the .npy header says {} elements ({} bytes) but the file holds {} bytes of data", count,
                                               data_bytes, file.size() - data_at));
  a.data = file.subspan(data_at);
  return a;
}

Result<std::span<const std::byte>> npy_data_for(const std::string& path, std::span<const std::byte> file, const DataNode& node) {
  auto a = parse_npy(file);
  if (!a.ok()) return Status::InvalidArgument(fmt::format("file '{}': {}", path, a.status().message()));
  if (node.type != ElementType::kNone && a->type != node.type)
    return Status::InvalidArgument(fmt::format("file '{}' holds {} values, but data node '{}' has type={}", path, to_string(a->type),
                                               node.name, to_string(node.type)));
  if (a->data.size() != node.bytes) {
    std::string shape;
    for (std::size_t d : a->shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    return Status::InvalidArgument(fmt::format("file '{}' holds shape ({}) of {} = {} bytes, data node '{}' declares {} bytes ({} {} values)",
                                               path, shape, to_string(a->type), a->data.size(), node.name, node.bytes,
                                               node.bytes / element_size(a->type), to_string(a->type)));
  }
  return a->data;
}

std::vector<std::byte> to_npy(ElementType type, std::span<const std::byte> data) {
  std::string descr;
  for (const Descr& x : kDescrs)
    if (x.type == type) descr = x.descr;
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}", descr, data.size() / element_size(type));
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const std::size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out(kMagicSize + 4 + header.size() + data.size());
  std::memcpy(out.data(), kMagic, kMagicSize);
  out[6] = std::byte{1};
  out[7] = std::byte{0};
  out[8] = static_cast<std::byte>(header.size() & 0xff);
  out[9] = static_cast<std::byte>(header.size() >> 8);
  std::memcpy(out.data() + kMagicSize + 4, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + kMagicSize + 4 + header.size(), data.data(), data.size());
  return out;
}

}  // namespace redflow
