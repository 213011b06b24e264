// RefusalLog: a peer that keeps sending what is refused gets a bounded
// number of log lines (its 1st, 10th, 100th and every 1000th refusal) and an
// exact final count; peers are counted apart.
#include <gtest/gtest.h>

#include "net/refusal_log.hpp"

namespace redflow::net {
namespace {

TEST(RefusalLog, FirstThenTenthHundredthAndThousandthsThenAFinalCount) {
  RefusalLog log;
  std::vector<std::uint64_t> logged;
  for (int i = 0; i < 2500; ++i)
    if (const std::uint64_t n = log.refuse("peer at 10.0.0.1")) logged.push_back(n);
  EXPECT_EQ(logged, (std::vector<std::uint64_t>{1, 10, 100, 1000, 2000}));
  EXPECT_EQ(log.count("peer at 10.0.0.1"), 2500u);
  EXPECT_EQ(RefusalLog::times(1), "");
  EXPECT_EQ(RefusalLog::times(10), " (10 times)");
  // The 500 after the 2000th were counted, not logged: the summary says so, once.
  EXPECT_EQ(log.unlogged(), (std::vector<std::pair<std::string, std::uint64_t>>{{"peer at 10.0.0.1", 2500}}));
  EXPECT_TRUE(log.unlogged().empty());
}

TEST(RefusalLog, PeersAreCountedApartAndALoggedCountNeedsNoSummary) {
  RefusalLog log;
  EXPECT_EQ(log.refuse("a"), 1u);
  EXPECT_EQ(log.refuse("b"), 1u);
  EXPECT_EQ(log.refuse("a"), 0u);
  EXPECT_EQ(log.count("a"), 2u);
  EXPECT_EQ(log.count("b"), 1u);
  EXPECT_EQ(log.count("c"), 0u);
  EXPECT_EQ(log.unlogged(), (std::vector<std::pair<std::string, std::uint64_t>>{{"a", 2}}));
}

}  // namespace
}  // namespace redflow::net
