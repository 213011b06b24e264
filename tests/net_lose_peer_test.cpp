// Lose the peer, not the run (docs/remote.md, "The wire"): one of three real
// worker processes talks to the driver through a man in the middle
// (wire_proxy.hpp) that garbles one of its replies, swaps one for a
// well-formed answer of the wrong kind, sends one twice or re-labels one.
// That worker is lost, its work is re-run on the others, and every
// execution's outputs equal the one-process reference, under both
// schedulers, over seeded trials (which reply is hit, and the graph).
#include <gtest/gtest.h>

#include <functional>
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
using testing::ProxyRule;
using testing::WireProxy;
using testing::WorkerProcesses;

// Runs `seeds` trials per scheduler: a graph of 60 actors on three workers,
// the third ("proxied") through a proxy with rule(seed), executed until the
// proxy hit and twice more; the proxied worker must be hit once and lost,
// and every output right.
// 24 actors side by side, each writing an output: every worker has values
// the driver reads back, whatever the scheduler puts where.
Graph wide_outputs_graph() {
  Graph g("wide_outputs");
  const DataId x0 = g.input("X0", testing::kNetBytes), x1 = g.input("X1", testing::kNetBytes);
  for (int a = 0; a < 24; ++a) {
    const DataId mid = g.inner("m" + std::to_string(a), testing::kNetBytes);
    g.actor("p" + std::to_string(a), "i32.add", {x0, x1}, mid);
    g.actor("q" + std::to_string(a), "i32.mul", {mid, a % 2 ? x0 : x1}, g.output("o" + std::to_string(a), testing::kNetBytes));
  }
  return g;
}

void proxied_trials(const std::string& what, unsigned seeds, const std::function<ProxyRule(std::uint32_t)>& rule, bool wide = false) {
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE(std::string(to_string(scheduler)) + ", seed " + std::to_string(seed));
      const Graph g = wide ? wide_outputs_graph() : testing::random_builtin_dag(60, 40 + seed);
      const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, seed), x1 = testing::seeded_bytes(testing::kNetBytes, seed + 7);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      WorkerProcesses workers;
      std::unique_ptr<WireProxy> proxy;
      std::size_t hit = 0;
      RuntimeOptions o = testing::remote_options(0, 3, scheduler);
      o.cluster.on_listening = [&](const std::string& endpoint) {
        proxy = std::make_unique<WireProxy>(endpoint);
        hit = proxy->add(rule(seed));
        proxy->start();
        for (const char* name : {"direct0", "direct1"}) {
          std::vector<std::string> extra = testing::kWorkerSlots;
          extra.insert(extra.end(), {"--name", name});
          workers.spawn(endpoint, extra);
        }
        std::vector<std::string> extra = testing::kWorkerSlots;
        extra.insert(extra.end(), {"--name", "proxied"});
        workers.spawn(proxy->endpoint(), extra);
      };
      testing::within_seconds(60, what, [&] {
        Runtime rt(o);
        auto loaded = rt.load(g, Registry::with_builtins());
        ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
        // Until the proxy has hit (which worker runs what is the
        // scheduler's choice, and on a loaded machine the proxied worker,
        // one hop further, may get little of it), then twice more on the
        // workers left.
        int after = 0;
        for (int i = 0; i < 40 && after < 2; ++i) {
          auto out = loaded->execute(inputs);
          ASSERT_TRUE(out.ok()) << "execution " << i << ": " << out.status().ToString();
          EXPECT_EQ(*out, want) << "execution " << i;
          if (proxy->applied(hit) > 0) ++after;
        }
        EXPECT_EQ(proxy->applied(hit), 1) << "the proxy hit the worker's replies once";
        const ExecutionStats& stats = loaded->last_stats();
        ASSERT_EQ(stats.tiles.size(), 3u);
        for (const TileStats& t : stats.tiles) EXPECT_EQ(t.lost, t.worker == "proxied") << t.worker;
        EXPECT_GE(stats.refused_messages, 1u);
      });
    }
  }
}

// Completions come alone or in a REPLIES batch; a rule on REPLY picks either.
ProxyRule on_completion(ProxyAction action, std::uint32_t seed) {
  ProxyRule r;
  r.action = action;
  r.envelope = EnvelopeKind::kReply;
  r.frame = WireKind::kCompletion;
  r.nth = static_cast<int>(1 + seed % 5);
  return r;
}

TEST(NetLosePeer, OneGarbledReplyLosesTheWorkerAndTheRunFinishesRight) {
  proxied_trials("a run with one garbled reply", 3, [](std::uint32_t seed) { return on_completion(ProxyAction::kGarble, seed); });
}

TEST(NetLosePeer, AReplyOfTheWrongKindLosesTheWorkerAndTheRunFinishesRight) {
  proxied_trials("a run with one reply of the wrong kind", 3, [](std::uint32_t seed) {
    ProxyRule r = on_completion(ProxyAction::kReplace, seed);
    runtime::encode_slot_data(true, std::vector<std::byte>(16), r.replacement);  // well-formed, but no completion
    return r;
  });
}

TEST(NetLosePeer, AReplyToARequestNeverSentLosesTheWorker) {
  proxied_trials("a run with one re-labelled reply", 1, [](std::uint32_t seed) { return on_completion(ProxyAction::kRewriteId, seed); });
}

TEST(NetLosePeer, AReplySentTwiceLosesTheWorker) {
  proxied_trials("a run with one reply sent twice", 1, [](std::uint32_t seed) { return on_completion(ProxyAction::kDuplicate, seed); });
}

TEST(NetLosePeer, AMessageOnlyADriverSendsLosesTheWorker) {
  proxied_trials("a run with one reply re-labelled a REQUEST", 1, [](std::uint32_t seed) {
    ProxyRule r = on_completion(ProxyAction::kRewriteKind, seed);
    r.new_kind = EnvelopeKind::kRequest;
    return r;
  });
}

// The other way: an actor's frame garbled on its way to the worker, which
// answers that it cannot read it. The link garbles: the worker is lost.
TEST(NetLosePeer, AGarbledActorRequestLosesTheWorker) {
  proxied_trials("a run with one garbled actor request", 1, [](std::uint32_t seed) {
    ProxyRule r = on_completion(ProxyAction::kGarble, seed);
    r.direction = testing::ProxyDirection::kToWorker;
    r.envelope = EnvelopeKind::kRequest;
    r.frame = WireKind::kActor;
    return r;
  });
}

TEST(NetLosePeer, AGarbledValueReadBackLosesTheWorker) {
  proxied_trials("a run with one garbled read-back", 1, [](std::uint32_t seed) {
    ProxyRule r = on_completion(ProxyAction::kGarble, seed);
    r.frame = WireKind::kSlotData;
    r.nth = 1;
    return r;
  }, /*wide=*/true);
}

}  // namespace
}  // namespace redflow
