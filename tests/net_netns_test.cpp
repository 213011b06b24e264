// The network-namespace fixture (tests/netns.hpp) for real: a worker
// process inside a namespace talks to a CURVE-secured ROUTER in the root
// namespace over a veth pair; cutting the link stops the exchange and
// restoring it resumes it; a tc rate limit (tbf) and netem delay, where the
// kernel has netem, show in the round trip.
#include <gtest/gtest.h>

#include <zmq.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "net/keys.hpp"
#include "net/security.hpp"
#include "net/zap_authenticator.hpp"
#include "netns.hpp"

namespace redflow::net {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NetNamespaceTest : public ::testing::Test {
 public:
  void SetUp() override {
    if (auto reason = redflow::testing::NetNamespace::skip_reason()) GTEST_SKIP() << *reason;
    dir_ = fs::temp_directory_path() / ("redflow_netns_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    for (const char* name : {"driver", "node"}) ASSERT_TRUE(write_key_pair(path(name), *generate_key_pair(), true).ok());
    std::ofstream(path("workers.keys")) << *read_public_key_file(path("node.pub")) << " node-in-namespace\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Sends `text` to the worker and returns the round trip, or nullopt when no echo came within `limit`.
  std::optional<std::chrono::microseconds> round_trip(zmq::socket_t& router, const std::string& id, const std::string& text,
                                                      std::chrono::milliseconds limit) {
    const auto start = Clock::now();
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    router.send(zmq::buffer(text), zmq::send_flags::none);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(start + limit - Clock::now());
      if (left <= 0ms) return std::nullopt;
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, left);
      if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
      zmq::message_t from, body;
      (void)router.recv(from);
      (void)router.recv(body);
      if (body.to_string() == text) return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    }
  }
  std::chrono::microseconds median_round_trip(zmq::socket_t& router, const std::string& id, const std::string& tag) {
    std::vector<std::chrono::microseconds> times;
    for (int i = 0; i < 5; ++i) {
      auto t = round_trip(router, id, tag + std::to_string(i), 5s);
      EXPECT_TRUE(t.has_value()) << tag << i << " got no echo";
      times.push_back(t.value_or(5s));
    }
    std::sort(times.begin(), times.end());
    return times[2];
  }

  fs::path dir_;
};

// A namespace, a CURVE ROUTER in the root namespace on the veth address,
// and `redflow launch-probe --connect` inside the namespace as the worker,
// which echoes whatever the router sends it.
struct SecuredPair {
  explicit SecuredPair(NetNamespaceTest& t) : zap(context), router(context, zmq::socket_type::router) {
    if (!ns.ok()) return;
    const SecurityOptions keys{.key_file = t.path("driver.key"), .authorized_keys_file = t.path("workers.keys")};
    router.set(zmq::sockopt::linger, 0);
    if (!secure_server(router, keys, zap).ok()) return;
    router.bind("tcp://" + ns.host_address() + ":*");
    endpoint = router.get(zmq::sockopt::last_endpoint);
    output = t.path("worker.out");
    worker = ns.spawn({REDFLOW_CLI, "launch-probe", "--connect", endpoint, "--key", t.path("node.key"), "--server-key",
                       t.path("driver.pub"), "--timeout", "60"},
                      output);
  }
  // Waits for the worker's hello and welcomes it; its routing id, or empty.
  std::string hello(zmq::message_t& body) {
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 10s);
    if (!(item.revents & ZMQ_POLLIN)) return {};
    zmq::message_t id;
    (void)router.recv(id);
    (void)router.recv(body);
    const std::string routing_id = id.to_string();
    router.send(id, zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("welcome"), zmq::send_flags::none);
    return routing_id;
  }
  int say_bye(const std::string& id) {
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("bye"), zmq::send_flags::none);
    return ns.wait(worker, 10s);
  }
  redflow::testing::NetNamespace ns;
  zmq::context_t context;
  ZapAuthenticator zap;
  zmq::socket_t router;
  std::string endpoint, output;
  pid_t worker = -1;
};

TEST_F(NetNamespaceTest, AWorkerInANamespaceIsReachedCutOffAndRestored) {
  const std::string listen = "tcp://10.231.0.1:*";
  EXPECT_FALSE(check_listen_address(listen, {}).ok()) << "a veth address is not loopback";
  SecuredPair p(*this);
  ASSERT_TRUE(p.ns.ok()) << p.ns.error();
  ASSERT_GT(p.worker, 0);
  zmq::message_t hello;
  const std::string id = p.hello(hello);
  ASSERT_FALSE(id.empty()) << "no hello from the namespace: " << read_all(p.output);
  EXPECT_EQ(hello.to_string().rfind("tile host", 0), 0u) << hello.to_string();
  EXPECT_STREQ(hello.gets("User-Id"), "node-in-namespace");
  EXPECT_EQ(std::string(hello.gets("Peer-Address")), p.ns.ns_address()) << "the worker reached us from inside the namespace";
  EXPECT_EQ(p.zap.accepted(), 1u);
  EXPECT_TRUE(round_trip(p.router, id, "plain", 10s).has_value());

  ASSERT_TRUE(p.ns.set_link_up(false));
  EXPECT_FALSE(round_trip(p.router, id, "while-cut", 1500ms).has_value()) << "an echo crossed a link that is down";
  ASSERT_TRUE(p.ns.set_link_up(true));
  // TCP delivers what was held back once the link is up again (after its retransmission back-off).
  zmq::pollitem_t item{p.router.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, 15s);
  ASSERT_TRUE(item.revents & ZMQ_POLLIN) << "nothing came back after the link was restored";
  zmq::message_t from, late;
  (void)p.router.recv(from);
  (void)p.router.recv(late);
  EXPECT_EQ(late.to_string(), "while-cut");
  EXPECT_TRUE(round_trip(p.router, id, "after", 10s).has_value());

  EXPECT_EQ(p.say_bye(id), 0) << read_all(p.output);
  EXPECT_NE(read_all(p.output).find("tile: tile joined the driver at " + p.endpoint), std::string::npos) << read_all(p.output);
}

TEST_F(NetNamespaceTest, ARateLimitedLinkSlowsTheWorkerMeasurably) {
  SecuredPair p(*this);
  ASSERT_TRUE(p.ns.ok()) << p.ns.error();
  zmq::message_t hello;
  const std::string id = p.hello(hello);
  ASSERT_FALSE(id.empty()) << read_all(p.output);
  const std::string big(128 * 1024, 'x');  // 1 Mbit: at 1 Mbit/s a second one way
  // The fastest of a few unlimited trips (the first ones also grow TCP's window).
  std::chrono::microseconds fast = 10s;
  for (int i = 0; i < 4; ++i) {
    auto t = round_trip(p.router, id, big + std::to_string(i), 10s);
    ASSERT_TRUE(t.has_value());
    fast = std::min(fast, *t);
  }
  if (!p.ns.set_rate("1mbit")) {
    if (p.ns.qdisc_missing()) GTEST_SKIP() << "this kernel has no sch_tbf: " << p.ns.tc_error();
    FAIL() << "tc refused a rate limit: " << p.ns.tc_error();
  }
  auto slow = round_trip(p.router, id, big + "-limited", 20s);
  ASSERT_TRUE(slow.has_value());
  // Compared with the unlimited trips just before, not with a fixed time: a loaded machine slows both.
  EXPECT_GE(*slow - fast, 600ms) << "a 1 Mbit/s limit did not show: " << fast.count() << " us unlimited, " << slow->count() << " us limited";
  ASSERT_TRUE(p.ns.clear_qdisc());
  EXPECT_EQ(p.say_bye(id), 0) << read_all(p.output);
}

TEST_F(NetNamespaceTest, NetemDelayShowsInTheRoundTrip) {
  SecuredPair p(*this);
  ASSERT_TRUE(p.ns.ok()) << p.ns.error();
  zmq::message_t hello;
  const std::string id = p.hello(hello);
  ASSERT_FALSE(id.empty()) << read_all(p.output);
  const auto plain = median_round_trip(p.router, id, "plain-");
  if (!p.ns.set_netem(100)) {
    if (p.ns.qdisc_missing()) GTEST_SKIP() << "this kernel has no sch_netem: " << p.ns.tc_error();
    FAIL() << "tc refused a netem delay: " << p.ns.tc_error();
  }
  const auto delayed = median_round_trip(p.router, id, "delayed-");
  EXPECT_GE(delayed, 100ms) << "netem delay 100ms did not show in the round trip";
  EXPECT_GE(delayed - plain, 80ms) << plain.count() << " us without the delay, " << delayed.count() << " us with it";
  ASSERT_TRUE(p.ns.clear_qdisc());
  EXPECT_EQ(p.say_bye(id), 0) << read_all(p.output);
}

TEST_F(NetNamespaceTest, EverythingItMadeIsGoneAfterward) {
  std::string name, address;
  {
    redflow::testing::NetNamespace ns;
    ASSERT_TRUE(ns.ok()) << ns.error();
    name = ns.name();
    address = ns.host_address();
    EXPECT_NE(redflow::testing::NetNamespace::sh("ip netns list").second.find(name), std::string::npos);
    // A process in the namespace sees its own address and not the root namespace's interfaces.
    auto [code, out] = redflow::testing::NetNamespace::sh("ip netns exec " + name + " ip -o addr show");
    EXPECT_EQ(code, 0);
    EXPECT_NE(out.find(ns.ns_address() + "/30"), std::string::npos) << out;
    EXPECT_EQ(out.find(ns.host_address() + "/30"), std::string::npos) << out;
  }
  EXPECT_EQ(redflow::testing::NetNamespace::sh("ip netns list").second.find(name), std::string::npos) << "namespace left behind";
  EXPECT_NE(redflow::testing::NetNamespace::sh("ip -o addr show | grep -F ' " + address + "/'").first, 0) << "veth left behind";
}

}  // namespace
}  // namespace redflow::net
