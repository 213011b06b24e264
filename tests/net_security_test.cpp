// Keys, authorized keys and CURVE on real sockets (src/net/keys.hpp,
// security.hpp, zap_authenticator.hpp, docs/security.md): who gets in, who is
// refused and counted, that bytes on the wire are encrypted, and that every
// bad key file or listen address is a named error.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <zmq.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli_helpers.hpp"
#include "net/keys.hpp"
#include "net/security.hpp"
#include "net/zap_authenticator.hpp"
#include "tcp_relay.hpp"

namespace redflow::net {
namespace {

namespace fs = std::filesystem;
using redflow::testing::CliTest;
using redflow::testing::run_cli;

class NetSecurityTest : public CliTest {
 protected:
  // A fresh key pair written under PREFIX.key / PREFIX.pub in the test directory.
  KeyPair make_keys(const std::string& prefix) {
    auto keys = generate_key_pair();
    EXPECT_TRUE(keys.ok()) << keys.status().ToString();
    EXPECT_TRUE(write_key_pair(path(prefix), *keys, false).ok());
    return *keys;
  }
  // The driver's and node1's options for a link through a relay: CURVE with
  // the keys written as driver.* and node1.* when `secured`, else plain text.
  std::pair<SecurityOptions, SecurityOptions> driver_and_node1(bool secured) {
    if (!secured) return {};
    return {SecurityOptions{.key_file = path("driver.key"), .authorized_keys_file = path("workers.keys")},
            SecurityOptions{.key_file = path("node1.key"), .server_public_key_file = path("driver.pub")}};
  }
};

// Records a client socket's handshake outcome.
class HandshakeWatch : public zmq::monitor_t {
 public:
  int succeeded = 0, failed_auth = 0, failed_protocol = 0, failed_other = 0;
  void on_event_handshake_succeeded(const zmq_event_t&, const char*) override { ++succeeded; }
  void on_event_handshake_failed_auth(const zmq_event_t&, const char*) override { ++failed_auth; }
  void on_event_handshake_failed_protocol(const zmq_event_t&, const char*) override { ++failed_protocol; }
  void on_event_handshake_failed_no_detail(const zmq_event_t&, const char*) override { ++failed_other; }
  int outcomes() const { return succeeded + failed_auth + failed_protocol + failed_other; }
  // Polls the monitor until the handshake has ended one way or another (at most 10 s).
  void wait_for_outcome() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (outcomes() == 0 && std::chrono::steady_clock::now() < deadline) check_event(50);
    ASSERT_GT(outcomes(), 0) << "the handshake neither succeeded nor failed within 10 s";
  }
};

std::string receive_or_empty(zmq::socket_t& s, int ms) {
  zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(ms));
  if (!(item.revents & ZMQ_POLLIN)) return {};
  zmq::message_t m;
  (void)s.recv(m);
  return m.to_string();
}

TEST_F(NetSecurityTest, KeygenWritesAPrivateKeyAndRefusesToOverwriteIt) {
  auto r = run_cli("keygen --out " + path("node1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  struct stat st{};
  ASSERT_EQ(::stat(path("node1.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto pub = read_public_key_file(path("node1.pub"));
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  auto pair = read_secret_key_file(path("node1.key"));
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  EXPECT_EQ(pair->public_key, *pub);  // the .pub is the secret key's own half
  EXPECT_NE(r.output.find(*pub), std::string::npos) << r.output;
  // What to do with the pair on either side: the same command makes a worker's and a driver's.
  EXPECT_NE(r.output.find("for a worker: give the driver's operator " + path("node1") + ".pub"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("for a driver (or Job Manager): start it with --key " + path("node1") + ".key --authorized-keys"), std::string::npos)
      << r.output;

  r = run_cli("keygen --out " + path("node1"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("node1.key exists"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  EXPECT_EQ(*read_public_key_file(path("node1.pub")), *pub) << "a refused keygen changed the key";

  r = run_cli("keygen --force --out " + path("node1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(*read_public_key_file(path("node1.pub")), *pub);
  EXPECT_EQ(read_secret_key_file(path("node1.key"))->public_key, *read_public_key_file(path("node1.pub")));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "temporary left: " << e.path();
}

TEST_F(NetSecurityTest, SecretKeyFilesOthersCanReadOrThatAreMalformedAreNamed) {
  const KeyPair keys = make_keys("k");
  ::chmod(path("k.key").c_str(), 0644);
  auto r = read_secret_key_file(path("k.key"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("may be read by others (mode 644): run chmod 600"), std::string::npos) << r.status().ToString();

  auto write_private = [&](const std::string& name, const std::string& text) {
    write(name, text);
    ::chmod(path(name).c_str(), 0600);
    return read_secret_key_file(path(name));
  };
  r = write_private("short.key", keys.secret_key.substr(0, 39) + "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("short.key:1: a CURVE key has 40 Z85 characters, this one 39"), std::string::npos)
      << r.status().ToString();
  r = write_private("badchar.key", "# comment\n" + keys.secret_key.substr(0, 39) + "\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("badchar.key:2: '\"' is not a Z85 character"), std::string::npos) << r.status().ToString();
  r = write_private("two.key", keys.secret_key + "\n" + keys.secret_key + "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected one key line, found 2 lines"), std::string::npos) << r.status().ToString();
  r = write_private("empty.key", "");
  EXPECT_FALSE(r.ok());
  r = read_secret_key_file(path("missing.key"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing.key"), std::string::npos);
  r = write_private("good.key", keys.secret_key + "\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->public_key, keys.public_key);
}

TEST_F(NetSecurityTest, AuthorizedKeysNameEveryBadLineByNumber) {
  std::vector<KeyPair> k;
  for (int i = 0; i < 3; ++i) k.push_back(*generate_key_pair());
  // No key starts with '#' (see keys.hpp), so a '#' line is always a comment, even "#<key>".
  for (int i = 0; i < 2000; ++i) ASSERT_NE(generate_key_pair()->public_key[0], '#');
  const std::string text = "# workers\n\n" + k[0].public_key + "  node one\n" + k[1].public_key + "\n#" + k[2].public_key +
                           "\n   " + k[2].public_key.substr(0, 40) + "\tthird\n";
  auto keys = parse_authorized_keys(text, "w.keys");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  ASSERT_EQ(keys->size(), 3u);
  EXPECT_EQ((*keys)[0].name, "node one");
  EXPECT_EQ((*keys)[0].line, 3);
  EXPECT_EQ((*keys)[1].name, key_prefix(k[1].public_key));
  EXPECT_EQ((*keys)[2].public_key, k[2].public_key);
  EXPECT_EQ((*keys)[2].name, "third");
  EXPECT_EQ((*keys)[2].line, 6);

  auto bad = parse_authorized_keys("# ok\n" + k[0].public_key + "\n" + k[1].public_key.substr(0, 20) + " short\n", "w.keys");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("authorized keys w.keys:3: a CURVE key has 40 Z85 characters, this one 20"), std::string::npos)
      << bad.status().ToString();
  bad = parse_authorized_keys(k[0].public_key + " a\n" + k[0].public_key + " b\n", "w.keys");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("w.keys:2: key " + key_prefix(k[0].public_key) + " listed twice"), std::string::npos)
      << bad.status().ToString();
  auto missing = read_authorized_keys(path("none.keys"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.keys: cannot open"), std::string::npos);
}

TEST_F(NetSecurityTest, ListeningBeyondLoopbackNeedsKeys) {
  const SecurityOptions none;
  for (const char* ok : {"tcp://127.0.0.1:*", "tcp://127.0.0.1:7000", "tcp://localhost:7000", "tcp://[::1]:7000", "ipc:///tmp/x", "inproc://a"})
    EXPECT_TRUE(check_listen_address(ok, none).ok()) << ok;
  for (const char* bad : {"tcp://0.0.0.0:7000", "tcp://*:7000", "tcp://10.1.2.3:7000", "tcp://eth0:7000", "tcp://[::]:7000"}) {
    Status s = check_listen_address(bad, none);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string("refusing to listen on ") + bad + " without keys"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("--key"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("--authorized-keys"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(check_listen_address("tcp://0.0.0.0:7000", {.key_file = "d.key"}).ok()) << "half the keys are not keys";
  EXPECT_TRUE(check_listen_address("tcp://0.0.0.0:7000", {.key_file = "d.key", .authorized_keys_file = "w.keys"}).ok());
  EXPECT_FALSE(check_listen_address("udp://127.0.0.1:7000", none).ok());
  EXPECT_EQ(endpoint_host("tcp://[::1]:7000"), "::1");
  EXPECT_EQ(endpoint_host("tcp://10.0.0.1;127.0.0.1:5"), "127.0.0.1");
}

TEST_F(NetSecurityTest, HalfConfiguredSecurityIsNamed) {
  make_keys("d");
  zmq::context_t context;
  ZapAuthenticator zap(context);
  zmq::socket_t s(context, zmq::socket_type::router);
  Status st = secure_server(s, {.key_file = path("d.key")}, zap);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--key given without --authorized-keys"), std::string::npos) << st.message();
  write("empty.keys", "# nobody yet\n");
  st = secure_server(s, {.key_file = path("d.key"), .authorized_keys_file = path("empty.keys")}, zap);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no key listed"), std::string::npos) << st.message();
  zmq::socket_t c(context, zmq::socket_type::dealer);
  st = secure_client(c, {.key_file = path("d.key")});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--key given without --server-key"), std::string::npos) << st.message();
  EXPECT_TRUE(secure_client(c, {}).ok());
  EXPECT_FALSE(zap.running());
}

// The driver of the socket tests: a ROUTER on loopback, secured with
// driver.key and `authorized` (plain when both are empty).
struct Driver {
  Driver(const SecurityOptions& sec) : zap(context), router(context, zmq::socket_type::router) {
    router.set(zmq::sockopt::linger, 0);
    status = secure_server(router, sec, zap);
    if (!status.ok()) return;
    router.bind("tcp://127.0.0.1:*");
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }
  int port() const { return std::stoi(endpoint.substr(endpoint.rfind(':') + 1)); }
  zmq::context_t context;
  ZapAuthenticator zap;
  zmq::socket_t router;
  Status status;
  std::string endpoint;
};

// A worker: a DEALER with its own context, watched from before it connects.
// `claimed_public_key`, when given, replaces the public half of its key pair.
struct Worker {
  Worker(const SecurityOptions& sec, const std::string& endpoint, const std::string& claimed_public_key = "")
      : dealer(context, zmq::socket_type::dealer) {
    dealer.set(zmq::sockopt::linger, 0);
    status = secure_client(dealer, sec);
    if (status.ok() && !claimed_public_key.empty()) dealer.set(zmq::sockopt::curve_publickey, claimed_public_key);
    watch.init(dealer, "inproc://watch." + std::to_string(reinterpret_cast<std::uintptr_t>(this)),
               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                   ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    if (status.ok()) dealer.connect(endpoint);
  }
  zmq::context_t context;
  zmq::socket_t dealer;
  HandshakeWatch watch;
  Status status;
};

TEST_F(NetSecurityTest, OnlyListedKeysGetInAndTheRestAreRefusedAndCounted) {
  make_keys("driver");
  const KeyPair node1 = make_keys("node1"), stranger = make_keys("stranger");
  write("workers.keys", "# the cluster\n" + node1.public_key + " node1\n");
  Driver driver({.key_file = path("driver.key"), .authorized_keys_file = path("workers.keys")});
  ASSERT_TRUE(driver.status.ok()) << driver.status.ToString();

  Worker good({.key_file = path("node1.key"), .server_public_key_file = path("driver.pub")}, driver.endpoint);
  ASSERT_TRUE(good.status.ok()) << good.status.ToString();
  good.dealer.send(zmq::str_buffer("hello from node1"), zmq::send_flags::none);
  zmq::pollitem_t item{driver.router.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::seconds(10));
  ASSERT_TRUE(item.revents & ZMQ_POLLIN) << "the authorized worker's message never arrived";
  zmq::message_t id, body;
  ASSERT_TRUE(driver.router.recv(id));
  ASSERT_TRUE(driver.router.recv(body));
  EXPECT_EQ(body.to_string(), "hello from node1");
  EXPECT_STREQ(body.gets("User-Id"), "node1") << "the driver learns which worker it is from the authorized-keys name";
  driver.router.send(id, zmq::send_flags::sndmore);
  driver.router.send(zmq::str_buffer("welcome"), zmq::send_flags::none);
  EXPECT_EQ(receive_or_empty(good.dealer, 10000), "welcome");
  EXPECT_EQ(driver.zap.accepted(), 1u);

  Worker unlisted({.key_file = path("stranger.key"), .server_public_key_file = path("driver.pub")}, driver.endpoint);
  unlisted.dealer.send(zmq::str_buffer("let me in"), zmq::send_flags::none);
  unlisted.watch.wait_for_outcome();
  EXPECT_EQ(unlisted.watch.failed_auth, 1);
  EXPECT_EQ(unlisted.watch.succeeded, 0);
  EXPECT_GE(driver.zap.refused(), 1u);
  const auto refusals = driver.zap.recent_refusals();
  ASSERT_FALSE(refusals.empty());
  EXPECT_EQ(refusals[0].key_prefix, key_prefix(stranger.public_key));
  EXPECT_EQ(refusals[0].mechanism, "CURVE");
  EXPECT_EQ(refusals[0].address, "127.0.0.1");

  Worker plain({}, driver.endpoint);
  plain.dealer.send(zmq::str_buffer("plain text"), zmq::send_flags::none);
  plain.watch.wait_for_outcome();
  EXPECT_EQ(plain.watch.succeeded, 0);
  EXPECT_EQ(plain.watch.failed_protocol + plain.watch.failed_other, plain.watch.outcomes());
  // The driver never asks ZAP about a plain peer, yet logs and counts it (its socket's handshake monitor).
  auto handshake_refusals = [&] {
    int n = 0;
    for (const auto& r : driver.zap.recent_refusals()) n += r.mechanism == "handshake" && r.address == driver.endpoint;
    return n;
  };
  EXPECT_EQ(refusals[0].mechanism, "CURVE");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (handshake_refusals() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(handshake_refusals(), 0) << "the plain peer's refusal was not counted";

  // A worker holding node1's public key but not its secret cannot pass as node1.
  write("impostor.key", stranger.secret_key + "\n");
  ::chmod(path("impostor.key").c_str(), 0600);
  const std::uint64_t refused_before = driver.zap.refused();
  Worker impostor({.key_file = path("impostor.key"), .server_public_key_file = path("driver.pub")}, driver.endpoint, node1.public_key);
  ASSERT_TRUE(impostor.status.ok()) << impostor.status.ToString();
  impostor.dealer.send(zmq::str_buffer("I am node1"), zmq::send_flags::none);
  impostor.watch.wait_for_outcome();
  EXPECT_EQ(impostor.watch.succeeded, 0) << "the impostor's handshake succeeded";
  const auto refused_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (driver.zap.refused() == refused_before && std::chrono::steady_clock::now() < refused_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(driver.zap.refused(), refused_before) << "the impostor's refusal was not counted";
  EXPECT_EQ(receive_or_empty(driver.router, 0), "") << "a refused peer's message reached the driver";
  EXPECT_EQ(driver.zap.accepted(), 1u);
}

TEST_F(NetSecurityTest, CurveTrafficIsEncryptedOnTheWire) {
  make_keys("driver");
  const KeyPair node1 = make_keys("node1");
  write("workers.keys", node1.public_key + " node1\n");
  const std::string marker = "PLAINTEXT-MARKER-0123456789";
  // Control first: the same exchange without keys shows the marker to the relay, so the check can fail.
  for (bool secured : {false, true}) {
    const auto [server, client] = driver_and_node1(secured);
    Driver driver(server);
    ASSERT_TRUE(driver.status.ok()) << driver.status.ToString();
    redflow::testing::TcpRelay relay(driver.port());
    ASSERT_NE(relay.port(), 0);
    Worker worker(client, "tcp://127.0.0.1:" + std::to_string(relay.port()));
    worker.dealer.send(zmq::buffer(marker), zmq::send_flags::none);
    zmq::message_t id, body;
    zmq::pollitem_t item{driver.router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::seconds(10));
    ASSERT_TRUE(item.revents & ZMQ_POLLIN) << "secured=" << secured;
    ASSERT_TRUE(driver.router.recv(id));
    ASSERT_TRUE(driver.router.recv(body));
    EXPECT_EQ(body.to_string(), marker);
    driver.router.send(id, zmq::send_flags::sndmore);
    driver.router.send(zmq::buffer(marker + "-reply"), zmq::send_flags::none);
    EXPECT_EQ(receive_or_empty(worker.dealer, 10000), marker + "-reply");
    const std::string wire = relay.seen();
    EXPECT_GT(wire.size(), marker.size());
    if (secured) {
      EXPECT_EQ(wire.find(marker), std::string::npos) << "the payload crossed the wire in plain text";
      EXPECT_NE(wire.find("CURVE"), std::string::npos) << "the greeting names the mechanism";
    } else {
      EXPECT_NE(wire.find(marker), std::string::npos) << "the relay did not see the plain exchange";
    }
  }
}

// docs/security.md: someone on the path who changes bytes of a CURVE
// connection makes them fail authentication: nothing changed is delivered,
// and the driver counts the failure. Control first: without keys the
// changed message arrives changed, so the check can fail.
TEST_F(NetSecurityTest, ChangedBytesOnAKeyedLinkFailAuthenticationAndAreNotDelivered) {
  make_keys("driver");
  const KeyPair node1 = make_keys("node1");
  write("workers.keys", node1.public_key + " node1\n");
  const std::string first = "first-message-arrives-whole", second = "second-message-is-changed-on-the-way";
  for (bool secured : {false, true}) {
    SCOPED_TRACE(secured ? "with keys" : "without keys");
    const auto [server, client] = driver_and_node1(secured);
    Driver driver(server);
    ASSERT_TRUE(driver.status.ok()) << driver.status.ToString();
    redflow::testing::TcpRelay relay(driver.port());
    ASSERT_NE(relay.port(), 0);
    Worker worker(client, "tcp://127.0.0.1:" + std::to_string(relay.port()));
    worker.dealer.send(zmq::buffer(first), zmq::send_flags::none);
    zmq::message_t id, body;
    zmq::pollitem_t item{driver.router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::seconds(10));
    ASSERT_TRUE(item.revents & ZMQ_POLLIN);
    ASSERT_TRUE(driver.router.recv(id));
    ASSERT_TRUE(driver.router.recv(body));
    ASSERT_EQ(body.to_string(), first);
    // A byte 20 into the next message (past its frame header, inside the payload or its box).
    const std::uint64_t refused_before = driver.zap.refused();
    relay.flip_to_target_at(relay.to_target() + 20);
    worker.dealer.send(zmq::buffer(second), zmq::send_flags::none);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string got;
    while (got.empty() && driver.zap.refused() == refused_before && std::chrono::steady_clock::now() < deadline) {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(10)) > 0 && driver.router.recv(id)) {
        (void)driver.router.recv(body);
        got = body.to_string();
      }
    }
    if (secured) {
      EXPECT_GT(driver.zap.refused(), refused_before) << "the driver did not count the message that failed authentication";
      EXPECT_TRUE(got.empty() || got == second) << "a changed message was delivered: " << got;
    } else {
      EXPECT_EQ(got.size(), second.size()) << "the plain message did not arrive";
      EXPECT_NE(got, second) << "the relay changed no byte";
      EXPECT_EQ(driver.zap.refused(), refused_before) << "without keys nothing checks the bytes";
    }
  }
}

}  // namespace
}  // namespace redflow::net
