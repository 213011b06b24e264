// End-to-end checks (docs/remote.md, "End-to-end checks"): a bit flipped in
// a value on its way between the driver and a worker (by a man in the
// middle, wire_proxy.hpp) is caught where the value arrives, against the
// checksum its producer reported, and never reaches an output, under `none`
// as under `*-diff`. One flip costs one more transfer and loses no worker; a
// link that keeps flipping bits loses its worker, and the run still
// finishes right.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "runtime/tile_protocol.hpp"
#include "watchdog.hpp"
#include "wire_proxy.hpp"

namespace redflow {
namespace {

using net::EnvelopeKind;
using runtime::WireKind;
using testing::ProxyAction;
using testing::ProxyDirection;
using testing::ProxyRule;
using testing::WireProxy;
using testing::WorkerProcesses;

// A flip of one seeded bit among the last `payload_bits` of a message's body:
// a value's bytes, never the frame's header or fields.
ProxyRule flip_in_payload(ProxyDirection direction, EnvelopeKind envelope, WireKind frame, int nth, std::uint32_t seed,
                          std::size_t payload_bits) {
  ProxyRule r;
  r.action = ProxyAction::kFlipBit;
  r.direction = direction;
  r.envelope = envelope;
  r.frame = frame;
  r.nth = nth;
  r.seed = seed;
  r.bit = static_cast<std::int64_t>((seed * 2654435761u) % payload_bits);
  r.bit_from_end = true;
  return r;
}

// What one trial saw.
struct Trial {
  int applied = 0;                       // flips the proxy made
  std::uint64_t corrupted = 0;           // values the end-to-end check caught, all executions
  bool proxied_lost = false;
  std::vector<std::string> errors;
};

// Runs `g` twice under `redundancy` on three worker processes, the third
// ("proxied") through a proxy with `rules`; checks every output against the
// one-process reference.
Trial run_through_proxy(const Graph& g, const Inputs& inputs, const Outputs& want, Scheduler scheduler, Redundancy redundancy,
                        const std::vector<ProxyRule>& rules, std::size_t slot_bytes, bool trace = false, bool peer_transfers = true) {
  Trial t;
  WorkerProcesses workers;
  std::unique_ptr<WireProxy> proxy;
  std::vector<std::size_t> hits;
  RuntimeOptions o = testing::remote_options(0, 3, scheduler);
  o.slot_bytes = slot_bytes;
  o.peer_transfers = peer_transfers;  // off: values between workers are relayed, read back through the proxy too
  const std::vector<std::string> slots = {"--slots", "8", "--slot-bytes", std::to_string(slot_bytes)};
  o.cluster.on_listening = [&](const std::string& endpoint) {
    proxy = std::make_unique<WireProxy>(endpoint);
    for (const ProxyRule& r : rules) hits.push_back(proxy->add(r));
    proxy->start();
    for (const char* name : {"direct0", "direct1", "proxied"}) {
      std::vector<std::string> extra = slots;
      extra.insert(extra.end(), {"--name", name});
      workers.spawn(std::string(name) == "proxied" ? proxy->endpoint() : endpoint, extra);
    }
  };
  Runtime rt(o);
  auto loaded = rt.load(g, Registry::with_builtins());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return t;
  for (int i = 0; i < 2; ++i) {
    ExecuteOptions options;
    options.redundancy = redundancy;
    options.trace = trace;
    auto out = loaded->execute(inputs, options);
    EXPECT_TRUE(out.ok()) << "execution " << i << ": " << out.status().ToString();
    if (out.ok()) {
      EXPECT_EQ(*out, want) << "execution " << i << ": an output differs from the one-process run";
    }
    const ExecutionStats& stats = loaded->last_stats();
    t.corrupted += stats.corrupted_transfers;
    std::uint64_t per_tile = 0;
    for (const TileStats& tile : stats.tiles) {
      per_tile += tile.corrupted_transfers;
      if (tile.worker == "proxied") t.proxied_lost = t.proxied_lost || tile.lost;
    }
    EXPECT_EQ(per_tile, stats.corrupted_transfers) << "the tiles' counts add up to the execution's";
    if (trace && stats.corrupted_transfers > 0) {
      EXPECT_TRUE(testing::has_mark(loaded->last_trace(), "corrupted-transfer")) << "the trace marks what the check caught";
    }
  }
  for (std::size_t h : hits) t.applied += proxy->applied(h);
  return t;
}

// 20 seeded trials per scheduler in which the flip happened: a random graph
// on three workers, one bit flipped in the payload of the first value the
// proxied worker sends back (a read-back or a relay: slot data), under none,
// 2x-diff and 3x-diff in turn, with peer transfers (and in every fourth
// trial without: all relayed).
// The output is right every time, and every flip is counted as a caught fault.
TEST(NetIntegrity, AFlippedBitInAValueReadBackNeverReachesAnOutput) {
  const Redundancy configurations[] = {Redundancy::kNone, Redundancy::kDoubleDiff, Redundancy::kTripleDiff};
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    // Seeds until 20 trials had their flip (in a few the proxied worker
    // sends nothing back before the run ends: those test nothing).
    int flipped = 0;
    for (std::uint32_t seed = 1; flipped < 20 && seed <= 40; ++seed) {
      const Redundancy redundancy = configurations[seed % 3];
      SCOPED_TRACE(std::string(to_string(scheduler)) + ", " + to_string(redundancy) + ", seed " + std::to_string(seed));
      const Graph g = testing::random_builtin_dag(40, 300 + seed);
      const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, seed), x1 = testing::seeded_bytes(testing::kNetBytes, seed + 11);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      testing::within_seconds(60, "a trial with a flipped read-back", [&] {
        const ProxyRule flip = flip_in_payload(ProxyDirection::kFromWorker, EnvelopeKind::kReply, WireKind::kSlotData, 1, seed,
                                               testing::kNetBytes * 8);
        const Trial t = run_through_proxy(g, inputs, want, scheduler, redundancy, {flip}, 64 << 10, /*trace=*/seed <= 2,
                                          /*peer_transfers=*/seed % 4 != 0);
        if (t.applied > 0) {
          EXPECT_GE(t.corrupted, 1u) << "the flipped value was not counted as caught";
        }
        EXPECT_FALSE(t.proxied_lost) << "one flip must cost one more read, not the worker";
        flipped += t.applied > 0;
      });
    }
    EXPECT_EQ(flipped, 20) << to_string(scheduler) << ": fewer than 20 of 40 trials had a value flipped";
  }
}

// Values the driver sends a worker (inputs, constants, values from main
// memory): the worker verifies them before placing them, answers "data
// loss", and the driver sends them again.
TEST(NetIntegrity, AFlippedBitInAValueSentToAWorkerIsCaughtThere) {
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    // The proxy flips a value that travels alone, not one batched with other
    // frames; how values travel depends on the schedule a loaded machine
    // makes, so trials go on (up to 14 seeds) until four flipped.
    int flipped = 0;
    for (std::uint32_t seed = 1; seed <= 14 && flipped < 4; ++seed) {
      SCOPED_TRACE(std::string(to_string(scheduler)) + ", seed " + std::to_string(seed));
      const Graph g = testing::random_builtin_dag(40, 500 + seed);
      const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, seed), x1 = testing::seeded_bytes(testing::kNetBytes, seed + 5);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      testing::within_seconds(60, "a trial with a flipped value to a worker", [&] {
        const ProxyRule flip =
            flip_in_payload(ProxyDirection::kToWorker, EnvelopeKind::kRequest, WireKind::kDataNode, 1, seed, testing::kNetBytes * 8);
        const Trial t = run_through_proxy(g, inputs, want, scheduler, seed % 2 == 0 ? Redundancy::kNone : Redundancy::kDoubleDiff, {flip},
                                          64 << 10, false, /*peer_transfers=*/seed % 3 != 0);
        if (t.applied > 0) {
          EXPECT_GE(t.corrupted, 1u) << "the flipped value was not counted as caught";
        }
        EXPECT_FALSE(t.proxied_lost);
        flipped += t.applied;
      });
    }
    EXPECT_GE(flipped, 4) << to_string(scheduler) << ": the proxy flipped a value in too few trials";
  }
}

// Values larger than a chunk go in pieces both ways: a flip in a piece the
// driver sends and in a chunk the worker sends back are each caught, once
// the whole value is in, before it is published or used.
TEST(NetIntegrity, ValuesInPiecesAreCheckedBothWays) {
  constexpr std::size_t kBig = (std::size_t{3} << 20) + 4;
  int flipped = 0;
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    const Graph g = testing::random_builtin_dag(12, 700, kBig);
    const std::vector<std::byte> x0 = testing::seeded_bytes(kBig, 1), x1 = testing::seeded_bytes(kBig, 2);
    const Inputs inputs{{"X0", x0}, {"X1", x1}};
    const Outputs want = testing::local_reference(g, inputs);
    testing::within_seconds(90, "a trial with flipped pieces", [&] {
      const std::size_t piece_bits = std::size_t{1} << 23;  // within the last MiB: any piece's bytes
      const std::vector<ProxyRule> flips = {
          flip_in_payload(ProxyDirection::kToWorker, EnvelopeKind::kRequest, WireKind::kDataNodePiece, 1, 3, piece_bits),
          flip_in_payload(ProxyDirection::kFromWorker, EnvelopeKind::kReply, WireKind::kSlotData, 1, 4, piece_bits)};
      const Trial t = run_through_proxy(g, inputs, want, scheduler, Redundancy::kNone, flips, 4 << 20, false, /*peer_transfers=*/false);
      EXPECT_GE(t.corrupted, static_cast<std::uint64_t>(t.applied)) << "each flipped value is caught";
      EXPECT_FALSE(t.proxied_lost);
      flipped += t.applied;
    });
  }
  EXPECT_GE(flipped, 2) << "too few pieces or chunks crossed the proxy to test anything";
}

// A data node damaged so that the worker cannot even read its frame (a bad
// magic) is answered "data loss" like one whose bytes do not match, and
// sent again: the run finishes right and the worker stays in service.
TEST(NetIntegrity, AnUnreadableValueToAWorkerIsSentAgain) {
  // Whether a value reaches the proxied worker through the driver (not from
  // a peer) depends on the schedule a loaded machine makes: trials go on,
  // up to 8 seeds per scheduler, until each has garbled two values.
  int garbled = 0;
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    int here = 0;
    for (std::uint32_t seed = 1; seed <= 8 && here < 2; ++seed) {
      SCOPED_TRACE(std::string(to_string(scheduler)) + ", seed " + std::to_string(seed));
      const Graph g = testing::random_builtin_dag(40, 800 + seed);
      const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, seed), x1 = testing::seeded_bytes(testing::kNetBytes, seed + 3);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      testing::within_seconds(60, "a trial with an unreadable value", [&] {
        ProxyRule garble;
        garble.action = ProxyAction::kGarble;
        garble.direction = ProxyDirection::kToWorker;
        garble.envelope = EnvelopeKind::kRequest;
        garble.frame = WireKind::kDataNode;
        garble.nth = 1;
        const Trial t = run_through_proxy(g, inputs, want, scheduler, Redundancy::kNone, {garble}, 64 << 10, false, seed != 2);
        if (t.applied > 0) {
          EXPECT_GE(t.corrupted, 1u) << "the unreadable value was not counted as caught";
        }
        EXPECT_FALSE(t.proxied_lost) << "one damaged value must cost one more send, not the worker";
        garbled += t.applied;
        here += t.applied;
      });
    }
  }
  EXPECT_GE(garbled, 3) << "the proxy garbled too few values to test anything";
}

// A link (or a worker's memory) that corrupts every value it sends back:
// after RemoteTile::kCorruptedInARow failed checks in a row the worker is
// lost, what only it held is recomputed, and the outputs are still right.
TEST(NetIntegrity, AWorkerWhoseValuesKeepArrivingCorruptedIsLost) {
  int tested = 0;
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    const Graph g = testing::random_builtin_dag(60, 900);
    const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
    const Inputs inputs{{"X0", x0}, {"X1", x1}};
    const Outputs want = testing::local_reference(g, inputs);
    testing::within_seconds(60, "a worker that keeps sending bad bytes", [&] {
      ProxyRule every = flip_in_payload(ProxyDirection::kFromWorker, EnvelopeKind::kReply, WireKind::kSlotData, 0, 9, testing::kNetBytes * 8);
      every.probability = 1;
      every.limit = 0;
      const Trial t = run_through_proxy(g, inputs, want, scheduler, Redundancy::kNone, {every}, 64 << 10);
      if (t.applied >= 3) {
        EXPECT_TRUE(t.proxied_lost) << t.applied << " corrupted values, and the worker is still in service";
        EXPECT_GE(t.corrupted, 3u);
        ++tested;
      }
    });
  }
  EXPECT_GE(tested, 1) << "the proxied worker sent back too few values under either scheduler to test anything";
}

}  // namespace
}  // namespace redflow
