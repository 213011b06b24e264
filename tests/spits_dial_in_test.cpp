// The SPITS Job Manager's dial-in side (src/spits/task_manager_link.hpp), a
// service on the peer hub, driven without a socket, a thread or a process:
// HELLOs and messages are handed to its hub as bytes from a routing id, the
// clock is a value the test advances, and what the link sends is recorded.
// Who is admitted, and what becomes of the tasks a Task Manager held when it
// is lost: silent, cut off, or past a batch that never reached it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "hub_recording.hpp"
#include "net/worker_messages.hpp"
#include "spits/net_messages.hpp"
#include "spits/task_manager_link.hpp"

namespace redflow::spits {
namespace {

using namespace std::chrono_literals;
using testing::HubSent;
using testing::of_kind;
using testing::refusal_to;

class CountingWakeup final : public Wakeup {
 public:
  void notify() override { ++count; }
  int count = 0;
};

net::HelloMessage task_manager_hello(const std::string& name) {
  return testing::hello_offering(net::Role::kTaskManager, kSpitsProtocolVersion, name);
}

class SpitsDialInTest : public ::testing::Test {
 protected:
  static std::unique_ptr<TaskManagerLink> make_link(Wakeup& wakeup) {
    LinkOptions o;
    o.cluster.listen = "tcp://127.0.0.1:*";
    o.cluster.heartbeat_timeout_s = 2;
    o.plugin = "/jobs/job.so";
    o.job = "job";
    o.args = {"a=1"};
    return TaskManagerLink::without_sockets(o, wakeup);
  }
  std::vector<HubSent> say(const std::string& from, net::EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                           net::PeerHub::Time at) {
    return driver_.say(from, kind, request, std::move(body), at);
  }
  std::vector<HubSent> say_hello(const std::string& from, const net::HelloMessage& hello, net::PeerHub::Time at) {
    return driver_.say_hello(from, hello, at);
  }
  // `from` dials in as Task Manager `name`; the Task Manager the Job Manager gets.
  std::unique_ptr<TaskManager> join(const std::string& from, const std::string& name, net::PeerHub::Time at) {
    const std::vector<HubSent> sent = say_hello(from, task_manager_hello(name), at);
    EXPECT_EQ(of_kind(sent, from, net::EnvelopeKind::kWelcome).size(), 1u) << "no WELCOME to " << from;
    auto joined = link_->take_joined();
    return joined.empty() ? nullptr : std::move(joined[0]);
  }
  // Pushes tasks 1..n to `tm` and flushes; what went out.
  std::vector<HubSent> push(TaskManager& tm, unsigned n) {
    std::vector<TaskMessage> tasks;
    for (unsigned i = 1; i <= n; ++i) tasks.push_back({i, "t" + std::to_string(i)});
    tm.push(tasks);
    return driver_.flush();
  }
  std::vector<HubSent> tick(net::PeerHub::Time at) { return driver_.tick(at); }
  static std::vector<ResultMessage> pull(TaskManager& tm) {
    std::vector<ResultMessage> out;
    tm.pull(out);
    return out;
  }

  CountingWakeup wakeup_;
  std::unique_ptr<TaskManagerLink> link_ = make_link(wakeup_);
  testing::HubDriver driver_{*link_->hub(), [this](net::HubSender& out) { link_->flush(out); }};
  testing::RecordingSender& out_ = driver_.out;
  const net::PeerHub::Time t0_ = net::PeerHub::Time{} + 1000s;
};

TEST_F(SpitsDialInTest, ATaskManagerIsWelcomedWithTheJobAndASecondOfTheSameNameIsRefused) {
  const std::vector<HubSent> sent = say_hello("r1", task_manager_hello("tm"), t0_);
  const net::WelcomeMessage w = testing::welcome_to(sent, "r1");
  EXPECT_EQ(w.role, net::Role::kTaskManager);
  EXPECT_EQ(w.heartbeat_interval_ms, 500u);  // the one policy: a quarter of the timeout
  JobWelcome job;
  ASSERT_TRUE(decode(w.service, job).ok());
  EXPECT_EQ(job.plugin, "/jobs/job.so");
  EXPECT_EQ(link_->live(), 1u);
  EXPECT_EQ(link_->take_joined().size(), 1u);
  EXPECT_EQ(refusal_to(say_hello("r2", task_manager_hello("tm"), t0_), "r2"),
            "a Task Manager named 'tm' serves this job already (give each worker its own --name)");
  EXPECT_EQ(link_->live(), 1u);
}

TEST_F(SpitsDialInTest, AHelloWithoutTheTaskManagerRoleOrAtAnotherVersionIsRefused) {
  net::HelloMessage tile = task_manager_hello("tile");
  tile.roles = {{net::Role::kTile, 5}};
  tile.slots = 2;  // what a tile offers
  tile.slot_bytes = 1;
  EXPECT_EQ(refusal_to(say_hello("t", tile, t0_), "t"), net::role_refusal(tile, net::Role::kTaskManager, kSpitsProtocolVersion));
  net::HelloMessage old = task_manager_hello("old");
  old.roles = {{net::Role::kTaskManager, static_cast<std::uint16_t>(kSpitsProtocolVersion + 1)}};
  EXPECT_NE(refusal_to(say_hello("o", old, t0_), "o").find("protocol version"), std::string::npos);
  EXPECT_EQ(link_->live(), 0u);
  EXPECT_TRUE(link_->take_joined().empty());
}

TEST_F(SpitsDialInTest, ASilentTaskManagerIsLostAndItsTasksComeBack) {
  auto tm = join("r", "tm", t0_);
  ASSERT_NE(tm, nullptr);
  const std::vector<HubSent> sent = push(*tm, 3);
  ASSERT_EQ(of_kind(sent, "r", net::EnvelopeKind::kRequest).size(), 1u);
  tick(t0_ + 1s);
  EXPECT_EQ(link_->live(), 1u);
  EXPECT_EQ(of_kind(tick(t0_ + 2500ms), "r", net::EnvelopeKind::kBye).size(), 1u);
  EXPECT_EQ(link_->live(), 0u);
  const std::vector<ResultMessage> back = pull(*tm);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].outcome, ResultMessage::Outcome::kLost);  // what its one Worker was running
  EXPECT_EQ(back[1].outcome, ResultMessage::Outcome::kReturned);
  EXPECT_EQ(back[2].outcome, ResultMessage::Outcome::kReturned);
  EXPECT_EQ(tm->room(), 0u);
}

TEST_F(SpitsDialInTest, ADroppedConnectionLosesTheTaskManagerAtTheNextSend) {
  auto tm = join("r", "tm", t0_);
  ASSERT_NE(tm, nullptr);
  out_.unreachable.insert("r");
  push(*tm, 1);
  EXPECT_EQ(link_->live(), 0u);
  const std::vector<ResultMessage> back = pull(*tm);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].outcome, ResultMessage::Outcome::kLost);
  EXPECT_NE(back[0].bytes.find("its connection dropped"), std::string::npos) << back[0].bytes;
}

TEST_F(SpitsDialInTest, AHeartbeatPastABatchNeverAcknowledgedLosesTheTaskManager) {
  auto tm = join("r", "tm", t0_);
  ASSERT_NE(tm, nullptr);
  const std::vector<HubSent> sent = push(*tm, 1);
  ASSERT_EQ(of_kind(sent, "r", net::EnvelopeKind::kRequest).size(), 1u);
  const std::uint64_t batch = of_kind(sent, "r", net::EnvelopeKind::kRequest)[0].request;
  // Its heartbeat names the batch before: nothing is missing yet.
  say("r", net::EnvelopeKind::kHeartbeat, batch - 1, {}, t0_ + 100ms);
  EXPECT_EQ(link_->live(), 1u);
  // The hub's heartbeat carries the last batch sent.
  EXPECT_EQ(of_kind(tick(t0_ + 500ms), "r", net::EnvelopeKind::kHeartbeat).at(0).request, batch);
  // It says it took that batch, whose ACK never came: the batch never reached it.
  say("r", net::EnvelopeKind::kHeartbeat, batch, {}, t0_ + 600ms);
  EXPECT_EQ(link_->live(), 0u);
  const std::vector<ResultMessage> back = pull(*tm);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_NE(back[0].bytes.find("never received task batch"), std::string::npos) << back[0].bytes;
}

TEST_F(SpitsDialInTest, LateResultsFromALostSessionAreDiscardedAndTheWorkerBackUnderItsNameIsTakenAgain) {
  auto tm = join("r", "tm", t0_);
  ASSERT_NE(tm, nullptr);
  push(*tm, 1);
  tick(t0_ + 2500ms);
  ASSERT_EQ(link_->live(), 0u);
  ASSERT_EQ(pull(*tm).size(), 1u);
  std::vector<std::byte> results;
  const std::vector<ResultMessage> one{{1, ResultMessage::Outcome::kOk, "r1"}};
  encode_results(4, 0, one, results);
  EXPECT_TRUE(say("r", net::EnvelopeKind::kReply, 1, results, t0_ + 3s).empty());  // no ACK
  EXPECT_EQ(link_->hub()->counts().discarded_late, 1u);
  EXPECT_TRUE(pull(*tm).empty());
  // The same worker dials in again (`--persist`): the same Task Manager, live again, not a new one.
  const std::vector<HubSent> sent = say_hello("r-again", task_manager_hello("tm"), t0_ + 4s);
  EXPECT_EQ(of_kind(sent, "r-again", net::EnvelopeKind::kWelcome).size(), 1u);
  EXPECT_EQ(link_->live(), 1u);
  EXPECT_TRUE(link_->take_joined().empty());
  EXPECT_GT(tm->room(), 0u);
  // Its results, re-sent on the new session, are taken (late: the task went back to the queue) and acknowledged.
  const std::vector<HubSent> acked = say("r-again", net::EnvelopeKind::kReply, 1, results, t0_ + 5s);
  EXPECT_EQ(of_kind(acked, "r-again", net::EnvelopeKind::kAck).size(), 1u);
  ASSERT_EQ(pull(*tm).size(), 1u);
}

}  // namespace
}  // namespace redflow::spits
