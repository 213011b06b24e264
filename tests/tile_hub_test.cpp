// The driver's hub (src/net/tile_hub.hpp) driven without a socket, a
// process or a sleep: HELLOs, replies, heartbeats and byes are handed to its
// event handlers as bytes from a routing id, the clock is a value the test
// advances, and what the hub sends is recorded. Each test is one rule of the
// lost-peer logic (docs/remote.md): who is refused and why, when a worker is
// lost, and what happens to its requests and to what it says after.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/tile_hub.hpp"
#include "net/worker_messages.hpp"
#include "hub_recording.hpp"
#include "net_fake_worker.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {
namespace {

using namespace std::chrono_literals;

using testing::HubSent;
using testing::of_kind;
using testing::RecordingSender;

std::vector<std::byte> some_frame() { return {std::byte{1}, std::byte{2}, std::byte{3}}; }

class TileHubTest : public ::testing::Test {
 protected:
  static TileServerOptions hub_options(unsigned capacity) {
    TileServerOptions o;
    o.workers = 1;
    o.capacity = capacity;
    o.heartbeat_timeout_s = 2;
    return o;
  }
  explicit TileHubTest(unsigned capacity = 2) : hub_(hub_options(capacity), {}) {}

  // `from` says `kind` (with `request` and `body`) at `at`; then the hub flushes what that made it send.
  std::vector<HubSent> say(const std::string& from, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                           TileHub::Time at) {
    const testing::EnvelopeParts message(kind, request, std::move(body));
    hub_.on_message(from, message.parts, "10.0.0.7", at);
    hub_.flush(at, out_);
    return out_.take();
  }
  std::vector<HubSent> say_hello(const std::string& from, const HelloMessage& hello, TileHub::Time at) {
    std::vector<std::byte> body;
    encode(hello, body);
    return say(from, EnvelopeKind::kHello, 0, std::move(body), at);
  }
  // The reason of the one REFUSED in `sent` to `to` (empty, with a failure, if none).
  static std::string refusal(const std::vector<HubSent>& sent, const std::string& to) {
    const std::vector<HubSent> refused = of_kind(sent, to, EnvelopeKind::kRefused);
    if (refused.size() != 1) {
      ADD_FAILURE() << refused.size() << " REFUSED to " << to << " in " << sent.size() << " message(s)";
      return {};
    }
    RefusedMessage m;
    EXPECT_TRUE(decode(refused[0].body, m).ok());
    return m.reason;
  }
  // `from` says a tile's HELLO at `at` and is welcomed.
  void welcome(const std::string& from, TileHub::Time at) {
    const std::vector<HubSent> sent = say_hello(from, testing::fake_tile_hello(from), at);
    ASSERT_EQ(of_kind(sent, from, EnvelopeKind::kWelcome).size(), 1u) << "no WELCOME to " << from;
  }
  // A request to worker `w`, sent at `at`; its id.
  std::shared_ptr<TileHub::Request> request(unsigned w, TileHub::Time at) {
    auto r = hub_.submit(w, some_frame(), true, -1, TileHub::kFloor);
    hub_.flush(at, out_);
    out_.take();
    return r;
  }
  std::vector<HubSent> tick(TileHub::Time at) {
    hub_.on_tick(at);
    hub_.flush(at, out_);
    return out_.take();
  }
  std::vector<std::shared_ptr<TileHub::Request>> answered() {
    std::vector<std::shared_ptr<TileHub::Request>> out;
    hub_.take_answered(out);
    return out;
  }
  static bool answered_lost(const std::shared_ptr<TileHub::Request>& r) { return r->done && r->lost; }

  TileHub hub_;
  RecordingSender out_;
  const TileHub::Time t0_ = TileHub::Time{} + 1000s;
};

// Capacity 1: the first worker fills it.
class TileHubFullTest : public TileHubTest {
 protected:
  TileHubFullTest() : TileHubTest(1) {}
};

TEST_F(TileHubTest, AHelloOfferingNoTileRoleIsRefusedWithTheRoleReason) {
  HelloMessage hello = testing::fake_tile_hello("node");
  hello.roles = {{Role::kNode, 1}, {Role::kTaskManager, 1}};
  const std::vector<HubSent> sent = say_hello("n1", hello, t0_);
  EXPECT_EQ(refusal(sent, "n1"), role_refusal(hello, Role::kTile, runtime::kTileProtocolVersion));
  EXPECT_NE(refusal(sent, "n1").find("not tile"), std::string::npos) << refusal(sent, "n1");
  EXPECT_TRUE(of_kind(sent, "n1", EnvelopeKind::kWelcome).empty());
  EXPECT_EQ(hub_.welcomed(), 0u);
  EXPECT_EQ(hub_.counts().refused_workers, 1u);
}

TEST_F(TileHubTest, AHelloOfAnotherTileProtocolVersionIsRefusedWithTheVersionReason) {
  HelloMessage hello = testing::fake_tile_hello("old");
  hello.roles = {{Role::kTile, static_cast<std::uint16_t>(runtime::kTileProtocolVersion - 1)}};
  const std::vector<HubSent> sent = say_hello("o1", hello, t0_);
  EXPECT_EQ(refusal(sent, "o1"), role_refusal(hello, Role::kTile, runtime::kTileProtocolVersion));
  EXPECT_NE(refusal(sent, "o1").find("protocol version"), std::string::npos) << refusal(sent, "o1");
  EXPECT_EQ(hub_.welcomed(), 0u);
  EXPECT_EQ(hub_.counts().refused_workers, 1u);
  // The same worker at the driver's version is welcomed as tile 0.
  const std::vector<HubSent> welcomed = say_hello("o2", testing::fake_tile_hello("new"), t0_);
  const WelcomeMessage welcome = testing::welcome_to(welcomed, "o2");
  EXPECT_EQ(welcome.role, Role::kTile);
  EXPECT_EQ(welcome.tile, 0u);
  EXPECT_EQ(welcome.heartbeat_timeout_ms, 2000u);
  EXPECT_EQ(hub_.welcomed(), 1u);
}

TEST_F(TileHubFullTest, AWorkerBeyondCapacityIsRefusedWithTheReason) {
  welcome("w1", t0_);
  const std::vector<HubSent> sent = say_hello("w2", testing::fake_tile_hello("w2"), t0_);
  EXPECT_EQ(refusal(sent, "w2"), "the driver has taken the 1 remote tile(s) it may have (raise --max-workers for more workers)");
  EXPECT_EQ(hub_.welcomed(), 1u);
  EXPECT_EQ(hub_.counts().refused_workers, 1u);
}

TEST_F(TileHubTest, AWorkerSilentPastTheTimeoutIsLostAndItsRequestsAnsweredLost) {
  welcome("quiet", t0_);
  welcome("beating", t0_);
  auto quiet = request(0, t0_);
  auto beating = request(1, t0_);
  // Within the timeout both are beaten to and neither is lost.
  std::vector<HubSent> sent = tick(t0_ + 1500ms);
  EXPECT_EQ(of_kind(sent, "quiet", EnvelopeKind::kHeartbeat).size(), 1u);
  EXPECT_FALSE(hub_.lost(0));
  say("beating", EnvelopeKind::kHeartbeat, 0, {}, t0_ + 1500ms);
  // Past it, only the one that said nothing since its HELLO is lost.
  sent = tick(t0_ + 2500ms);
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_FALSE(hub_.lost(1));
  EXPECT_TRUE(answered_lost(quiet));
  EXPECT_FALSE(beating->done);
  const auto woken = answered();
  ASSERT_EQ(woken.size(), 1u);
  EXPECT_EQ(woken[0], quiet);
  EXPECT_EQ(of_kind(sent, "quiet", EnvelopeKind::kBye).size(), 1u);  // in case it is only hung
  EXPECT_TRUE(of_kind(sent, "quiet", EnvelopeKind::kHeartbeat).empty());
  // A later request to it is answered lost at once, never sent.
  EXPECT_TRUE(answered_lost(hub_.submit(0, some_frame(), true, -1, TileHub::kFloor)));
  hub_.flush(t0_ + 2500ms, out_);
  EXPECT_TRUE(of_kind(out_.take(), "quiet", EnvelopeKind::kRequest).empty());
}

TEST_F(TileHubTest, AWorkerThatSaysByeIsLostAndItsRequestsAnsweredLost) {
  welcome("w", t0_);
  auto r = request(0, t0_);
  say("w", EnvelopeKind::kBye, 0, {}, t0_ + 100ms);
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_TRUE(answered_lost(r));
  EXPECT_EQ(answered().size(), 1u);
}

TEST_F(TileHubTest, AWorkerWhoseConnectionDroppedIsLostAtTheNextSend) {
  welcome("w", t0_);
  auto r = request(0, t0_);
  out_.unreachable.insert("w");
  tick(t0_ + 500ms);  // its heartbeat cannot be routed
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_TRUE(answered_lost(r));
  EXPECT_EQ(answered().size(), 1u);
}

TEST_F(TileHubTest, ALateReplyFromALostWorkerIsDiscardedAndCounted) {
  welcome("w", t0_);
  auto r = request(0, t0_);
  ASSERT_NE(r->id, 0u);
  tick(t0_ + 2500ms);
  ASSERT_TRUE(hub_.lost(0));
  answered();
  const TileServerCounts before = hub_.counts();
  const std::vector<HubSent> sent = say("w", EnvelopeKind::kReply, r->id, some_frame(), t0_ + 3s);
  EXPECT_EQ(hub_.counts().discarded_late, before.discarded_late + 1);
  EXPECT_EQ(hub_.counts().refused_messages, before.refused_messages);
  EXPECT_TRUE(sent.empty());
  EXPECT_TRUE(answered().empty());
  EXPECT_TRUE(r->lost);
  EXPECT_TRUE(r->reply.bytes().empty());
  EXPECT_TRUE(hub_.lost(0));
}

TEST_F(TileHubTest, ARequestAwaitedBelowTheHeartbeatsAnsweredThroughLineLosesTheWorker) {
  welcome("w", t0_);
  auto first = request(0, t0_);
  auto second = request(0, t0_);
  auto third = request(0, t0_);
  say("w", EnvelopeKind::kReply, first->id, some_frame(), t0_ + 10ms);
  ASSERT_TRUE(first->done);
  EXPECT_FALSE(first->lost);
  say("w", EnvelopeKind::kHeartbeat, first->id, {}, t0_ + 20ms);  // true: nothing awaited up to it
  EXPECT_FALSE(hub_.lost(0));
  say("w", EnvelopeKind::kHeartbeat, second->id, {}, t0_ + 30ms);  // says it answered the second, which never came
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_TRUE(answered_lost(second));
  EXPECT_TRUE(answered_lost(third));
  EXPECT_EQ(first->reply.bytes().size(), some_frame().size());
}

TEST_F(TileHubTest, AWorkerThatBeatsButOwesAnAnswerPastItsDeadlineIsLost) {
  welcome("w", t0_);
  auto r = request(0, t0_);
  const auto deadline = std::chrono::duration_cast<TileHub::Clock::duration>(std::chrono::duration<double>(hub_.floor_s()));
  for (auto t = t0_ + 500ms; t < t0_ + deadline; t += 500ms) {
    say("w", EnvelopeKind::kHeartbeat, 0, {}, t);
    tick(t);
    ASSERT_FALSE(hub_.lost(0)) << "lost before its deadline";
  }
  say("w", EnvelopeKind::kHeartbeat, 0, {}, t0_ + deadline + 100ms);
  tick(t0_ + deadline + 100ms);
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_TRUE(answered_lost(r));
}

}  // namespace
}  // namespace redflow::net
