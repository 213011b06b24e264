// ClusterOptions::validate: the errors every model gives for its network
// options, named, before anything binds; and that each model calls it.
#include <gtest/gtest.h>

#include "redflow/redflow.hpp"

namespace redflow {
namespace {

std::string error_of(const ClusterOptions& o) {
  Status s = o.validate();
  return s.ok() ? std::string("ok") : s.message();
}

TEST(ClusterOptions, DefaultsAndLoopbackAreValid) {
  ClusterOptions o;
  EXPECT_TRUE(o.validate().ok()) << o.validate().message();
  EXPECT_EQ(o.listen, "");
  EXPECT_EQ(o.wait_s, 30);
  EXPECT_EQ(o.heartbeat_timeout_s, 2);
  o.listen = "tcp://127.0.0.1:*";
  o.min_workers = 2;
  EXPECT_TRUE(o.validate().ok()) << o.validate().message();
  // Each model's own defaults, kept where they differ.
  EXPECT_EQ(stream::ClusterOptions{}.cluster.listen, "tcp://127.0.0.1:*");
  EXPECT_EQ(stream::ClusterOptions{}.cluster.min_workers, 1u);
  EXPECT_EQ(spits::Options{}.cluster.wait_s, 60);
  EXPECT_EQ(RuntimeOptions{}.cluster.listen, "");
}

TEST(ClusterOptions, EveryBadOptionIsANamedError) {
  ClusterOptions o;
  o.listen = "tcp://0.0.0.0:7000";
  EXPECT_NE(error_of(o).find("refusing to listen on tcp://0.0.0.0:7000 without keys"), std::string::npos) << error_of(o);
  o.key_file = "d.key";
  EXPECT_NE(error_of(o).find("--key given without --authorized-keys"), std::string::npos) << error_of(o);
  o.key_file.clear();
  o.authorized_keys_file = "w.keys";
  EXPECT_NE(error_of(o).find("--authorized-keys given without --key"), std::string::npos) << error_of(o);
  o.key_file = "d.key";
  EXPECT_EQ(error_of(o), "ok") << "both key files let it listen beyond loopback (the files are read when it binds)";
  o = {};
  o.listen = "http://127.0.0.1:80";
  EXPECT_NE(error_of(o).find("expected tcp://HOST:PORT"), std::string::npos) << error_of(o);
  o = {};
  o.min_workers = 3;
  o.max_workers = 2;
  EXPECT_NE(error_of(o).find("max_workers (--max-workers) 2 is below min_workers (--min-workers) 3"), std::string::npos) << error_of(o);
  o = {};
  o.wait_s = 0;
  EXPECT_NE(error_of(o).find("wait_s (--wait)"), std::string::npos) << error_of(o);
  o = {};
  o.heartbeat_timeout_s = -1;
  EXPECT_NE(error_of(o).find("heartbeat_timeout_s (--heartbeat-timeout)"), std::string::npos) << error_of(o);
}

// Each model refuses bad options with validate()'s message, before it binds,
// loads a plugin or waits: a negative wait would otherwise end in each
// model's own timeout error, and a missing plugin in its load error.
std::string graph_error(const ClusterOptions& cluster) {
  RuntimeOptions o;
  o.tiles = 1;
  o.cluster = cluster;
  o.cluster.min_workers = 1;
  Runtime rt(o);
  auto g = Graph::from_dot_file(std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot");
  if (!g.ok()) return g.status().message();
  auto loaded = rt.load(*g, Registry::with_builtins());
  return loaded.ok() ? "ok" : loaded.status().message();
}

std::string stream_error(const ClusterOptions& cluster) {
  stream::OperatorRegistry reg = stream::OperatorRegistry::with_builtins();
  stream::Program p;
  if (Status s = p.add(reg, "c", "counter", {{"n", "3"}}); !s.ok()) return s.message();
  if (Status s = p.add(reg, "s", "collect"); !s.ok()) return s.message();
  if (Status s = p.connect("c", 0, "s", 0, 8); !s.ok()) return s.message();
  stream::ClusterOptions c;
  c.cluster = cluster;
  c.cluster.min_workers = 1;
  auto r = stream::run_cluster(p, {}, c);
  return r.ok() ? "ok" : r.status().message();
}

std::string spits_error(const ClusterOptions& cluster) {
  spits::Options o;
  o.task_managers = 0;
  o.cluster = cluster;
  auto r = spits::run_job("no-such-plugin.so", {}, o);
  return r.ok() ? "ok" : r.status().message();
}

TEST(ClusterOptions, EveryModelCallsValidate) {
  ClusterOptions far;
  far.listen = "tcp://0.0.0.0:0";
  far.wait_s = 0.01;
  ClusterOptions negative;
  negative.listen = "tcp://127.0.0.1:*";
  negative.wait_s = -1;
  for (auto* model : {&graph_error, &stream_error, &spits_error}) {
    const std::string e = model(far);
    EXPECT_NE(e.find("refusing to listen on tcp://0.0.0.0:0 without keys"), std::string::npos) << e;
    const std::string w = model(negative);
    EXPECT_NE(w.find("wait_s (--wait) -1"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace redflow
