// A link that cannot be read from any more ends (docs/remote.md
// "The wire"; the stream driver and worker alike, docs/streams.md). Driver and worker talk over one ordered, reliable stream, so
// a message from the other end that cannot be read may have held a request
// or its answer. Logging it and going on, as for a stranger's garbage, left
// the driver waiting for that answer forever while the worker's heartbeats
// kept it in service. Now the driver declares such a worker lost (its work
// is re-run elsewhere), and a worker that cannot read its driver's message
// says REFUSED, with the reason, and leaves.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "net_fake_worker.hpp"
#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "redflow/stream.hpp"
#include "runtime/tile_protocol.hpp"
#include "stream/stream_messages.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using net::EnvelopeKind;
using testing::WorkerProcesses;

// A batch whose header promises one entry more than its body holds.
std::vector<std::byte> short_batch(net::BatchWriter& writer, std::uint64_t first_id) {
  writer.add(first_id, std::vector<std::byte>(8, std::byte{1}));
  writer.add(first_id + 1, std::vector<std::byte>(8, std::byte{2}));
  return writer.take();
}

// Says HELLO as a real worker would, is welcomed, answers the first request
// it is sent with a REPLIES that does not hold its count, then beats every
// 100 ms (well inside the driver's 2 s timeout) until the driver says BYE.
struct GarblingWorker : testing::FakeWorker {
  std::atomic<bool> garbled{false}, told_bye{false};

  void run(const std::string& endpoint) override {
    zmq::context_t context;
    zmq::socket_t s(context, zmq::socket_type::dealer);
    testing::connect_and_say_hello(s, endpoint, testing::fake_tile_hello("garbler"));
    std::vector<zmq::message_t> parts;
    net::Envelope e;
    while (!stop && !told_bye) {
      zmq::pollitem_t items[] = {{s.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(20));
      beat_when_due(s);
      while (next_envelope(s, parts, e)) {
        if (e.kind == EnvelopeKind::kBye) told_bye = true;
        const bool request = e.kind == EnvelopeKind::kRequest || e.kind == EnvelopeKind::kRequests;
        if (request && !garbled) {
          net::BatchWriter writer;
          const std::uint64_t id = e.kind == EnvelopeKind::kRequest ? e.request : 1;
          net::send_envelope(s, EnvelopeKind::kReplies, 3, short_batch(writer, id));
          garbled = true;
        }
      }
    }
  }
};

TEST(NetBrokenLink, AWorkerWhoseMessageCannotBeReadIsLostAndItsWorkReRunElsewhere) {
  const Graph g = testing::random_builtin_dag(60, 21);
  const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 3), x1 = testing::seeded_bytes(testing::kNetBytes, 4);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};  // spans: the bytes must outlive them
  const Outputs want = testing::local_reference(g, inputs);
  testing::each_scheduler_beside_a_fake_worker<GarblingWorker>(g, 60, "a run beside a worker whose replies cannot be read",
                                                                [&](LoadedGraph& loaded, GarblingWorker& garbler) {
    for (int i = 0; i < 3; ++i) {
      auto out = loaded.execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
    }
    EXPECT_TRUE(garbler.garbled) << "the garbler was sent work";
    const ExecutionStats& stats = loaded.last_stats();
    ASSERT_EQ(stats.tiles.size(), 2u);
    for (const TileStats& t : stats.tiles)
      EXPECT_EQ(t.lost, t.worker == "garbler") << t.worker << ": the garbler, beating all along, is lost for its unreadable REPLIES";
    EXPECT_GE(stats.refused_messages, 1u);
    for (int i = 0; i < 200 && !garbler.told_bye; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(garbler.told_bye) << "the driver tells a lost worker to leave";
  });
}

// A fake driver's side: binds, starts the worker `args` (after REDFLOW_CLI),
// takes its HELLO, WELCOMEs it, sends it `kind` with `garbage`, and expects
// REFUSED naming `named` and the worker to exit 1.
void expect_refused_and_left(const std::vector<std::string>& args, EnvelopeKind kind, std::uint64_t id, const std::vector<std::byte>& garbage,
                             const std::string& named, net::Role role = net::Role::kTile) {
  zmq::context_t context;
  testing::Router driver(context);
  WorkerProcesses workers;
  pid_t pid = 0;
  const std::string worker = testing::start_and_welcome(driver, workers, args, pid, role);
  ASSERT_FALSE(worker.empty());
  ASSERT_TRUE(net::send_envelope(driver.socket, kind, id, garbage, worker));
  net::Envelope e;
  ASSERT_TRUE(driver.next(e, 20)) << "the worker said nothing";
  ASSERT_EQ(e.kind, EnvelopeKind::kRefused) << net::envelope_kind_name(e.kind);
  net::RefusedMessage refused;
  ASSERT_TRUE(net::decode(e.body, refused).ok());
  EXPECT_NE(refused.reason.find(named), std::string::npos) << refused.reason;
  EXPECT_EQ(workers.wait_exit(pid, 20), 1) << "the worker leaves with an error";
}

// docs/remote.md: a worker whose driver goes silent past the heartbeat
// timeout WELCOME gave exits with status 1 and says so; not before it.
TEST(NetBrokenLink, AWorkerWhoseDriverFallsSilentExitsOneAndSaysWhy) {
  zmq::context_t context;
  testing::Router driver(context);
  WorkerProcesses workers;
  const std::string log = ::testing::TempDir() + "/silent_driver_" + std::to_string(::getpid()) + ".log";
  std::vector<std::string> args = {"worker"};
  args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
  pid_t pid = 0;
  ASSERT_FALSE(testing::start_and_welcome(driver, workers, args, pid, net::Role::kTile, 500, log).empty());
  const auto welcomed = std::chrono::steady_clock::now();
  EXPECT_EQ(workers.wait_exit(pid, 30), 1) << "a worker whose driver fell silent did not exit 1";
  EXPECT_GE(std::chrono::steady_clock::now() - welcomed, std::chrono::milliseconds(500)) << "it left before the timeout";
  const std::string said = testing::file_text(log);
  EXPECT_NE(said.find("has been silent for more than 500 ms"), std::string::npos) << said;
  std::remove(log.c_str());
}

// docs/security.md: peers may only read slots; any other request on a
// worker's peer socket is refused and logged. A write, then a read, from a
// socket of the test's: the read is answered, the write never, and the
// worker says why.
TEST(NetBrokenLink, AWriteOnAWorkersPeerSocketIsRefusedAndLoggedWhileReadsAreServed) {
  zmq::context_t context;
  testing::Router driver(context);
  WorkerProcesses workers;
  workers.set_quiet(false);  // the refusal is a warning
  const std::string log = ::testing::TempDir() + "/peer_write_" + std::to_string(::getpid()) + ".log";
  std::vector<std::string> args = {"worker"};
  args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
  pid_t pid = 0;
  net::HelloMessage hello;
  ASSERT_FALSE(testing::start_and_welcome(driver, workers, args, pid, net::Role::kTile, 120000, log, &hello).empty());
  ASSERT_NE(hello.peer_port, 0u) << "a worker of a driver on loopback has a peer socket";
  zmq::socket_t peer(context, zmq::socket_type::dealer);
  peer.set(zmq::sockopt::linger, 0);
  peer.connect("tcp://127.0.0.1:" + std::to_string(hello.peer_port));
  const std::vector<std::byte> value(64, std::byte{7});
  runtime::DataNodeMessage write;
  write.tag = runtime::DataTag{1, 3, 0};
  write.slot = 0;
  write.bytes = value.size();
  write.payload = value;
  std::vector<std::byte> frame;
  runtime::encode(write, frame);
  ASSERT_TRUE(net::send_envelope(peer, EnvelopeKind::kRequest, 1, frame));
  frame.clear();
  runtime::encode(runtime::ReadSlotMessage{0, runtime::DataTag{1, 3, 0}, value.size()}, frame);
  ASSERT_TRUE(net::send_envelope(peer, EnvelopeKind::kRequest, 2, frame));
  // Requests are taken in order: a reply to the write would come before the read's.
  std::vector<std::uint64_t> answered;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<zmq::message_t> parts;
  while ((answered.empty() || answered.back() != 2) && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{peer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    while (net::receive_message(peer, parts)) {
      net::Envelope e;
      wire::Error error;
      if (net::decode_envelope(net::part_spans(parts, 0), e, error).ok() && e.kind == EnvelopeKind::kReply) answered.push_back(e.request);
    }
  }
  EXPECT_EQ(answered, std::vector<std::uint64_t>{2}) << "the read is answered and the write is not";
  const std::string said = testing::file_text(log);
  EXPECT_NE(said.find("refused a message from a peer: a request that is not a slot read"), std::string::npos) << said;
  std::remove(log.c_str());
}

TEST(NetBrokenLink, AWorkerThatCannotReadItsDriversMessageSaysWhyAndLeaves) {
  net::BatchWriter writer;
  std::vector<std::string> args = {"worker"};
  args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
  expect_refused_and_left(args, EnvelopeKind::kRequests, 3, short_batch(writer, 1), "REQUESTS");
}

TEST(NetBrokenLink, AStreamWorkerThatCannotReadItsDriversMessageSaysWhyAndLeaves) {
  expect_refused_and_left({"worker", "--cores", "1"}, EnvelopeKind::kRequest, 0, std::vector<std::byte>{std::byte{0xee}, std::byte{0}},
                          "type 238", net::Role::kNode);
}

// A stream worker that says HELLO as a real one would, with every built-in
// operator, and once WELCOMEd sends a message with a bad magic while it
// keeps beating: the run ends with an error naming it, instead of waiting.
TEST(NetBrokenLink, AStreamWorkerWhoseMessageCannotBeReadEndsTheRunNamingIt) {
  const auto reg = stream::OperatorRegistry::with_builtins();
  auto p = stream::Program::from_dot(R"(digraph g { src [operator="counter", args="n=100 start=1"]; out [operator="collect"]; src -> out [token=8]; })", reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::atomic<bool> stop{false};
  std::thread garbler;
  stream::ClusterOptions c;
  c.cluster.min_workers = 1;
  c.cluster.wait_s = 20;
  c.cluster.on_listening = [&](const std::string& endpoint) {
    garbler = std::thread([&, endpoint] {
      net::HelloMessage hello;
      hello.roles = {{net::Role::kNode, stream::kStreamProtocolVersion}};
      hello.name = "stream-garbler";
      hello.host = "test";
      hello.operators = reg.names();
      zmq::context_t context;
      zmq::socket_t s(context, zmq::socket_type::dealer);
      testing::connect_and_say_hello(s, endpoint, hello);
      bool garbled = false;
      std::vector<zmq::message_t> parts;
      while (!stop) {
        zmq::pollitem_t items[] = {{s.handle(), 0, ZMQ_POLLIN, 0}};
        zmq::poll(items, 1, std::chrono::milliseconds(50));
        net::send_envelope(s, EnvelopeKind::kHeartbeat, 0, {});
        while (net::receive_message(s, parts)) {
          net::Envelope e;
          wire::Error error;
          if (garbled || !net::decode_envelope(net::part_spans(parts), e, error).ok() || e.kind != EnvelopeKind::kWelcome) continue;
          std::vector<std::byte> header;
          net::encode_header(EnvelopeKind::kReply, 0, header);
          header[0] = std::byte{'X'};  // bad magic
          s.send(zmq::buffer(header), zmq::send_flags::sndmore);
          s.send(zmq::buffer(std::vector<std::byte>(8)), zmq::send_flags::none);
          garbled = true;
        }
      }
    });
  };
  testing::within_seconds(60, "a stream run beside a worker whose message cannot be read", [&] {
    auto r = stream::run_cluster(*p, stream::RunOptions{}, c);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("'stream-garbler'"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find("cannot be read"), std::string::npos) << r.status().ToString();
  });
  stop = true;
  if (garbler.joinable()) garbler.join();
}

}  // namespace
}  // namespace redflow
