// SlotIndex: the per-tile map from data node to slot, against a std::map
// model under random sets, erases and prunes, with ids chosen to collide.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "runtime/slot_index.hpp"

namespace redflow::runtime {
namespace {

TEST(SlotIndex, AgreesWithAMapUnderRandomSetsAndErases) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    SlotIndex index;
    index.reset(8);  // 32 entries: probe runs wrap and collide
    std::map<DataId, std::int32_t> model;
    for (int step = 0; step < 5000; ++step) {
      // Few distinct ids among large ones, so runs form and the table wraps.
      const DataId d = static_cast<DataId>(rng() % 24) * 1000003u;
      const auto slot = static_cast<std::int32_t>(rng() % 8);
      if (rng() % 2 == 0) {
        if (index.full() && model.find(d) == model.end()) continue;  // the caller prunes first
        index.set(d, slot);
        model[d] = slot;
      } else {
        index.erase_if(d, slot);
        if (auto it = model.find(d); it != model.end() && it->second == slot) model.erase(it);
      }
      ASSERT_EQ(index.size(), model.size()) << "seed " << seed << " step " << step;
      for (DataId x = 0; x < 24; ++x) {
        const DataId id = x * 1000003u;
        auto it = model.find(id);
        ASSERT_EQ(index.find(id), it == model.end() ? -1 : it->second) << "seed " << seed << " step " << step << " id " << id;
      }
    }
  }
}

TEST(SlotIndex, PruneKeepsOnlyWhatIsStillTrueAndMakesRoom) {
  SlotIndex index;
  index.reset(4);  // 16 entries: full once 8 are in
  for (DataId d = 0; d < 8; ++d) index.set(d, static_cast<std::int32_t>(d % 4));
  EXPECT_TRUE(index.full());
  // Slots 0..3 now hold data 4..7: the entries of 0..3 are stale.
  index.prune([](DataId d, std::int32_t slot) { return d >= 4 && static_cast<DataId>(slot) == d % 4; });
  EXPECT_EQ(index.size(), 4u);
  EXPECT_FALSE(index.full());
  for (DataId d = 0; d < 4; ++d) EXPECT_EQ(index.find(d), -1) << d;
  for (DataId d = 4; d < 8; ++d) EXPECT_EQ(index.find(d), static_cast<std::int32_t>(d % 4)) << d;
}

TEST(SlotIndex, ItsSizeDependsOnTheSlotsNotTheGraph) {
  // A tile's directory must not grow with the graph (it was 4 bytes a data
  // node a tile): ids up to 10^9 index into the same small table.
  SlotIndex index;
  index.reset(16);
  for (DataId d = 0; d < 1000000000u; d += 99999989u) {
    index.set(d, 1);
    EXPECT_EQ(index.find(d), 1);
    index.erase_if(d, 1);
    EXPECT_EQ(index.find(d), -1);
  }
  EXPECT_EQ(index.size(), 0u);
}

}  // namespace
}  // namespace redflow::runtime
