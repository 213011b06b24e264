// Values fetched from other workers go ahead of the actor that reads them
// (docs/remote.md, "Pipelined dispatch"). The driver sends a
// worker the fetch and, without waiting for its answer, the actor; so the
// worker must hold the actor back until the value is in its slot, and when
// the fetch finds nothing (the source displaced the value, or was lost and
// the driver cancels), empty the slot so the actor says it has no input
// instead of reading what the slot held before.
//
// A real `redflow tile` is driven here by the test, which plays both its
// driver and the peer it fetches from, so each step's order is seen; and a
// real driver runs a graph beside a worker whose every fetch finds nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "net_fake_worker.hpp"
#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "runtime/local_tile.hpp"
#include "runtime/tile_protocol.hpp"
#include "runtime/tile_service.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using Clock = std::chrono::steady_clock;
using net::EnvelopeKind;
using runtime::DataTag;
using testing::WorkerProcesses;

std::vector<std::byte> i32s(std::initializer_list<std::uint32_t> values) {
  std::vector<std::byte> out;
  for (std::uint32_t v : values)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::byte>(v >> (8 * b)));
  return out;
}

using testing::Router;

// The test as the worker's driver: its replies by request id, single or batched.
struct FakeDriver {
  Router router;
  std::string worker;
  std::map<std::uint64_t, std::vector<std::byte>> replies;

  explicit FakeDriver(zmq::context_t& context) : router(context) {}

  void send(EnvelopeKind kind, std::uint64_t id, const std::vector<std::byte>& body) {
    ASSERT_TRUE(net::send_envelope(router.socket, kind, id, body, worker));
  }
  void request(std::uint64_t id, const std::vector<std::byte>& frame) { send(EnvelopeKind::kRequest, id, frame); }
  // Takes what comes within `timeout_s`; true once `id` has been answered.
  bool wait_for(std::uint64_t id, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    while (!replies.contains(id)) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      net::Envelope e;
      if (left <= 0 || !router.next(e, left)) return false;
      if (e.kind == EnvelopeKind::kReply) {
        replies[e.request].assign(e.body.begin(), e.body.end());
      } else if (e.kind == EnvelopeKind::kReplies) {
        std::vector<net::BatchEntry> batch;
        wire::Error error;
        EXPECT_TRUE(net::decode_batch(e, batch, error).ok());
        for (const net::BatchEntry& b : batch) replies[b.request].assign(b.frame.begin(), b.frame.end());
      } else {
        ADD_FAILURE() << "the worker sent a " << net::envelope_kind_name(e.kind);
      }
    }
    return true;
  }
  // The answer to `id`, decoded into `out` (which must outlive its views).
  const runtime::DecodedFrame& reply(std::uint64_t id) {
    auto& out = decoded[id];
    if (!out) {
      out = std::make_unique<runtime::DecodedFrame>();
      EXPECT_TRUE(runtime::decode(replies.at(id), *out).ok()) << "reply " << id;
    }
    return *out;
  }
  std::map<std::uint64_t, std::unique_ptr<runtime::DecodedFrame>> decoded;
};

// The test as the peer the worker fetches from: the read requests that came.
struct FakePeer {
  Router router;
  explicit FakePeer(zmq::context_t& context) : router(context) {}

  // The next slot read asked of this peer, with whom to answer.
  bool asked(runtime::ReadSlotMessage& read, std::uint64_t& id, std::string& route, double timeout_s) {
    net::Envelope e;
    if (!router.next(e, timeout_s) || e.kind != EnvelopeKind::kRequest) return false;
    runtime::DecodedFrame frame;
    if (!runtime::decode(e.body, frame).ok() || frame.kind != runtime::WireKind::kReadSlot) return false;
    read = frame.read_slot;
    id = e.request;
    route = router.sender();
    return true;
  }
  void answer(const std::string& route, std::uint64_t id, bool found, std::span<const std::byte> bytes) {
    std::vector<std::byte> frame;
    runtime::encode_slot_data(found, bytes, frame);
    ASSERT_TRUE(net::send_envelope(router.socket, EnvelopeKind::kReply, id, frame, route));
  }
};

std::vector<std::byte> fetch_frame(const std::string& peer, DataTag tag, runtime::SlotId slot, runtime::SlotId source_slot) {
  runtime::DataNodeMessage m;
  m.tag = tag;
  m.slot = slot;
  m.bytes = 8;
  m.source_tile = 1;
  m.source_slot = source_slot;
  std::vector<std::byte> frame;
  runtime::encode(m, runtime::PeerSource{peer, ""}, frame);
  return frame;
}

// i32.add of slot `in` with itself into slot `out`.
std::vector<std::byte> double_frame(runtime::SlotId in, runtime::SlotId out, DataTag out_tag) {
  const std::vector<runtime::SlotId> inputs = {in, in};
  runtime::ActorMessage m;
  m.actor = 0;
  m.execution = 1;
  m.input_slots = inputs;
  m.output_slot = out;
  m.output_tag = out_tag;
  m.output_bytes = 8;
  std::vector<std::byte> frame;
  runtime::encode(m, frame);
  return frame;
}

TEST(NetFetchAhead, TheActorBehindAFetchWaitsForItsValueAndAFetchThatFindsNothingLeavesItNoStaleInput) {
  zmq::context_t context;
  FakeDriver driver(context);
  FakePeer peer(context);
  WorkerProcesses workers;
  std::vector<std::string> args = {"worker"};
  args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
  pid_t pid = 0;
  driver.worker = testing::start_and_welcome(driver.router, workers, args, pid);
  ASSERT_FALSE(driver.worker.empty());
  const std::vector<std::string_view> functions = {"i32.add"};
  const std::vector<runtime::ActorTableEntry> table = {{"double", "", 0, 1}};
  std::vector<std::byte> frame;
  runtime::encode(runtime::ActorTableMessage{1, functions, table}, frame);
  driver.request(1, frame);
  ASSERT_TRUE(driver.wait_for(1, 20));
  ASSERT_TRUE(driver.reply(1).status.ok()) << driver.reply(1).status.ToString();

  runtime::ReadSlotMessage read;
  std::uint64_t read_id = 0;
  std::string route;
  // 1. The fetch, then at once the actor reading it: nothing is answered
  // until the peer gives the value, then the actor runs on it.
  const DataTag x{1, 0, 0}, y{1, 1, 0};
  driver.request(2, fetch_frame(peer.router.endpoint, x, 0, 5));
  driver.request(3, double_frame(0, 1, y));
  ASSERT_TRUE(peer.asked(read, read_id, route, 20)) << "the worker did not ask the peer";
  EXPECT_EQ(read.slot, 5u);
  EXPECT_EQ(read.tag, x);
  EXPECT_FALSE(driver.wait_for(3, 0.3)) << "the actor ran before its input was fetched";
  peer.answer(route, read_id, true, i32s({7, 40}));
  ASSERT_TRUE(driver.wait_for(3, 20));
  ASSERT_TRUE(driver.wait_for(2, 20));
  EXPECT_TRUE(driver.reply(2).status.ok()) << driver.reply(2).status.ToString();
  {
    const runtime::DecodedFrame& done = driver.reply(3);
    ASSERT_EQ(done.kind, runtime::WireKind::kCompletion);
    EXPECT_TRUE(done.completion.ok) << done.completion.error;
  }
  frame.clear();
  runtime::encode(runtime::ReadSlotMessage{1, y, 8}, frame);
  driver.request(4, frame);
  ASSERT_TRUE(driver.wait_for(4, 20));
  {
    const runtime::DecodedFrame& value = driver.reply(4);
    ASSERT_EQ(value.kind, runtime::WireKind::kSlotData);
    ASSERT_TRUE(value.found) << "output slot " << driver.reply(3).completion.output_slot << " status " << value.status.ToString();
    EXPECT_EQ(std::vector<std::byte>(value.slot_bytes.begin(), value.slot_bytes.end()), i32s({14, 80}));
  }

  // 2. A fetch into slot 1, which holds y, that finds nothing: the actor
  // behind it must not read y as if it were the value asked for.
  const DataTag z{1, 2, 0};
  driver.request(5, fetch_frame(peer.router.endpoint, z, 1, 6));
  driver.request(6, double_frame(1, 2, DataTag{1, 3, 0}));
  ASSERT_TRUE(peer.asked(read, read_id, route, 20));
  EXPECT_FALSE(driver.wait_for(6, 0.3)) << "the actor ran before its fetch ended";
  peer.answer(route, read_id, false, {});
  ASSERT_TRUE(driver.wait_for(6, 20));
  ASSERT_TRUE(driver.wait_for(5, 20));
  EXPECT_EQ(driver.reply(5).status.code(), Status::Code::kNotFound) << driver.reply(5).status.ToString();
  {
    const runtime::DecodedFrame& done = driver.reply(6);
    ASSERT_EQ(done.kind, runtime::WireKind::kCompletion);
    EXPECT_FALSE(done.completion.ok);
    EXPECT_NE(done.completion.error.find("holds no value"), std::string::npos) << done.completion.error;
  }

  // 3. CANCEL (the driver declared the source lost) of a fetch the peer
  // never answers, and of one held behind the actor waiting for it (it
  // fills the slot that actor writes): each is answered NotFound, and the
  // actor says it has no input.
  driver.request(7, fetch_frame(peer.router.endpoint, DataTag{1, 4, 0}, 4, 7));
  driver.request(8, double_frame(4, 3, DataTag{1, 5, 0}));
  driver.request(9, fetch_frame(peer.router.endpoint, DataTag{1, 6, 0}, 3, 8));
  ASSERT_TRUE(peer.asked(read, read_id, route, 20));
  EXPECT_EQ(read.slot, 7u) << "only the first fetch starts: the second waits behind the actor on its slot";
  driver.send(EnvelopeKind::kCancel, 9, {});
  ASSERT_TRUE(driver.wait_for(9, 20));
  EXPECT_EQ(driver.reply(9).status.code(), Status::Code::kNotFound) << driver.reply(9).status.ToString();
  EXPECT_FALSE(driver.replies.contains(8)) << "the actor ran before its fetch ended";
  driver.send(EnvelopeKind::kCancel, 7, {});
  ASSERT_TRUE(driver.wait_for(8, 20));
  ASSERT_TRUE(driver.wait_for(7, 20));
  EXPECT_EQ(driver.reply(7).status.code(), Status::Code::kNotFound) << driver.reply(7).status.ToString();
  EXPECT_FALSE(driver.reply(8).completion.ok);
  EXPECT_FALSE(peer.asked(read, read_id, route, 0.2)) << "the cancelled fetch was started after all";

  // 4. Frames on other slots pass a fetch under way: behind a fetch into
  // slot 5 and the actor reading it, an actor whose input is here (x, in
  // slot 0) runs at once, and the next fetch (into slot 4, emptied above)
  // starts before the first has ended. Each actor still waits for its own.
  const DataTag a{1, 7, 0}, b{1, 8, 0};
  driver.request(10, fetch_frame(peer.router.endpoint, a, 5, 9));
  driver.request(11, double_frame(5, 7, DataTag{1, 9, 0}));
  driver.request(12, double_frame(0, 6, DataTag{1, 10, 0}));
  driver.request(13, fetch_frame(peer.router.endpoint, b, 4, 10));
  driver.request(14, double_frame(4, 2, DataTag{1, 11, 0}));
  ASSERT_TRUE(driver.wait_for(12, 20)) << "an actor on other slots waited for a fetch it does not read";
  EXPECT_TRUE(driver.reply(12).completion.ok) << driver.reply(12).completion.error;
  runtime::ReadSlotMessage read_a, read_b;
  std::uint64_t id_a = 0, id_b = 0;
  std::string route_a, route_b;
  ASSERT_TRUE(peer.asked(read_a, id_a, route_a, 20));
  ASSERT_TRUE(peer.asked(read_b, id_b, route_b, 20)) << "the second fetch waited for the first";
  EXPECT_EQ(read_a.slot, 9u);
  EXPECT_EQ(read_b.slot, 10u);
  EXPECT_FALSE(driver.wait_for(11, 0.2) || driver.replies.contains(14)) << "an actor ran before its input was fetched";
  peer.answer(route_b, id_b, true, i32s({1, 2}));
  ASSERT_TRUE(driver.wait_for(14, 20));
  EXPECT_TRUE(driver.reply(14).completion.ok) << driver.reply(14).completion.error;
  EXPECT_FALSE(driver.replies.contains(11)) << "the actor ran before its input was fetched";
  peer.answer(route_a, id_a, true, i32s({3, 4}));
  ASSERT_TRUE(driver.wait_for(11, 20));
  EXPECT_TRUE(driver.reply(11).completion.ok) << driver.reply(11).completion.error;
  for (auto [id, slot, tag, want] : {std::tuple{15, 7u, DataTag{1, 9, 0}, i32s({6, 8})}, std::tuple{16, 2u, DataTag{1, 11, 0}, i32s({2, 4})},
                                     std::tuple{17, 6u, DataTag{1, 10, 0}, i32s({14, 80})}}) {
    frame.clear();
    runtime::encode(runtime::ReadSlotMessage{slot, tag, 8}, frame);
    driver.request(id, frame);
    ASSERT_TRUE(driver.wait_for(id, 20));
    const runtime::DecodedFrame& value = driver.reply(id);
    ASSERT_TRUE(value.found) << "slot " << slot << ": " << value.status.ToString();
    EXPECT_EQ(std::vector<std::byte>(value.slot_bytes.begin(), value.slot_bytes.end()), want) << "slot " << slot;
  }

  driver.send(EnvelopeKind::kBye, 0, {});
  EXPECT_EQ(workers.wait_exit(pid, 20), 0);
}

// A worker whose tile is real (runtime::TileService, as a worker process's
// executor) but whose transfers from other workers all find nothing: its
// peer socket answers every read "not held", and every value the driver
// asks it to fetch from a peer is answered NotFound, its slot emptied, as a
// real worker does when the source no longer holds the value. It also beats.
struct ForgetfulWorker : testing::FakeWorker {
  std::atomic<unsigned> refused_reads{0}, refused_fetches{0};

  void run(const std::string& endpoint) override {
    zmq::context_t context;
    Router peer(context);
    net::HelloMessage hello = testing::fake_tile_hello("forgetful");
    hello.peer_port = static_cast<std::uint32_t>(std::stoi(peer.endpoint.substr(peer.endpoint.rfind(':') + 1)));
    zmq::socket_t s(context, zmq::socket_type::dealer);
    testing::connect_and_say_hello(s, endpoint, hello);
    const Registry registry = Registry::with_builtins();
    std::unique_ptr<runtime::LocalTile> tile;
    std::unique_ptr<runtime::TileService> service;
    auto serve = [&](std::uint64_t id, std::span<const std::byte> frame) {
      std::vector<std::byte> reply;
      if (runtime::frame_is(frame, runtime::WireKind::kPeerDataNode)) {
        runtime::DecodedFrame fetch;
        ASSERT_TRUE(runtime::decode(frame, fetch).ok());
        tile->clear_slot(fetch.data_node.slot);
        runtime::encode(Status::NotFound("the forgetful worker's peer no longer holds it"), reply);
        ++refused_fetches;
      } else {
        service->serve(frame, &registry, reply);
      }
      net::send_envelope(s, EnvelopeKind::kReply, id, reply);
    };
    std::vector<zmq::message_t> parts;
    std::vector<net::BatchEntry> batch;
    wire::Error error;
    while (!stop) {
      zmq::pollitem_t items[] = {{s.handle(), 0, ZMQ_POLLIN, 0}, {peer.socket.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, std::chrono::milliseconds(10));
      beat_when_due(s);
      net::Envelope e;
      while (next_envelope(s, parts, e)) {
        if (e.kind == EnvelopeKind::kBye) return;
        if (e.kind == EnvelopeKind::kWelcome && !tile) {
          net::WelcomeMessage welcome;
          ASSERT_TRUE(net::decode(e.body, welcome).ok());
          tile = std::make_unique<runtime::LocalTile>(hello.slots, hello.slot_bytes, 1, welcome.tile);
          service = std::make_unique<runtime::TileService>(*tile);
        } else if (e.kind == EnvelopeKind::kRequest && tile) {
          serve(e.request, e.body);
        } else if (e.kind == EnvelopeKind::kRequests && tile) {
          ASSERT_TRUE(net::decode_batch(e, batch, error).ok());
          for (const net::BatchEntry& b : batch) serve(b.request, b.frame);
        }
      }
      while (peer.next(e, 0)) {
        if (e.kind != EnvelopeKind::kRequest) continue;
        std::vector<std::byte> frame;
        runtime::encode_slot_data(false, {}, frame);
        net::send_envelope(peer.socket, EnvelopeKind::kReply, e.request, frame, peer.sender());
        ++refused_reads;
      }
    }
  }
};

// P_i -> Y_i, then C_i reads Y_i and Y_(i+1): the Ys are outputs too (so
// main memory has each as soon as its P is done), and the Ps spread over
// both workers, so some C reads a Y made on the other one. Where that is
// the forgetful worker, or the forgetful worker is the reader, the fetch
// finds nothing, and the engine must place the value again from main
// memory and run C on it.
TEST(NetFetchAhead, AnActorWhoseFetchedInputWasNotThereRunsAgainOnTheValueFromMainMemory) {
  constexpr int kPairs = 32;
  Graph g("pairs");
  const DataId x = g.input("X", testing::kNetBytes);
  std::vector<DataId> ys;
  for (int i = 0; i < kPairs; ++i) {
    ys.push_back(g.output("Y" + std::to_string(i), testing::kNetBytes));
    g.actor("P" + std::to_string(i), i % 2 ? "i32.add" : "i32.mul", {x, x}, ys.back());
  }
  for (int i = 0; i < kPairs; ++i)
    g.actor("C" + std::to_string(i), "i32.add", {ys[i], ys[(i + 1) % kPairs]}, g.output("Z" + std::to_string(i), testing::kNetBytes));
  const std::vector<std::byte> x_bytes = testing::seeded_bytes(testing::kNetBytes, 9);
  const Inputs inputs{{"X", x_bytes}};
  const Outputs want = testing::local_reference(g, inputs);
  testing::each_scheduler_beside_a_fake_worker<ForgetfulWorker>(g, 90, "runs beside a worker whose fetches find nothing",
                                                                 [&](LoadedGraph& loaded, ForgetfulWorker& forgetful) {
    // Until a fetch found nothing (where the Ps run is the scheduler's
    // choice), each execution right.
    int executions = 0;
    ExecuteOptions eo;
    eo.trace = true;
    for (; executions < 20 && forgetful.refused_reads + forgetful.refused_fetches == 0; ++executions) {
      auto out = loaded.execute(inputs, eo);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_TRUE(*out == want) << "outputs differ from the one-process run's";
      for (const TileStats& t : loaded.last_stats().tiles) EXPECT_FALSE(t.lost) << t.worker;
      testing::expect_trace_shows_what_peers_fetched(loaded.last_trace(), loaded.last_stats());
    }
    EXPECT_GT(forgetful.refused_reads + forgetful.refused_fetches, 0u) << "no C read a Y made on the other worker in " << executions << " executions";
  });
}

}  // namespace
}  // namespace redflow
