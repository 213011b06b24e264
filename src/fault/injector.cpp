// Fault injection decisions: counter-based hashing (splitmix64) of the execution's identity.
#include "fault/injector.hpp"

#include <algorithm>

namespace redflow::fault {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t FaultInjector::key(std::uint64_t execution, std::uint32_t actor, unsigned replica, unsigned attempt) const {
  std::uint64_t h = mix(spec_.seed);
  h = mix(h ^ execution);
  h = mix(h ^ actor);
  h = mix(h ^ (std::uint64_t{replica} << 32 | attempt));
  return h;
}

std::optional<std::uint64_t> FaultInjector::maybe_flip(std::uint64_t key, unsigned tile, std::span<std::byte> output) const {
  if (output.empty()) return std::nullopt;
  const bool faulty_tile = std::find(spec_.faulty_tiles.begin(), spec_.faulty_tiles.end(), tile) != spec_.faulty_tiles.end();
  // The top 53 bits as a uniform number in [0, 1).
  const double u = static_cast<double>(mix(key ^ 0xB17F11B) >> 11) * 0x1.0p-53;
  if (!faulty_tile && !(u < spec_.bitflip_probability)) return std::nullopt;
  const std::uint64_t bit = mix(key ^ 0xF11B17) % (static_cast<std::uint64_t>(output.size()) * 8);
  output[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  return bit;
}

double FaultInjector::slow_factor(unsigned tile) const {
  double f = 1;
  for (const auto& [t, factor] : spec_.slow_tiles)
    if (t == tile) f = std::max(f, factor);
  return f;
}

}  // namespace redflow::fault
