// The paper profile: the benchmark graphs exactly as Kühbacher et al. (SAC'22,
// section 6 and Fig. 2) describe them, and the Kalray Bostan machine they ran
// on, so that the paper's Table 1 (actors and stolen actors) and the trends
// of its Figs. 5 and 6 can be compared with ours (docs/apps.md, "Paper
// profile"; docs/performance.md, "The paper's experiment").
//
// The fast profile (matmul.hpp, fft.hpp, bitonic.hpp) cuts graphs for this
// machine; these graphs keep the paper's shapes and block sizes instead:
//
//   matmul   k = n/200; 200 x 200 int32 blocks (160,000 bytes). A and B are
//            reordered into block-major order on the driver (rf.reorder),
//            split into k^2 blocks each; C_ij is a chain of k actors
//            C_ij += A_il * B_lj; the k^2 results are collected into C.
//            k^3 + 2k^2 + 3 actors.
//   fft      P = N / 2^13 blocks of 2^13 complex doubles (128 KiB). The input
//            is bit-reverse ordered (rf.reorder), split into P blocks, each
//            transformed locally (13 radix-2 stages), then log2 P stages of P
//            half-butterflies (one output per actor: the left and the right
//            half of a butterfly are two actors), then collected.
//            P(log2 P + 2) + 2 actors.
//   bitonic  P = N / 2^15 blocks of 2^15 int32 (128 KiB), L = log2 P. Split,
//            sort each block (alternating direction), then for each of the L
//            merge phases its inter-block compare stages (element-wise min or
//            max of two blocks) and one local bitonic merge per block, then
//            collect. P(2 + L(L+3)/2) + 1 actors.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "apps/target.hpp"
#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/runtime.hpp"
#include "redflow/status.hpp"

namespace redflow::apps {

// Which shapes a generator builds: ours (cut for the target machine) or the paper's.
enum class Profile { kFast, kPaper };
const char* to_string(Profile p);
// "fast" or "paper"; the error names --profile.
Result<Profile> parse_profile(std::string_view text);

// Block sizes of the paper profile (section 6.1: "the size of each data node
// is as close to the size of memory slots as possible", 160 KiB slots).
inline constexpr std::size_t kPaperMatmulBlock = 200;            // matrix side of a block
inline constexpr std::size_t kPaperFftBlock = std::size_t{1} << 13;   // complex doubles per block
inline constexpr std::size_t kPaperSortBlock = std::size_t{1} << 15;  // int32 per block

// Paper-profile graphs. Same inputs and outputs as the fast profile: matmul
// A, B -> C (row-major n x n int32); fft X -> Y (n complex doubles, FFTW's
// sign); bitonic X -> Y (n int32 sorted ascending). Bad sizes are errors
// naming --n and saying what the paper profile needs.
Result<Graph> paper_matmul_graph(std::size_t n);
Result<Graph> paper_fft_graph(std::size_t n);
Result<Graph> paper_bitonic_graph(std::size_t n);
Result<Graph> paper_graph(std::string_view app, std::size_t n);

// The closed forms of the actor counts, written independently of the
// generators (tests check that both agree, and agree with Table 1).
Result<std::size_t> paper_actor_count(std::string_view app, std::size_t n);
// The number of blocks per side (matmul: k = n/200) or of blocks (fft,
// bitonic: P), or an error naming --n when the paper profile cannot cut n.
Result<std::size_t> paper_blocks(std::string_view app, std::size_t n);

// The machine of section 6: a Kalray Bostan with 16 compute tiles whose data
// memory is 8 slots of 160 KiB, plus the driver (an I/O subsystem). Here a
// tile is one worker thread that sleeps when idle (the Bostan's 16 cores per
// tile are not modelled: on this machine they would only oversubscribe it).
inline constexpr unsigned kPaperTiles = 16;
inline constexpr unsigned kPaperSlots = 8;
inline constexpr std::size_t kPaperSlotBytes = std::size_t{160} << 10;
// Sets tiles, cores_per_tile, slots and slot_bytes of `o` to the paper's
// machine. Inline: the installed `redflow` command offers `--machine paper`
// without linking the applications.
inline void apply_paper_machine(RuntimeOptions& o) {
  o.tiles = kPaperTiles;
  o.cores_per_tile = 1;
  o.slots = kPaperSlots;
  o.slot_bytes = kPaperSlotBytes;
}
Target paper_target();

// One row of the paper's Table 1 (section 6.3): stolen actors under work
// stealing, averaged over 10 runs, on the paper's machine.
struct PaperTable1Row {
  std::string_view app;
  std::size_t n;        // matrix side (matmul) or elements (fft, bitonic)
  std::size_t actors;   // "actors in total"
  double stolen;        // "average stolen"
  double percent;       // "percent"
};
std::span<const PaperTable1Row> paper_table1();

// The actors of the paper-profile graphs: mm.acc, fft.local, fft.half,
// pbit.sort, pbit.cmp, pbit.merge, and the driver's mat.unblock.
void register_paper_actors(Registry& reg);
// One per application file (paper_matmul.cpp, paper_fft.cpp, paper_bitonic.cpp).
void register_paper_matmul_actors(Registry& reg);
void register_paper_fft_actors(Registry& reg);
void register_paper_bitonic_actors(Registry& reg);

}  // namespace redflow::apps
