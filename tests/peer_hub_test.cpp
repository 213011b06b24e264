// The driver-side session layer (src/net/peer_hub.hpp) driven without a
// socket, a process or a sleep: messages are handed to its event handlers as
// bytes from a routing id, the clock is a value the test advances, what it
// sends is recorded, and the service on it records its callbacks. Each test
// is one rule every model's driver shares: who is refused and why, what a
// WELCOME says, when a peer is lost, and what happens to what it says after.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "hub_recording.hpp"
#include "net/driver_messages.hpp"
#include "net/peer_hub.hpp"
#include "net/worker_messages.hpp"

namespace redflow::net {
namespace {

using namespace std::chrono_literals;
using testing::HubSent;
using testing::of_kind;
using testing::refusal_to;

constexpr std::uint16_t kVersion = 7;

// A service that records each callback, admits what `refuse` does not name,
// and takes REQUEST-free REPLYs as its messages.
class RecordingService final : public PeerService {
 public:
  std::string admit(const HelloMessage& hello) override { return hello.name == refuse_name ? refuse_reason : std::string(); }
  void welcome(unsigned peer, WelcomeMessage& w) override { w.service = {std::byte{42}, std::byte(peer)}; }
  void welcomed(unsigned peer, Time) override { welcomed_peers.push_back(peer); }
  bool message(unsigned peer, const Envelope& e, Time, zmq::message_t*) override {
    if (e.kind != EnvelopeKind::kReply) return false;
    replies.emplace_back(peer, e.request);
    return true;
  }
  void heartbeat(unsigned peer, std::uint64_t request) override { beats.emplace_back(peer, request); }
  std::uint64_t beat_request(unsigned peer) override { return 100 + peer; }
  void lost(unsigned peer, const std::string& why, bool left) override { losses.push_back({peer, why, left}); }

  struct Loss {
    unsigned peer;
    std::string why;
    bool left;
  };
  std::string refuse_name = "no-operator", refuse_reason = "it lacks the operator(s) 'fft' that the program uses";
  std::vector<unsigned> welcomed_peers;
  std::vector<std::pair<unsigned, std::uint64_t>> replies, beats;
  std::vector<Loss> losses;
};

HelloMessage node_hello(const std::string& name, std::uint16_t version = kVersion) {
  return testing::hello_offering(Role::kNode, version, name);
}

class PeerHubTest : public ::testing::Test {
 protected:
  static PeerHubOptions options(unsigned capacity) {
    PeerHubOptions o;
    o.log_name = "test driver";
    o.role = Role::kNode;
    o.version = kVersion;
    o.heartbeat_timeout_s = 2;
    o.capacity = capacity;
    o.full_reason = "full";
    return o;
  }
  explicit PeerHubTest(unsigned capacity = 0) : hub_(options(capacity), service_) {}

  std::vector<HubSent> say(const std::string& from, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                           PeerHub::Time at) {
    return driver_.say(from, kind, request, std::move(body), at);
  }
  std::vector<HubSent> say_hello(const std::string& from, const HelloMessage& hello, PeerHub::Time at) {
    return driver_.say_hello(from, hello, at);
  }
  void welcome(const std::string& from, PeerHub::Time at) {
    ASSERT_EQ(of_kind(say_hello(from, node_hello(from), at), from, EnvelopeKind::kWelcome).size(), 1u) << "no WELCOME to " << from;
  }
  std::vector<HubSent> tick(PeerHub::Time at) { return driver_.tick(at); }

  RecordingService service_;
  PeerHub hub_;
  testing::HubDriver driver_{hub_};
  testing::RecordingSender& out_ = driver_.out;
  const PeerHub::Time t0_ = PeerHub::Time{} + 1000s;
};

class PeerHubFullTest : public PeerHubTest {
 protected:
  PeerHubFullTest() : PeerHubTest(1) {}
};

TEST(PeerHubPolicy, TheIntervalIsAQuarterOfTheTimeoutAndAtLeastTenMilliseconds) {
  EXPECT_EQ(heartbeat_interval(2), 500ms);
  EXPECT_EQ(heartbeat_interval(0.02), 10ms);
  EXPECT_FALSE(silent(PeerHub::Time{} + 1s, PeerHub::Time{} + 3s, 2));
  EXPECT_TRUE(silent(PeerHub::Time{} + 1s, PeerHub::Time{} + 3001ms, 2));
  EXPECT_EQ(silence_reason(2), "silent for more than 2 s");
}

TEST_F(PeerHubTest, AWelcomeNamesTheRoleTheIdTheHeartbeatAndTheServicesBytes) {
  welcome("a", t0_);
  const std::vector<HubSent> sent = say_hello("b", node_hello("b"), t0_);
  const WelcomeMessage w = testing::welcome_to(sent, "b");
  EXPECT_EQ(w.role, Role::kNode);
  EXPECT_EQ(w.tile, 1u);
  EXPECT_EQ(w.incarnation, 2u);
  EXPECT_EQ(w.heartbeat_interval_ms, 500u);
  EXPECT_EQ(w.heartbeat_timeout_ms, 2000u);
  EXPECT_EQ(w.service, (std::vector<std::byte>{std::byte{42}, std::byte{1}}));
  EXPECT_EQ(service_.welcomed_peers, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(hub_.peer(1).address, "10.0.0.9");
}

TEST_F(PeerHubTest, AHelloOfAnotherRoleOrProtocolVersionIsRefusedWithTheReasonAndTheDriverWaitsOn) {
  HelloMessage tile = node_hello("tile");
  tile.roles = {{Role::kTile, 5}};
  tile.slots = 2;  // what a tile offers
  tile.slot_bytes = 1;
  std::vector<HubSent> sent = say_hello("t", tile, t0_);
  EXPECT_EQ(refusal_to(sent, "t"), role_refusal(tile, Role::kNode, kVersion));
  EXPECT_NE(refusal_to(sent, "t").find("not stream node"), std::string::npos) << refusal_to(sent, "t");
  sent = say_hello("o", node_hello("old", kVersion - 1), t0_);
  EXPECT_NE(refusal_to(sent, "o").find("protocol version"), std::string::npos) << refusal_to(sent, "o");
  EXPECT_EQ(hub_.size(), 0u);
  EXPECT_EQ(hub_.counts().refused_workers, 2u);
  EXPECT_TRUE(service_.welcomed_peers.empty());
  ASSERT_EQ(hub_.refusals().size(), 2u);
  EXPECT_NE(hub_.refusals()[0].find("worker 'tile'"), std::string::npos) << hub_.refusals()[0];
  // A worker that speaks the driver's version is welcomed after them.
  welcome("n", t0_);
  EXPECT_EQ(hub_.size(), 1u);
}

TEST_F(PeerHubTest, TheServiceRefusesWithItsReasonAndTheNextWorkerIsWelcomed) {
  const std::vector<HubSent> sent = say_hello("x", node_hello("no-operator"), t0_);
  EXPECT_EQ(refusal_to(sent, "x"), service_.refuse_reason);
  EXPECT_EQ(hub_.size(), 0u);
  welcome("y", t0_);
  EXPECT_EQ(service_.welcomed_peers, (std::vector<unsigned>{0}));
}

TEST_F(PeerHubFullTest, AWorkerBeyondCapacityIsRefused) {
  welcome("a", t0_);
  EXPECT_EQ(refusal_to(say_hello("b", node_hello("b"), t0_), "b"), "full");
  EXPECT_EQ(hub_.size(), 1u);
}

TEST_F(PeerHubTest, ASilentPeerIsLostAndToldByeAndTheOthersGetHeartbeatsWithTheServicesRequest) {
  welcome("quiet", t0_);
  welcome("beating", t0_);
  std::vector<HubSent> sent = tick(t0_ + 1500ms);
  ASSERT_EQ(of_kind(sent, "beating", EnvelopeKind::kHeartbeat).size(), 1u);
  EXPECT_EQ(of_kind(sent, "beating", EnvelopeKind::kHeartbeat)[0].request, 101u);
  say("beating", EnvelopeKind::kHeartbeat, 9, {}, t0_ + 1500ms);
  EXPECT_EQ(service_.beats, (std::vector<std::pair<unsigned, std::uint64_t>>{{1, 9}}));
  sent = tick(t0_ + 2500ms);
  EXPECT_TRUE(hub_.lost(0));
  EXPECT_FALSE(hub_.lost(1));
  ASSERT_EQ(service_.losses.size(), 1u);
  EXPECT_EQ(service_.losses[0].peer, 0u);
  EXPECT_EQ(service_.losses[0].why, "silent for more than 2 s");
  EXPECT_FALSE(service_.losses[0].left);
  EXPECT_EQ(of_kind(sent, "quiet", EnvelopeKind::kBye).size(), 1u);
  EXPECT_TRUE(of_kind(sent, "quiet", EnvelopeKind::kHeartbeat).empty());
}

// A tick more than half a timeout late means this process did not run
// (under two sanitizer stages at once, a driver woke to find every worker
// "silent", their heartbeats unread in its socket): that tick judges no
// silence, the next one does.
TEST_F(PeerHubTest, ATickThatComesLateJudgesNoSilenceUntilWhatCameMeanwhileIsRead) {
  welcome("unread", t0_);
  welcome("dead", t0_);
  tick(t0_ + 500ms);
  // Nothing ran for 2.5 s: both look silent for 3 s, past the 2 s timeout.
  std::vector<HubSent> sent = tick(t0_ + 3000ms);
  EXPECT_FALSE(hub_.lost(0));
  EXPECT_FALSE(hub_.lost(1));
  EXPECT_EQ(of_kind(sent, "unread", EnvelopeKind::kHeartbeat).size(), 1u);
  EXPECT_EQ(of_kind(sent, "dead", EnvelopeKind::kHeartbeat).size(), 1u);
  // What the first sent meanwhile is read; the next tick judges.
  say("unread", EnvelopeKind::kHeartbeat, 0, {}, t0_ + 3100ms);
  tick(t0_ + 3500ms);
  EXPECT_FALSE(hub_.lost(0));
  EXPECT_TRUE(hub_.lost(1));
  ASSERT_EQ(service_.losses.size(), 1u);
  EXPECT_EQ(service_.losses[0].why, "silent for more than 2 s");
}

TEST_F(PeerHubTest, TicksThatAreAllLateStillFindADeadPeer) {
  welcome("dead", t0_);
  tick(t0_ + 500ms);
  tick(t0_ + 3000ms);  // late: judges nothing
  EXPECT_FALSE(hub_.lost(0));
  tick(t0_ + 5000ms);  // late again, but the one before judged nothing: this one does
  EXPECT_TRUE(hub_.lost(0));
}

TEST_F(PeerHubTest, APeerWhoseConnectionDroppedIsLostAtTheNextSend) {
  welcome("w", t0_);
  out_.unreachable.insert("w");
  tick(t0_ + 500ms);
  EXPECT_TRUE(hub_.lost(0));
  ASSERT_EQ(service_.losses.size(), 1u);
  EXPECT_EQ(service_.losses[0].why, "its connection dropped");
}

TEST_F(PeerHubTest, ALateMessageFromALostPeerIsDiscardedAndCountedNotGivenToTheService) {
  welcome("w", t0_);
  tick(t0_ + 2500ms);
  ASSERT_TRUE(hub_.lost(0));
  const std::vector<HubSent> sent = say("w", EnvelopeKind::kReply, 3, {std::byte{1}}, t0_ + 3s);
  EXPECT_TRUE(sent.empty());
  EXPECT_TRUE(service_.replies.empty());
  EXPECT_EQ(hub_.counts().discarded_late, 1u);
  EXPECT_EQ(hub_.counts().refused_messages, 0u);
  EXPECT_EQ(service_.losses.size(), 1u);  // lost once, never taken back
  // Its HELLO again is discarded too: a process that comes back dials anew.
  say_hello("w", node_hello("w"), t0_ + 3s);
  EXPECT_EQ(hub_.size(), 1u);
  EXPECT_EQ(hub_.counts().discarded_late, 2u);
}

TEST_F(PeerHubTest, AByeOrRefusedFromAPeerLosesIt) {
  welcome("leaver", t0_);
  welcome("refuser", t0_);
  say("leaver", EnvelopeKind::kBye, 0, {}, t0_);
  std::vector<std::byte> reason;
  encode(RefusedMessage{"garbled"}, reason);
  say("refuser", EnvelopeKind::kRefused, 0, reason, t0_);
  ASSERT_EQ(service_.losses.size(), 2u);
  EXPECT_TRUE(service_.losses[0].left);
  EXPECT_FALSE(service_.losses[1].left);
  EXPECT_EQ(service_.losses[1].why, "it could not read a message from this driver: garbled");
}

TEST_F(PeerHubTest, AnUnreadableMessageLosesAPeerAndIsRefusedFromAStranger) {
  welcome("w", t0_);
  const std::vector<std::byte> garbage{std::byte{0xff}, std::byte{0xee}};
  const std::vector<std::span<const std::byte>> parts{garbage};
  hub_.on_message("w", parts, "", t0_);
  hub_.on_message("stranger", parts, "10.0.0.1", t0_);
  hub_.flush(out_);
  const std::vector<HubSent> sent = out_.take();
  EXPECT_TRUE(hub_.lost(0));
  ASSERT_EQ(service_.losses.size(), 1u);
  EXPECT_NE(service_.losses[0].why.find("cannot be read"), std::string::npos) << service_.losses[0].why;
  EXPECT_EQ(hub_.counts().refused_messages, 2u);
  EXPECT_EQ(hub_.size(), 1u);
  EXPECT_TRUE(of_kind(sent, "stranger", EnvelopeKind::kRefused).empty());  // a stranger is not answered
}

TEST_F(PeerHubTest, AMessageTheServiceDoesNotTakeLosesThePeer) {
  welcome("w", t0_);
  say("w", EnvelopeKind::kReply, 4, {std::byte{1}}, t0_);
  EXPECT_EQ(service_.replies.size(), 1u);
  say("w", EnvelopeKind::kWelcome, 0, {}, t0_);
  EXPECT_TRUE(hub_.lost(0));
  ASSERT_EQ(service_.losses.size(), 1u);
  EXPECT_EQ(service_.losses[0].why, "sent a WELCOME, which a welcomed stream node never sends");
}

TEST_F(PeerHubTest, LeaveSaysByeToEveryPeerNotLost) {
  welcome("a", t0_);
  welcome("b", t0_);
  say("a", EnvelopeKind::kBye, 0, {}, t0_);
  hub_.leave();
  hub_.flush(out_);
  const std::vector<HubSent> sent = out_.take();
  EXPECT_TRUE(of_kind(sent, "a", EnvelopeKind::kBye).empty());
  EXPECT_EQ(of_kind(sent, "b", EnvelopeKind::kBye).size(), 1u);
}

}  // namespace
}  // namespace redflow::net
