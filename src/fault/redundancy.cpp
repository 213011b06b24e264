// Names and properties of the five redundancy configurations.
#include "redflow/redundancy.hpp"

namespace redflow {

const char* to_string(Redundancy r) {
  switch (r) {
    case Redundancy::kNone: return "none";
    case Redundancy::kDoubleSame: return "2x-same";
    case Redundancy::kTripleSame: return "3x-same";
    case Redundancy::kDoubleDiff: return "2x-diff";
    case Redundancy::kTripleDiff: return "3x-diff";
  }
  return "?";
}

std::optional<Redundancy> parse_redundancy(std::string_view text) {
  for (Redundancy r : kAllRedundancies)
    if (text == to_string(r)) return r;
  return std::nullopt;
}

Result<std::vector<Redundancy>> parse_redundancy_list(std::string_view text) {
  std::vector<Redundancy> out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = text.find(',', at);
    const std::string_view item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    auto r = parse_redundancy(item);
    if (!r)
      return Status::InvalidArgument("unknown redundancy configuration '" + std::string(item) +
                                     "' (expected none, 2x-same, 3x-same, 2x-diff or 3x-diff)");
    out.push_back(*r);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return out;
}

unsigned replica_count(Redundancy r) {
  switch (r) {
    case Redundancy::kNone: return 1;
    case Redundancy::kDoubleSame:
    case Redundancy::kDoubleDiff: return 2;
    case Redundancy::kTripleSame:
    case Redundancy::kTripleDiff: return 3;
  }
  return 1;
}

bool replicas_on_distinct_tiles(Redundancy r) { return r == Redundancy::kDoubleDiff || r == Redundancy::kTripleDiff; }

}  // namespace redflow
