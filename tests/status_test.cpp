#include <gtest/gtest.h>

#include "redflow/actor_context.hpp"
#include "redflow/status.hpp"

namespace redflow {
namespace {

TEST(StatusTest, ToStringNamesKindAndMessage) {
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  Status s = Status::InvalidGraph("actor 'mul' has no output");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "invalid graph: actor 'mul' has no output");
}

TEST(ArgsTest, FindsKeysAndNumbers) {
  EXPECT_EQ(ActorContext::find_arg("offset=8, elem=4", "elem").value(), "4");
  EXPECT_EQ(ActorContext::find_arg_u64("offset=8,elem=4", "offset").value(), 8u);
  EXPECT_FALSE(ActorContext::find_arg("offset=8", "elem").has_value());
  EXPECT_FALSE(ActorContext::find_arg_u64("offset=8x", "offset").has_value());
}

}  // namespace
}  // namespace redflow
