// A straggler on "another machine": a real `redflow tile` inside a network
// namespace the test makes (tests/netns.hpp), its link throttled to 1 mbit/s with tc
// (a token bucket: this kernel may lack netem), beside a worker on the same
// host. Sending it an actor's inputs takes long, so it is a straggler, not a
// lost worker (the heartbeat timeout is long): the idle tile copies its
// actors or takes over its HEFT order, and the outputs are those of a
// one-process run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "net/keys.hpp"
#include "net_workers.hpp"
#include "netns.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kStragglerBytes = 64 << 10;  // each input 0.5 s over a 1 mbit link

// `n` independent actors X0 + K_c, each K_c its own constant; work hints so
// HEFT gives the throttled worker its share.
Graph wide_adds(int n) {
  Graph g("net_straggler");
  const DataId x0 = g.input("X0", kStragglerBytes);
  for (int c = 0; c < n; ++c) {
    const std::string i = std::to_string(c);
    const DataId k = g.constant("K" + i, testing::seeded_bytes(kStragglerBytes, 200 + c));
    g.actor("add" + i, "i32.add", {x0, k}, g.output("y" + i, kStragglerBytes)).work(1e6);
  }
  return g;
}

TEST(NetStraggler, AWorkerBehindAThrottledLinkIsOvertakenByTheIdleTile) {
  if (auto reason = testing::NetNamespace::skip_reason()) GTEST_SKIP() << *reason;
  const fs::path dir = fs::temp_directory_path() / ("redflow_straggler_" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { fs::remove_all(d); }
  } cleanup{dir};
  for (const char* who : {"driver", "fast", "slow"}) ASSERT_TRUE(net::write_key_pair((dir / who).string(), *net::generate_key_pair(), true).ok());
  std::ofstream(dir / "workers.keys") << *net::read_public_key_file((dir / "fast.pub").string()) << " fast\n"
                                      << *net::read_public_key_file((dir / "slow.pub").string()) << " slow\n";

  testing::NetNamespace ns;
  ASSERT_TRUE(ns.ok()) << ns.error();
  const Graph g = wide_adds(16);
  const auto x0 = testing::seeded_bytes(kStragglerBytes, 5);
  const Inputs inputs{{"X0", x0}};
  Outputs want;
  {
    Runtime rt(RuntimeOptions{});
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    want = *out;
  }

  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kHeft, 20);  // slow, not lost
  o.slot_bytes = kStragglerBytes;
  o.cluster.listen = "tcp://" + ns.host_address() + ":*";
  o.cluster.key_file = (dir / "driver.key").string();
  o.cluster.authorized_keys_file = (dir / "workers.keys").string();
  testing::WorkerProcesses fast;
  auto worker = [&](const char* who) {
    return std::vector<std::string>{"--slots", "8", "--slot-bytes", std::to_string(kStragglerBytes), "--key", (dir / (std::string(who) + ".key")).string(),
                                    "--server-key", (dir / "driver.pub").string(), "--name", who};
  };
  o.cluster.on_listening = [&](const std::string& endpoint) {
    fast.spawn(endpoint, worker("fast"));
    std::vector<std::string> argv = {REDFLOW_CLI, "worker", "--connect", endpoint, "--connect-timeout", "20"};
    const auto flags = worker("slow");
    argv.insert(argv.end(), flags.begin(), flags.end());
    ns.spawn(argv, (dir / "slow.out").string());
  };
  testing::within_seconds(90, "a throttled worker", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    unsigned slow = 0;
    auto out = loaded->execute(inputs);  // unthrottled: both take work
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    for (unsigned t = 0; t < 2; ++t)
      if (loaded->last_stats().tiles[t].worker == "slow") slow = t;
    ASSERT_GT(loaded->last_stats().tiles[slow].actors, 0u) << "HEFT gave the worker in the namespace nothing";

    if (!ns.set_rate("1mbit")) {
      if (ns.qdisc_missing()) GTEST_SKIP() << "this kernel has no sch_tbf: " << ns.tc_error();
      FAIL() << "tc refused a rate limit: " << ns.tc_error();
    }
    out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    const ExecutionStats& st = loaded->last_stats();
    EXPECT_EQ(st.lost_tiles, 0u) << "slow is not lost";
    EXPECT_GE(st.speculative_wins + st.taken_over, 1u)
        << "the idle tile overtook none of the straggler's actors (copies " << st.speculative_copies << ", the straggler ran "
        << st.tiles[slow].actors << ")";
    EXPECT_EQ(st.tiles[slow].speculative, 0u);
    // The throttled worker is the straggler its stats and the dashboard name.
    EXPECT_GE(st.tiles[slow].straggled, st.speculative_copies + st.taken_over > 0 ? 1u : 0u);
    EXPECT_EQ(st.tiles[1 - slow].straggled, 0u);
  });
}

}  // namespace
}  // namespace redflow
