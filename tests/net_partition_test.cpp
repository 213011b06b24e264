// A remote tile on "another machine": a real `redflow tile` inside a network
// namespace the test makes (tests/netns.hpp), reached over a veth pair on a
// non-loopback address, so the driver needs its keys. Cutting the link
// (link down) must make the driver declare the worker lost after its
// heartbeat timeout and re-run its work on the tile that is left, with the
// outputs unchanged.
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

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(NetPartition, AWorkerCutOffInANamespaceIsLostAndItsWorkReRun) {
  if (auto reason = testing::NetNamespace::skip_reason()) GTEST_SKIP() << *reason;
  const fs::path dir = fs::temp_directory_path() / ("redflow_partition_" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { fs::remove_all(d); }
  } cleanup{dir};
  for (const char* who : {"driver", "node"}) ASSERT_TRUE(net::write_key_pair((dir / who).string(), *net::generate_key_pair(), true).ok());
  std::ofstream(dir / "workers.keys") << *net::read_public_key_file((dir / "node.pub").string()) << " node-in-namespace\n";

  testing::NetNamespace ns;
  ASSERT_TRUE(ns.ok()) << ns.error();
  const Graph g = testing::random_builtin_dag(60, 11);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 3), x1 = testing::seeded_bytes(testing::kNetBytes, 4);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);

  RuntimeOptions o = testing::remote_options(1, 1, Scheduler::kHeft, 0.5);
  // No speculative copies: the local tile could otherwise finish the cut-off
  // worker's actors itself and the execution end before the heartbeat
  // timeout declares the worker lost; this test is about that declaration.
  o.speculate_after_s = 0;
  o.cluster.listen = "tcp://" + ns.host_address() + ":*";
  {
    Runtime without_keys(o);
    auto refused = without_keys.load(g, Registry::with_builtins());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("without keys"), std::string::npos) << refused.status().ToString();
  }
  o.cluster.key_file = (dir / "driver.key").string();
  o.cluster.authorized_keys_file = (dir / "workers.keys").string();
  o.cluster.on_listening = [&](const std::string& endpoint) {
    ns.spawn({REDFLOW_CLI, "worker", "--connect", endpoint, "--slots", "8", "--slot-bytes", "65536", "--key", (dir / "node.key").string(),
              "--server-key", (dir / "driver.pub").string(), "--connect-timeout", "20"},
             (dir / "worker.out").string());
  };
  testing::within_seconds(60, "partition", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString() << "\nworker: " << read_all(dir / "worker.out");
    auto out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    ASSERT_GT(loaded->last_stats().tiles[1].actors, 0u) << "the worker in the namespace ran none of the graph";

    ASSERT_TRUE(ns.set_link_up(false));
    out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    EXPECT_EQ(loaded->last_stats().lost_tiles, 1u);

    out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    EXPECT_EQ(loaded->last_stats().tiles[1].actors, 0u) << "a lost worker is never taken back";
  });
}

}  // namespace
}  // namespace redflow
