// Transfers between worker processes (docs/remote.md, "Transfers"): a value
// in one worker's slot goes straight to the worker that needs it, over the
// workers' peer sockets, not through the driver (the paper's TLM-to-TLM
// transfer); with keys, over CURVE with the driver's authorized keys; and
// with peer transfers off, relayed by the driver as before. Every run's
// outputs equal the sequential interpreter's.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "net/keys.hpp"
#include "net/peer_links.hpp"
#include "net/remote_tile.hpp"
#include "net/tile_server.hpp"
#include "loopback_capture.hpp"
#include "net/security.hpp"
#include "net/sockets.hpp"
#include "net_workers.hpp"
#include "runtime/tile_protocol.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;
using testing::WorkerProcesses;

struct Moved {
  std::uint64_t worker_to_worker = 0;  // bytes of traced transfers from one worker's slot to another's
  std::uint64_t direct = 0;            // bytes the workers fetched from each other (TileStats::peer_bytes_in)
};

// Runs `executions` executions of `g` on two workers (started with
// `worker_args[0]` and `[1]`), checks each against the sequential interpreter, and
// adds up what moved between the workers. Under work stealing on a loaded
// machine one worker may run a small graph alone (no transfer between
// them): then up to 20 executions in all, until something moved.
Moved run_on_two_workers(const Graph& g, const Inputs& inputs, RuntimeOptions o, const std::vector<std::vector<std::string>>& worker_args,
                         int executions) {
  const Outputs want = testing::local_reference(g, inputs);
  WorkerProcesses workers;
  o.cluster.on_listening = [&](const std::string& endpoint) {
    for (const auto& args : worker_args) workers.spawn(endpoint, args);
  };
  Moved moved;
  testing::within_seconds(60, "two workers", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions eo;
    eo.trace = true;
    for (int e = 0; e < executions || (moved.worker_to_worker == 0 && e < 20); ++e) {
      auto out = loaded->execute(inputs, eo);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want) << "execution " << e;
      const ExecutionStats& st = loaded->last_stats();
      ASSERT_EQ(st.lost_tiles, 0u);
      std::uint64_t traced = 0, direct = 0;
      for (const TracedTransfer& t : loaded->last_trace().transfers)
        if (t.from_tile >= 0 && t.to_tile >= 0) traced += t.bytes;
      for (const TileStats& t : st.tiles) direct += t.peer_bytes_in;
      // Each execution on its own: what peers fetched is exactly what moved worker to worker.
      if (o.peer_transfers) {
        SCOPED_TRACE("execution " + std::to_string(e));
        testing::expect_trace_shows_what_peers_fetched(loaded->last_trace(), st);
      }
      moved.worker_to_worker += traced;
      moved.direct += direct;
    }
  });
  return moved;
}

// The random DAG most tests here run, and its inputs.
struct Dag {
  Graph graph = testing::random_builtin_dag(60, 21);
  std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 5), x1 = testing::seeded_bytes(testing::kNetBytes, 6);
  Inputs inputs{{"X0", x0}, {"X1", x1}};
};

class NetTransfer : public ::testing::TestWithParam<Scheduler> {};

TEST_P(NetTransfer, AValueOnOneWorkerGoesStraightToTheWorkerThatNeedsIt) {
  const Dag dag;
  const Moved m = run_on_two_workers(dag.graph, dag.inputs, testing::remote_options(0, 2, GetParam()), {testing::kWorkerSlots, testing::kWorkerSlots}, 4);
  EXPECT_GT(m.worker_to_worker, 0u) << "no value moved between the workers: the test proves nothing";
  EXPECT_EQ(m.direct, m.worker_to_worker);
}

TEST_P(NetTransfer, WithPeerTransfersOffTheDriverRelaysThem) {
  RuntimeOptions o = testing::remote_options(0, 2, GetParam());
  o.peer_transfers = false;
  const Dag dag;
  const Moved m = run_on_two_workers(dag.graph, dag.inputs, o, {testing::kWorkerSlots, testing::kWorkerSlots}, 4);
  EXPECT_GT(m.worker_to_worker, 0u);
  EXPECT_EQ(m.direct, 0u) << "peer transfers are off";
}

// Values of several chunks (PeerLinks::kChunkBytes), the last one partial,
// fetched worker to worker: fan-outs of i32.add over 2.5 MiB + 4 bytes.
TEST_P(NetTransfer, AValueOfSeveralChunksArrivesWhole) {
  const std::size_t bytes = (std::size_t{5} << 19) + 4;
  Graph g("chunks");
  const DataId x = g.input("X", bytes);
  std::vector<DataId> layer{x};
  for (int level = 0; level < 3; ++level) {
    std::vector<DataId> next;
    for (int i = 0; i < 4; ++i) {
      const DataId out = g.inner("d" + std::to_string(level) + "_" + std::to_string(i), bytes);
      g.actor("a" + std::to_string(level) + "_" + std::to_string(i), i % 2 ? "i32.add" : "i32.mul",
              {layer[i % layer.size()], layer[(i + 1) % layer.size()]}, out);
      next.push_back(out);
    }
    layer = next;
  }
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kInner && g.data(d).consumers.empty()) g.mutable_data(d).kind = DataKind::kOutput;
  const auto in = testing::seeded_bytes(bytes, 9);
  const Inputs inputs{{"X", in}};
  RuntimeOptions o = testing::remote_options(0, 2, GetParam());
  o.slot_bytes = 3 << 20;
  const std::vector<std::string> slots = {"--slots", "8", "--slot-bytes", std::to_string(3 << 20)};
  const Moved m = run_on_two_workers(g, inputs, o, {slots, slots}, 3);
  EXPECT_GT(m.worker_to_worker, 0u) << "no value moved between the workers: the test proves nothing";
  EXPECT_EQ(m.direct, m.worker_to_worker);
}

INSTANTIATE_TEST_SUITE_P(Net, NetTransfer, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return std::string(info.param == Scheduler::kSteal ? "Steal" : "Heft"); });

// With keys, each worker's peer socket is a CURVE server that lets in the
// keys the driver's --authorized-keys lists (sent in WELCOME), so peers
// fetch from each other encrypted, each with its own key.
TEST(NetTransferKeyed, WorkersWithKeysFetchFromEachOtherOverCurve) {
  char pattern[] = "/tmp/redflow-transfer-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  std::ofstream authorized(dir / "workers.keys");
  for (const char* who : {"driver", "w1", "w2"}) {
    auto pair = net::generate_key_pair();
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    ASSERT_TRUE(net::write_key_pair((dir / who).string(), *pair, false).ok()) << who;
    if (std::string(who) != "driver") authorized << pair->public_key << " " << who << "\n";
  }
  authorized.close();
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kHeft);
  o.cluster.key_file = (dir / "driver.key").string();
  o.cluster.authorized_keys_file = (dir / "workers.keys").string();
  // Each worker its own key.
  std::vector<std::string> w1 = testing::kWorkerSlots, w2 = testing::kWorkerSlots;
  w1.insert(w1.end(), {"--key", (dir / "w1.key").string(), "--server-key", (dir / "driver.pub").string()});
  w2.insert(w2.end(), {"--key", (dir / "w2.key").string(), "--server-key", (dir / "driver.pub").string()});
  const Dag dag;
  const Moved m = run_on_two_workers(dag.graph, dag.inputs, o, {w1, w2}, 4);
  fs::remove_all(dir);
  EXPECT_GT(m.direct, 0u) << "no value went worker to worker over CURVE";
  EXPECT_EQ(m.direct, m.worker_to_worker);
}

// docs/security.md: with keys, what workers send each other on their peer
// sockets is CURVE-encrypted, and a peer whose key the driver did not list
// is turned away at the peer port. Watched from outside, as a man in the
// middle on loopback would see it: every value that went worker to worker
// shows in the peer links' bytes without keys (the control: the check can
// fail), and none does with keys.
TEST(NetTransferKeyed, ThePeerLinkCarriesNoPlainTextAndTurnsAStrangerAway) {
  testing::LoopbackCapture probe;
  if (!probe.error().empty()) GTEST_SKIP() << "cannot watch loopback (" << probe.error() << "): needs root";
  char pattern[] = "/tmp/redflow-peerwire-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  std::map<std::string, std::string> public_key;
  std::ofstream authorized(dir / "workers.keys");
  for (const char* who : {"driver", "w1", "w2", "stranger"}) {
    auto pair = net::generate_key_pair();
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    ASSERT_TRUE(net::write_key_pair((dir / who).string(), *pair, false).ok()) << who;
    public_key[who] = pair->public_key;
    if (std::string(who) == "w1" || std::string(who) == "w2") authorized << pair->public_key << " " << who << "\n";
  }
  authorized.close();
  // Every value an output, so the sequential interpreter gives each one's bytes.
  Graph g = testing::random_builtin_dag(60, 23);
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kInner) g.mutable_data(d).kind = DataKind::kOutput;
  const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 7), x1 = testing::seeded_bytes(testing::kNetBytes, 8);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  for (bool keyed : {false, true}) {
    SCOPED_TRACE(keyed ? "with keys" : "without keys");
    testing::LoopbackCapture capture;
    ASSERT_EQ(capture.error(), "");
    WorkerProcesses workers;
    workers.set_quiet(false);
    RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kSteal);
    if (keyed) {
      o.cluster.key_file = (dir / "driver.key").string();
      o.cluster.authorized_keys_file = (dir / "workers.keys").string();
    }
    std::vector<pid_t> pids;
    const fs::path w1_log = dir / (keyed ? "w1-keyed.log" : "w1-plain.log");
    o.cluster.on_listening = [&](const std::string& endpoint) {
      for (const char* who : {"w1", "w2"}) {
        std::vector<std::string> args = {"worker", "--connect", endpoint, "--connect-timeout", "20", "--name", who};
        args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
        if (keyed) args.insert(args.end(), {"--key", (dir / (std::string(who) + ".key")).string(), "--server-key", (dir / "driver.pub").string()});
        pids.push_back(workers.spawn_cli(args, std::string(who) == "w1" ? w1_log.string() : (dir / "w2.log").string()));
      }
    };
    std::vector<std::uint16_t> peer_ports;
    std::set<std::string> moved;  // values traced worker to worker
    testing::within_seconds(60, "two workers watched on loopback", [&] {
      Runtime rt(o);
      auto loaded = rt.load(g, Registry::with_builtins());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      // Welcomed, so each has announced the peer socket it listens on.
      for (pid_t p : pids) {
        const std::vector<std::uint16_t> ports = testing::listening_ports(p);
        ASSERT_EQ(ports.size(), 1u) << "worker " << p << " should listen on its peer socket alone";
        peer_ports.push_back(ports[0]);
        capture.watch(ports[0]);
      }
      ExecuteOptions eo;
      eo.trace = true;
      for (int e = 0; e < 20 && moved.empty(); ++e) {
        auto out = loaded->execute(inputs, eo);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(*out, want) << "execution " << e;
        for (const TracedTransfer& t : loaded->last_trace().transfers)
          if (t.from_tile >= 0 && t.to_tile >= 0) moved.insert(t.data);
      }
      ASSERT_FALSE(moved.empty()) << "no value went worker to worker in 20 executions";
      if (!keyed) return;
      // A stranger with a key of its own, not in the driver's list, at w1's peer port.
      zmq::context_t context;
      zmq::socket_t stranger(context, zmq::socket_type::dealer);
      stranger.set(zmq::sockopt::linger, 0);
      ASSERT_TRUE(net::secure_client(stranger, {.key_file = (dir / "stranger.key").string(), .server_public_key_file = (dir / "w1.pub").string()}).ok());
      stranger.connect("tcp://127.0.0.1:" + std::to_string(peer_ports[0]));
      std::vector<std::byte> ask;
      runtime::encode(runtime::ReadSlotMessage{0, runtime::DataTag{1, 3, 0}, testing::kNetBytes}, ask);
      ASSERT_TRUE(net::send_envelope(stranger, net::EnvelopeKind::kRequest, 1, ask));
      zmq::pollitem_t item{stranger.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(1000));
      EXPECT_FALSE(item.revents & ZMQ_POLLIN) << "a stranger's read of a slot was answered";
      const std::string refusal = "key " + public_key["stranger"].substr(0, 8);
      EXPECT_TRUE(testing::file_shows(w1_log.string(), refusal, 10)) << "w1 did not log the stranger's key as refused:\n" << testing::file_text(w1_log.string());
    });
    const std::map<std::string, std::string> flows = capture.flows();
    // A dropped packet could hide plain text as well as the bytes looked for.
    ASSERT_EQ(capture.drops(), 0u) << "the capture missed packets: what crossed cannot be told";
    std::string wire;
    for (const auto& [flow, bytes] : flows) wire += bytes;
    EXPECT_GE(wire.size(), testing::kNetBytes) << "the capture saw too little of the peer links";
    for (const std::string& name : moved) {
      const auto& value = want.at(name);
      const std::string window(reinterpret_cast<const char*>(value.data()), 64);
      if (keyed) {
        EXPECT_EQ(wire.find(window), std::string::npos) << name << " crossed a keyed peer link in plain text";
      } else {
        EXPECT_NE(wire.find(window), std::string::npos) << name << " went worker to worker, yet its bytes are not in the peer links' traffic";
      }
    }
    if (keyed) {
      EXPECT_NE(wire.find("CURVE"), std::string::npos) << "the peer links' greeting names the mechanism";
    }
  }
  fs::remove_all(dir);
}

// Bytes move once on each side (docs/remote.md, "Transfers"): a value the
// driver sends a worker goes out in the buffer it was encoded into, and one
// it reads back is decoded where it arrived, so the driver's transport copies
// no value's bytes between a buffer and a message. Small values (which share
// batches) and large ones (which go alone) both arrive whole, both ways; a
// large one goes and comes back in chunks (3 whole and a partial one here),
// so no message either way is much larger than a chunk.
TEST(NetValueCopies, AValueGoesToAWorkerAndBackWithoutTheDriverCopyingIt) {
  constexpr std::size_t kLarge = (std::size_t{3} << 20) + 123;  // far above a batch entry (kMaxBatchedFrameBytes)
  net::TileServerOptions so;
  so.slots = 2;
  so.slot_bytes = kLarge;
  auto server = net::TileServer::start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  WorkerProcesses workers;
  workers.spawn((*server)->endpoint(), {"--slots", "2", "--slot-bytes", std::to_string(kLarge)});
  ASSERT_TRUE((*server)->wait_for_workers(20).ok());
  net::RemoteTile tile(**server, 0, 0);
  testing::within_seconds(60, "a value to a worker and back", [&] {
    // One request at a time (a window of pieces), and pipelined (every piece sent ahead).
    for (const unsigned depth : {1u, 4u})
    for (const std::size_t bytes : {std::size_t{4096}, kLarge}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes at depth " + std::to_string(depth));
      tile.set_pipeline_depth(depth);
      const std::vector<std::byte> value = testing::seeded_bytes(bytes, static_cast<unsigned>(bytes % 997));
      runtime::DataNodeMessage m;
      m.tag = runtime::DataTag{1, 7, 0};
      m.slot = 1;
      m.bytes = bytes;
      m.payload = value;
      ASSERT_TRUE(tile.data_node(m).ok());
      std::vector<std::byte> back(bytes);
      runtime::ReadSlotMessage read;
      read.slot = 1;
      read.tag = m.tag;
      read.bytes = bytes;
      ASSERT_TRUE(tile.read_slot(read, back)) << "the worker did not give the value back";
      EXPECT_TRUE(back == value) << "the value came back changed";
    }
    // What the driver reads back is decoded where it arrived: the first
    // chunk's bytes, as a read gets them, lie inside the ZeroMQ message that
    // brought them, and equal the value's start.
    {
      std::vector<std::byte> frame;
      runtime::encode(net::PeerLinks::chunk_at(runtime::ReadSlotMessage{1, runtime::DataTag{1, 7, 0}, kLarge}, 0), frame);
      auto ticket = (*server)->send(0, std::move(frame));
      net::ReceivedBytes reply;
      ASSERT_TRUE((*server)->await(ticket, reply));
      EXPECT_TRUE(reply.in_place()) << "the reply was copied out of the message it arrived in";
      runtime::DecodedFrame chunk;
      ASSERT_TRUE(runtime::decode(reply.bytes(), chunk, /*borrow=*/true).ok());
      ASSERT_EQ(chunk.kind, runtime::WireKind::kSlotData);
      ASSERT_EQ(chunk.slot_bytes.size(), net::PeerLinks::kChunkBytes);
      EXPECT_GE(chunk.slot_bytes.data(), reply.bytes().data());
      EXPECT_LE(chunk.slot_bytes.data() + chunk.slot_bytes.size(), reply.bytes().data() + reply.bytes().size())
          << "the value's bytes are not where the message brought them";
      const std::vector<std::byte> value = testing::seeded_bytes(kLarge, static_cast<unsigned>(kLarge % 997));
      EXPECT_TRUE(std::equal(chunk.slot_bytes.begin(), chunk.slot_bytes.end(), value.begin())) << "the first chunk is not the value's";
    }
    // A value larger than the worker's slots is refused by name, piece by
    // piece, and leaves the worker serving.
    tile.set_pipeline_depth(1);
    const std::vector<std::byte> too_large(kLarge + net::PeerLinks::kChunkBytes);
    runtime::DataNodeMessage m;
    m.tag = runtime::DataTag{1, 8, 0};
    m.slot = 0;
    m.bytes = too_large.size();
    m.payload = too_large;
    const Status refused = tile.data_node(m);
    EXPECT_EQ(refused.code(), Status::Code::kResourceExhausted) << refused.ToString();
    EXPECT_NE(refused.message().find("does not fit a slot"), std::string::npos) << refused.message();
    EXPECT_FALSE(tile.lost());
    std::vector<std::byte> back(kLarge);
    EXPECT_TRUE(tile.read_slot(runtime::ReadSlotMessage{1, runtime::DataTag{1, 7, 0}, kLarge}, back)) << "the worker stopped serving";
  });
  const net::TileServerCounts c = (*server)->counts();
  EXPECT_GT(c.bytes_sent, kLarge) << "the large value was not sent";
  EXPECT_GT(c.bytes_received, kLarge) << "the large value did not come back";
  EXPECT_EQ(c.copied_value_bytes, 0u) << "the driver's transport copied a value between a buffer and a message";
  EXPECT_LE(c.largest_message_bytes, net::PeerLinks::kChunkBytes + 256) << "the large value came back in one piece, not in chunks";
  EXPECT_LE(c.largest_sent_bytes, net::PeerLinks::kChunkBytes + 256) << "the large value went to the worker in one piece, not in chunks";
}

}  // namespace
}  // namespace redflow
