// Parsing --inject specifications into a FaultInjection.
#include <charconv>
#include <cmath>
#include <map>

#include "redflow/redundancy.hpp"

namespace redflow {

namespace {

// "k=v,k=v" after the kind; a bare first value (faulty-tile:3) is stored under "".
Result<std::map<std::string, std::string, std::less<>>> parse_fields(std::string_view spec, std::string_view body) {
  std::map<std::string, std::string, std::less<>> fields;
  std::size_t at = 0;
  bool first = true;
  while (at <= body.size()) {
    const std::size_t comma = body.find(',', at);
    const std::string_view item = body.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const std::size_t eq = item.find('=');
    if (item.empty()) return Status::InvalidArgument("--inject '" + std::string(spec) + "': empty field");
    if (eq == std::string_view::npos) {
      if (!first) return Status::InvalidArgument("--inject '" + std::string(spec) + "': expected KEY=VALUE, got '" + std::string(item) + "'");
      fields[""] = std::string(item);
    } else {
      fields[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    }
    first = false;
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return fields;
}

template <typename T>
bool parse_number(const std::string& text, T& out) {
  if (text.empty()) return false;
  if constexpr (std::is_floating_point_v<T>) {
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(out);
  } else {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size();
  }
}

}  // namespace

Status parse_fault_spec(std::string_view spec, FaultInjection& into) {
  const std::size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view body = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  auto bad = [&](const std::string& why) { return Status::InvalidArgument("--inject '" + std::string(spec) + "': " + why); };
  if (body.empty()) return bad("expected bitflip:p=P[,seed=S], faulty-tile:T, slow-tile:T,factor=F or crash-tile:T[,after=K]");
  auto fields = parse_fields(spec, body);
  if (!fields.ok()) return fields.status();
  auto allow = [&](std::initializer_list<std::string_view> keys) -> Status {
    for (const auto& [k, v] : *fields) {
      bool known = false;
      for (auto key : keys) known = known || k == key;
      if (!known) return bad(k.empty() ? "unexpected value '" + v + "'" : "unknown field '" + k + "'");
    }
    return Status::Ok();
  };
  if (kind == "bitflip") {
    REDFLOW_RETURN_IF_ERROR(allow({"p", "seed"}));
    double p = 0;
    if (!fields->count("p") || !parse_number(fields->at("p"), p) || p < 0 || p > 1) return bad("p must be a probability in [0, 1]");
    std::uint64_t seed = into.seed;
    if (fields->count("seed") && !parse_number(fields->at("seed"), seed)) return bad("seed must be an unsigned integer");
    into.bitflip_probability = p;
    into.seed = seed;
    return Status::Ok();
  }
  if (kind == "faulty-tile" || kind == "slow-tile") {
    REDFLOW_RETURN_IF_ERROR(allow(kind == "faulty-tile" ? std::initializer_list<std::string_view>{""}
                                                        : std::initializer_list<std::string_view>{"", "factor"}));
    unsigned tile = 0;
    if (!fields->count("") || !parse_number(fields->at(""), tile)) return bad("expected a tile index, e.g. " + std::string(kind) + ":1");
    if (kind == "faulty-tile") {
      into.faulty_tiles.push_back(tile);
      return Status::Ok();
    }
    double factor = 0;
    if (!fields->count("factor") || !parse_number(fields->at("factor"), factor) || factor < 1 || factor > 1e6)
      return bad("factor must be a number >= 1, e.g. slow-tile:0,factor=4");
    into.slow_tiles.emplace_back(tile, factor);
    return Status::Ok();
  }
  if (kind == "crash-tile") {
    REDFLOW_RETURN_IF_ERROR(allow({"", "after"}));
    unsigned tile = 0;
    if (!fields->count("") || !parse_number(fields->at(""), tile)) return bad("expected a tile index, e.g. crash-tile:1,after=20");
    std::uint64_t after = 0;
    if (fields->count("after") && (!parse_number(fields->at("after"), after) || after == ~std::uint64_t{0}))
      return bad("after must be a number of actors, e.g. crash-tile:1,after=20");
    into.crash_tiles.emplace_back(tile, after);
    return Status::Ok();
  }
  return bad("unknown fault '" + std::string(kind) + "' (expected bitflip, faulty-tile, slow-tile or crash-tile)");
}

Status check_fault_tiles(const FaultInjection& faults, unsigned tiles) {
  auto bad = [&](const char* kind, unsigned t) {
    return Status::InvalidArgument(std::string("--inject ") + kind + ":" + std::to_string(t) + ": the runtime has tiles 0.." +
                                   std::to_string(tiles - 1));
  };
  for (unsigned t : faults.faulty_tiles)
    if (t >= tiles) return bad("faulty-tile", t);
  for (const auto& [t, f] : faults.slow_tiles)
    if (t >= tiles) return bad("slow-tile", t);
  for (const auto& [t, after] : faults.crash_tiles)
    if (t >= tiles) return bad("crash-tile", t);
  return Status::Ok();
}

}  // namespace redflow
