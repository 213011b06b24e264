// SmallVector and Attributes: the compact members of a Graph's nodes keep
// the values a std::vector and a std::map would, and the size they promise;
// and what an actor node computes from them.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "redflow/attributes.hpp"
#include "redflow/graph.hpp"
#include "redflow/small_vector.hpp"

namespace redflow {
namespace {

// The point of both types: a chain's actor and its data node fit in what
// docs/performance.md says (the 1,000,000-actor Graph: about 296 bytes an
// actor, down from 548).
static_assert(sizeof(SmallVector<DataId>) == 16);
static_assert(sizeof(SmallVector<Consumer>) == 16);
static_assert(sizeof(Attributes) == sizeof(void*));
static_assert(sizeof(ActorNode) + sizeof(DataNode) <= 296);

TEST(SmallVector, KeepsEveryValueInlineThenOnTheHeap) {
  SmallVector<DataId> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), SmallVector<DataId>::kInline);
  std::vector<DataId> reference;
  for (DataId i = 0; i < 100; ++i) {
    v.push_back(i * 7);
    reference.push_back(i * 7);
    ASSERT_EQ(v.size(), reference.size());
    ASSERT_TRUE(std::equal(v.begin(), v.end(), reference.begin(), reference.end())) << "after " << i + 1;
  }
  EXPECT_EQ(v.front(), 0u);
  EXPECT_EQ(v.back(), 99u * 7);
  EXPECT_EQ(v.at(3), 21u);
  EXPECT_THROW((void)v.at(100), std::out_of_range);
  EXPECT_EQ(v.to_vector(), reference);
}

TEST(SmallVector, CopiesAndMovesAreIndependentValues) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{40}}) {
    SmallVector<DataId> a;
    for (std::size_t i = 0; i < n; ++i) a.push_back(static_cast<DataId>(i + 1));
    SmallVector<DataId> copy = a;
    EXPECT_EQ(copy, a) << n;
    if (n > 0) {
      copy[0] = 999;
      EXPECT_EQ(a[0], 1u) << "a copy shares storage with its source (n=" << n << ")";
    }
    SmallVector<DataId> moved = std::move(a);
    EXPECT_EQ(moved.size(), n);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, as documented
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(moved[i], i + 1);
    copy = moved;
    EXPECT_EQ(copy, moved);
    copy = {5, 6};
    EXPECT_EQ(copy.to_vector(), (std::vector<DataId>{5, 6}));
  }
}

TEST(SmallVector, PassesAsASpanAndComparesByValue) {
  const SmallVector<Consumer> c{{3, 0}, {4, 1}};
  std::span<const Consumer> s = c;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].actor, 4u);
  EXPECT_EQ(s[1].port, 1u);
  EXPECT_FALSE((SmallVector<DataId>{1, 2}) == (SmallVector<DataId>{1, 2, 3}));
  EXPECT_FALSE((SmallVector<DataId>{1, 2}) == (SmallVector<DataId>{1, 3}));
}

TEST(Attributes, ReadsLikeAMapAndAllocatesOnlyWhenSet) {
  Attributes a;
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.find("label"), a.end());
  EXPECT_EQ(a.count("label"), 0u);
  a["label"] = "x";
  a["color"] = "red";
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.at("label"), "x");
  EXPECT_NE(a.find("color"), a.end());
  Attributes b = a;
  EXPECT_EQ(a, b);
  b["label"] = "y";
  EXPECT_EQ(a.at("label"), "x") << "a copy shares its map with its source";
  EXPECT_FALSE(a == b);
  Attributes from_map = Attributes::Map{{"k", "v"}};
  EXPECT_EQ(from_map.at("k"), "v");
  EXPECT_EQ(Attributes(Attributes::Map{}), Attributes());
}

TEST(ActorNode, DistinctInputsCountsANodeReadOnSeveralPortsOnce) {
  ActorNode a;
  EXPECT_EQ(a.distinct_inputs(), 0u);
  a.inputs = {4, 2, 4, 7, 2, 4};
  EXPECT_EQ(a.distinct_inputs(), 3u);
  EXPECT_EQ(a.inputs.to_vector(), (std::vector<DataId>{4, 2, 4, 7, 2, 4})) << "counting reordered the ports";
}

}  // namespace
}  // namespace redflow
