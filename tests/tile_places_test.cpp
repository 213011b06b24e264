// TilePlaces: the quarantine rule (section 5.3) and the service state of
// tile places, without an engine.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/tile_places.hpp"

namespace redflow::runtime {
namespace {

TEST(TilePlaces, QuarantinesATileAtItsLostVotesButNeverBelowTheTilesNeeded) {
  TilePlaces places(4, 2);
  EXPECT_EQ(places.lose_vote(0, 4, 2), 0u);  // one lost vote: still in service
  EXPECT_TRUE(places.healthy(0));
  EXPECT_EQ(places.lose_vote(0, 4, 2), 2u);  // the second quarantines it
  EXPECT_FALSE(places.healthy(0));
  EXPECT_EQ(places.lose_vote(0, 4, 2), 0u);  // quarantined once
  places.lose_vote(1, 4, 2);
  EXPECT_EQ(places.lose_vote(1, 4, 2), 2u);  // 3 in service > 2 needed
  places.lose_vote(2, 4, 2);
  EXPECT_EQ(places.lose_vote(2, 4, 2), 0u);  // 2 in service: no fewer than 2
  EXPECT_TRUE(places.healthy(2));
  EXPECT_EQ(places.quarantined(4), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(places.lost_votes(2), 2u);
  places.reset_votes(4);
  EXPECT_EQ(places.lost_votes(2), 0u);
  EXPECT_EQ(places.out_of_service(4), "tiles 0, 1 on probation, 2 of 4 compute tiles in service");
}

TEST(TilePlaces, NeverQuarantinesWhenTheLimitIsZero) {
  TilePlaces places(3, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(places.lose_vote(0, 3, 1), 0u);
  EXPECT_TRUE(places.healthy(0));
  EXPECT_EQ(places.lost_votes(0), 10u);
}

TEST(TilePlaces, ALostTileIsOutOfServiceOnceAndNotCountedAsQuarantined) {
  TilePlaces places(3, 3);
  EXPECT_TRUE(places.lose(1));
  EXPECT_FALSE(places.lose(1));
  EXPECT_TRUE(places.lost(1));
  EXPECT_FALSE(places.healthy(1));
  EXPECT_TRUE(places.quarantined(3).empty());
  EXPECT_EQ(places.out_of_service(3), "tile 1 lost, 2 of 3 compute tiles in service");
}

TEST(TilePlaces, APlaceKeptForAJoinIsOutOfServiceUntilAdmitted) {
  TilePlaces places(3, 3);
  places.keep_for_join(2);
  EXPECT_TRUE(places.absent(2));
  EXPECT_FALSE(places.healthy(2));
  EXPECT_FALSE(places.join_pending(2));
  EXPECT_EQ(places.out_of_service(3), "2 of 2 compute tiles in service");  // no tile in the place yet
  places.note_join(2);
  EXPECT_TRUE(places.join_pending(2));
  places.admit(2);
  EXPECT_FALSE(places.join_pending(2));
  EXPECT_TRUE(places.healthy(2));
  EXPECT_EQ(places.out_of_service(3), "3 of 3 compute tiles in service");
}

TEST(TilePlaces, ARefusedJoinerFillsItsPlaceButStaysOutOfService) {
  TilePlaces places(2, 3);
  places.keep_for_join(1);
  places.note_join(1);
  places.refuse_join(1);
  EXPECT_FALSE(places.absent(1));
  EXPECT_FALSE(places.healthy(1));
  EXPECT_EQ(places.quarantined(2), (std::vector<unsigned>{1}));
  EXPECT_EQ(places.out_of_service(2), "tile 1 quarantined, 1 of 2 compute tiles in service");
}

}  // namespace
}  // namespace redflow::runtime
