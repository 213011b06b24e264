// libFuzzer target: the --inject SPEC parser (parse_fault_spec) and the
// check that the tiles it names exist. Accepted specs must hold what they
// say (a probability in [0, 1], a factor in [1, 1e6]); a rejected one must
// say why and leave the injection it was adding to untouched.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "redflow/redundancy.hpp"

namespace {

[[noreturn]] void fail(const char* what, std::string_view spec) {
  std::fprintf(stderr, "fault_spec_fuzz: %s: '%.*s'\n", what, static_cast<int>(spec.size()), spec.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  redflow::FaultInjection faults;
  faults.seed = 42;
  redflow::Status s = redflow::parse_fault_spec(spec, faults);
  if (!s.ok()) {
    if (s.message().find("--inject") == std::string::npos) fail("an error that does not name --inject", spec);
    if (faults.any() || faults.seed != 42) fail("a rejected spec changed the injection", spec);
    return 0;
  }
  if (!(faults.bitflip_probability >= 0 && faults.bitflip_probability <= 1)) fail("a probability outside [0, 1]", spec);
  for (const auto& [tile, factor] : faults.slow_tiles)
    if (!(factor >= 1 && factor <= 1e6)) fail("a slow-tile factor outside [1, 1e6]", spec);
  if (faults.faulty_tiles.size() + faults.slow_tiles.size() + faults.crash_tiles.size() > 1) fail("one spec added several tiles", spec);
  // A tile index that check_fault_tiles accepts must exist.
  for (unsigned tiles : {1u, 4u}) {
    const bool ok = redflow::check_fault_tiles(faults, tiles).ok();
    bool fits = true;
    for (unsigned t : faults.faulty_tiles) fits = fits && t < tiles;
    for (const auto& [t, f] : faults.slow_tiles) fits = fits && t < tiles;
    for (const auto& [t, after] : faults.crash_tiles) fits = fits && t < tiles;
    if (ok != fits) fail("check_fault_tiles disagrees with the tile count", spec);
  }
  return 0;
}
