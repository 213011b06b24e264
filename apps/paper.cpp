// The paper profile's shared parts: profile names, the size rules and closed
// forms of the actor counts, the paper's machine, and its Table 1.
#include "apps/paper.hpp"

#include <array>

#include "apps/actor_util.hpp"

namespace redflow::apps {

const char* to_string(Profile p) { return p == Profile::kPaper ? "paper" : "fast"; }

Result<Profile> parse_profile(std::string_view text) {
  if (text == "fast") return Profile::kFast;
  if (text == "paper") return Profile::kPaper;
  return Status::InvalidArgument("--profile " + std::string(text) + ": expected fast (ours, the default) or paper (section 6 of the paper)");
}

Result<std::size_t> paper_blocks(std::string_view app, std::size_t n) {
  const std::string flag = "--profile paper --n " + std::to_string(n) + ": ";
  if (app == "matmul") {
    if (n == 0 || n % kPaperMatmulBlock != 0)
      return Status::InvalidArgument(flag + "matmul needs n a positive multiple of 200 (the paper's 200 x 200 int32 blocks)");
    return n / kPaperMatmulBlock;
  }
  if (app == "fft") {
    if (!detail::is_power_of_two(n) || n < kPaperFftBlock)
      return Status::InvalidArgument(flag + "fft needs n a power of two of at least 2^13 (the paper's blocks of 2^13 complex doubles)");
    return n / kPaperFftBlock;
  }
  if (app == "bitonic") {
    if (!detail::is_power_of_two(n) || n < kPaperSortBlock)
      return Status::InvalidArgument(flag + "bitonic needs n a power of two of at least 2^15 (the paper's blocks of 2^15 int32)");
    return n / kPaperSortBlock;
  }
  return Status::InvalidArgument("unknown app '" + std::string(app) + "' (expected matmul, fft or bitonic)");
}

Result<std::size_t> paper_actor_count(std::string_view app, std::size_t n) {
  auto blocks = paper_blocks(app, n);
  if (!blocks.ok()) return blocks.status();
  const std::size_t b = *blocks;
  if (app == "matmul") return b * b * b + 2 * b * b + 3;  // k^3 + 2k^2 + 3
  const std::size_t L = detail::log2_exact(b);
  if (app == "fft") return b * (L + 2) + 2;         // P(log2 P + 2) + 2
  return b * (2 + L * (L + 3) / 2) + 1;             // P(2 + L(L+3)/2) + 1
}

Result<Graph> paper_graph(std::string_view app, std::size_t n) {
  if (app == "matmul") return paper_matmul_graph(n);
  if (app == "fft") return paper_fft_graph(n);
  if (app == "bitonic") return paper_bitonic_graph(n);
  return Status::InvalidArgument("unknown app '" + std::string(app) + "' (expected matmul, fft or bitonic)");
}

Target paper_target() { return Target{.slot_bytes = kPaperSlotBytes, .slots = kPaperSlots, .tiles = kPaperTiles}; }

std::span<const PaperTable1Row> paper_table1() {
  // Table 1 of the paper, as printed.
  static constexpr std::array<PaperTable1Row, 16> kRows = {{
      {"matmul", 1000, 178, 10.4, 5.8},
      {"matmul", 2000, 1203, 31.9, 2.7},
      {"matmul", 3000, 3828, 48.8, 1.3},
      {"matmul", 4000, 8803, 65.5, 0.7},
      {"matmul", 5000, 16878, 82.7, 0.5},
      {"matmul", 6000, 28803, 91.6, 0.3},
      {"fft", std::size_t{1} << 20, 1154, 331.8, 28.8},
      {"fft", std::size_t{1} << 21, 2562, 459.0, 17.9},
      {"fft", std::size_t{1} << 22, 5634, 674.2, 12.0},
      {"fft", std::size_t{1} << 23, 12290, 1050.1, 8.5},
      {"fft", std::size_t{1} << 24, 26626, 1382.5, 5.2},
      {"bitonic", std::size_t{1} << 22, 4737, 1339.5, 28.3},
      {"bitonic", std::size_t{1} << 23, 11777, 1812.3, 15.4},
      {"bitonic", std::size_t{1} << 24, 28673, 2317.6, 8.1},
      {"bitonic", std::size_t{1} << 25, 68609, 2987.7, 4.4},
      {"bitonic", std::size_t{1} << 26, 161793, 4166.8, 2.6},
  }};
  return kRows;
}

void register_paper_actors(Registry& reg) {
  register_paper_matmul_actors(reg);
  register_paper_fft_actors(reg);
  register_paper_bitonic_actors(reg);
}

}  // namespace redflow::apps
