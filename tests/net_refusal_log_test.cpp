// RefusalLog: a peer that keeps sending what is refused gets a bounded
// number of log lines (its 1st, 10th, 100th and every 1000th refusal) and an
// exact final count; peers are counted apart. And the tile server's use of
// it for replies nobody waits for (a worker, or a man in the middle,
// repeating its replies).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "net/refusal_log.hpp"
#include "net/tile_server.hpp"
#include "net_fake_worker.hpp"

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

// Occurrences of `part` in `text`.
std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// A worker that answers requests it was never sent is out of step: lost at
// the first such reply, its reason logged; what it sends after that is
// discarded, logged first and then counted, and summed up at the end.
TEST(NetRefusal, AWorkerOutOfStepIsLostAndItsFloodIsLoggedFirstThenCounted) {
  // The library logs to its default logger, the console's stdout.
  ::testing::internal::CaptureStdout();
  constexpr int kReplies = 150;
  {
    TileServerOptions o;
    o.slots = 8;
    o.slot_bytes = 64 << 10;
    o.heartbeat_timeout_s = 30;
    auto server = TileServer::start(o);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    zmq::context_t context;
    zmq::socket_t worker(context, zmq::socket_type::dealer);
    testing::connect_and_say_hello(worker, (*server)->endpoint(), testing::fake_tile_hello("repeater"));
    ASSERT_TRUE((*server)->wait_for_workers(10).ok());
    for (int i = 0; i < kReplies; ++i) send_envelope(worker, EnvelopeKind::kReply, 1000000 + static_cast<std::uint64_t>(i), {});
    for (int i = 0; i < 1000 && (*server)->counts().discarded_late < kReplies - 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE((*server)->lost(0)) << "a reply to a request never sent loses the worker";
    EXPECT_EQ((*server)->counts().discarded_late, static_cast<std::uint64_t>(kReplies - 1));
  }  // the server ends: the total is logged
  const std::string text = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(count_of(text, "is lost: answered request 1000000, which it was not sent"), 1u) << text;
  // The 1st, 10th and 100th of the rest, then the total.
  EXPECT_EQ(count_of(text, "tile server: discarded a message from worker 'repeater', which is lost"), 3u) << text;
  EXPECT_NE(text.find("which is lost (100 times)"), std::string::npos) << text;
  EXPECT_NE(text.find("tile server: discarded 149 message(s) from worker 'repeater' after it was lost, in all"), std::string::npos) << text;
}

}  // namespace
}  // namespace redflow::net
