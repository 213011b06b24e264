// Validation: Graph::validate_structure() and validate(graph, registry,
// options) accept good graphs and reject each kind of bad one with a message
// naming the node at fault.
#include <gtest/gtest.h>

#include <cstring>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "expect_status.hpp"
#include "redflow/runtime.hpp"

namespace redflow {
namespace {

using testing::expect_error_naming;

std::vector<std::byte> zeros(std::size_t n) { return std::vector<std::byte>(n); }

// out = (a + b) * k over four i32.
Graph validated_pipeline() {
  Graph g("pipeline");
  DataId a = g.input("a", 16);
  DataId b = g.input("b", 16);
  DataId k = g.constant("k", zeros(16));
  DataId sum = g.inner("sum", 16);
  DataId out = g.output("out", 16);
  g.actor("add", "i32.add", {a, b}, sum);
  g.actor("mul", "i32.mul", {sum, k}, out);
  return g;
}

Registry pipeline_registry() {
  Registry r;
  r.add("i32.add", [](ActorContext&) {});
  r.add("i32.mul", [](ActorContext&) {});
  return r;
}

ActorNode make_actor(std::string name, std::vector<DataId> inputs, std::vector<DataId> outputs) {
  ActorNode a;
  a.name = std::move(name);
  a.function = "i32.add";
  a.inputs = std::move(inputs);
  a.outputs = std::move(outputs);
  return a;
}

TEST(ValidateTest, PipelinePasses) {
  Graph g = validated_pipeline();
  EXPECT_TRUE(g.validate_structure().ok()) << g.validate_structure().ToString();
  EXPECT_TRUE(validate(g, pipeline_registry(), RuntimeOptions{}).ok());
}

TEST(ValidateTest, ZeroByteNodesAndUnusedNodesAreAllowed) {
  Graph g;
  DataId in = g.input("empty", 0);
  g.input("unused", 8);
  DataId unread = g.inner("unread", 0);
  DataId out = g.output("out", 0);
  g.actor("f", "i32.add", {in}, unread);  // an inner node nobody reads is fine
  g.actor("h", "i32.add", {in}, out);
  EXPECT_TRUE(g.validate_structure().ok()) << g.validate_structure().ToString();
  EXPECT_TRUE(validate(g, pipeline_registry(), RuntimeOptions{}).ok());
}

TEST(ValidateTest, CycleNamesActorsOnIt) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId d1 = g.inner("d1", 4);
  DataId d2 = g.inner("d2", 4);
  DataId y = g.output("y", 4);
  g.actor("pre", "i32.add", {x}, y);
  g.actor("ping", "i32.add", {x, d2}, d1);
  g.actor("pong", "i32.add", {d1}, d2);
  Status s = g.validate_structure();
  expect_error_naming(s, {"cycle of 2 actors", "'p", "ping", "pong", "d1", "d2"});
  // The path is written in data-flow order and closes on itself.
  const bool forward = s.message().find("ping -> d1 -> pong -> d2 -> ping") != std::string::npos ||
                       s.message().find("pong -> d2 -> ping -> d1 -> pong") != std::string::npos;
  EXPECT_TRUE(forward) << s.ToString();
}

TEST(ValidateTest, ALongCycleIsNamedByItsFirstActorsAndItsLength) {
  // A ring of 200,000 actors: the message once listed every node (2 MB).
  constexpr std::size_t kRing = 200'000;
  Graph g;
  std::vector<DataId> d;
  // append, not "d" + std::to_string(i): GCC 12 -Wrestrict false positive at -O3.
  for (std::size_t i = 0; i < kRing; ++i) d.push_back(g.inner(std::string("d").append(std::to_string(i)), 4));
  for (std::size_t i = 0; i < kRing; ++i) {
    g.actor(std::string("a").append(std::to_string(i)), "i32.neg", {d[(i + kRing - 1) % kRing]}, d[i]);
  }
  Status s = g.validate_structure();
  expect_error_naming(s, {"is on a cycle of 200000 actors", "more actors)"});
  EXPECT_LT(s.message().size(), 400u) << s.ToString();
  // The steps shown follow the data: aK -> dK -> aK+1 (indices mod kRing).
  const std::size_t colon = s.message().find(": ");
  ASSERT_NE(colon, std::string::npos);
  const std::string path = s.message().substr(colon + 2);
  const std::size_t first = std::stoul(path.substr(1, path.find(' ') - 1));
  const std::string next = std::to_string((first + 1) % kRing);
  EXPECT_EQ(path.rfind("a" + std::to_string(first) + " -> d" + std::to_string(first) + " -> a" + next + " -> d" + next, 0), 0u) << path;
  EXPECT_TRUE(path.ends_with("-> a" + std::to_string(first))) << path;
}

TEST(ValidateTest, CycleBehindAnotherActorIsFound) {
  // 'tail' is left over by Kahn's algorithm but is not itself on the cycle.
  Graph g;
  DataId d1 = g.inner("d1", 4);
  DataId d2 = g.inner("d2", 4);
  DataId o = g.output("o", 4);
  g.actor("tail", "i32.add", {d1}, o);
  g.actor("loop_a", "i32.add", {d2}, d1);
  g.actor("loop_b", "i32.add", {d1}, d2);
  expect_error_naming(g.validate_structure(), {"loop_a", "loop_b"});
}

TEST(ValidateTest, SelfLoopNamesActor) {
  Graph g;
  DataId d = g.inner("d", 4);
  g.actor("selfish", "i32.add", {d}, d);
  expect_error_naming(g.validate_structure(), {"selfish -> d -> selfish"});
}

TEST(ValidateTest, CycleFromDotNamesActor) {
  Result<Graph> g = Graph::from_dot_string(R"(digraph g {
      a [actor="f"]; b [actor="f"]; p [kind=inner, bytes=4]; q [kind=inner, bytes=4];
      a -> p; p -> b [port=0]; b -> q; q -> a [port=0]; })");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  expect_error_naming(g->validate_structure(), {"'a'", "a -> p -> b -> q -> a"});
}

TEST(ValidateTest, ActorWithZeroOutputsNamesActor) {
  Graph g;
  DataId x = g.input("x", 4);
  g.add_actor(make_actor("void_actor", {x}, {}));
  expect_error_naming(g.validate_structure(), {"void_actor", "0 output"});
}

TEST(ValidateTest, ActorWithTwoOutputsNamesActor) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId y = g.output("y", 4);
  DataId z = g.output("z", 4);
  g.add_actor(make_actor("split_brain", {x}, {y, z}));
  expect_error_naming(g.validate_structure(), {"split_brain", "2 output"});
}

TEST(ValidateTest, InnerNodeWithTwoProducersNamesNodeAndCount) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId shared = g.inner("shared", 4);
  DataId y = g.output("y", 4);
  g.actor("w1", "i32.add", {x}, shared);
  g.actor("w2", "i32.add", {x}, shared);
  g.actor("r", "i32.add", {shared}, y);
  expect_error_naming(g.validate_structure(), {"shared", "2 producers", "w1", "w2"});
}

TEST(ValidateTest, InnerNodeWithTwoProducersFromDotNamesNode) {
  Result<Graph> g = Graph::from_dot_string(R"(digraph g {
      x [kind=input, bytes=4]; both [kind=output, bytes=4];
      f [actor="f"]; h [actor="f"];
      x -> f [port=0]; x -> h [port=0]; f -> both; h -> both; })");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  expect_error_naming(g->validate_structure(), {"both", "2 producers"});
}

TEST(ValidateTest, InnerNodeWithoutProducerNamesNode) {
  Graph g;
  DataId orphan = g.inner("orphan", 4);
  DataId y = g.output("y", 4);
  g.actor("r", "i32.add", {orphan}, y);
  expect_error_naming(g.validate_structure(), {"orphan", "0 producers"});
}

TEST(ValidateTest, OutputNodeWithoutProducerNamesNode) {
  Graph g;
  g.input("x", 4);
  g.output("never_written", 4);
  expect_error_naming(g.validate_structure(), {"never_written", "0 producers"});
}

TEST(ValidateTest, InputWithProducerNamesNodeAndActor) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId overwritten = g.input("overwritten", 4);
  g.actor("clobber", "i32.add", {x}, overwritten);
  expect_error_naming(g.validate_structure(), {"overwritten", "clobber", "input"});
}

TEST(ValidateTest, ConstantWithProducerNamesNodeAndActor) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId k = g.constant("fixed", zeros(4));
  g.actor("clobber", "i32.add", {x}, k);
  expect_error_naming(g.validate_structure(), {"fixed", "clobber", "constant"});
}

TEST(ValidateTest, DuplicateNamesRejected) {
  Graph g;
  DataId x = g.input("twin", 4);
  DataId y = g.output("y", 4);
  g.actor("twin", "i32.add", {x}, y);
  expect_error_naming(g.validate_structure(), {"'twin'", "a data node and an actor"});
}

TEST(ValidateTest, EmptyNameRejected) {
  Graph g;
  g.input("", 4);
  expect_error_naming(g.validate_structure(), {"data node #0", "empty name"});
}

TEST(ValidateTest, ConstantContentsMustMatchBytes) {
  Graph g = validated_pipeline();
  g.mutable_data(*g.find_data("k")).bytes = 20;
  expect_error_naming(g.validate_structure(), {"'k'", "16", "20"});
}

TEST(ValidateTest, DanglingDataIdNamesActor) {
  Graph g;
  DataId y = g.output("y", 4);
  g.add_actor(make_actor("dangling", {42}, {y}));
  expect_error_naming(g.validate_structure(), {"dangling", "42"});
}

TEST(ValidateTest, ActorChangedAfterAddIsCaught) {
  Graph g = validated_pipeline();
  g.mutable_actor(0).inputs.push_back(*g.find_data("k"));  // no consumer link was made
  expect_error_naming(g.validate_structure(), {"'k'"});
}

TEST(ValidateTest, UnknownFunctionNamesActorAndFunction) {
  Graph g;
  DataId x = g.input("x", 4);
  DataId y = g.output("y", 4);
  g.actor("typo", "i32.ad", {x}, y);
  Registry r;
  r.add("i32.add", [](ActorContext&) {});
  Status s = validate(g, r, RuntimeOptions{});
  expect_error_naming(s, {"typo", "i32.ad", "redflow actors", "--lib", "did you mean 'i32.add'"});
}

TEST(ValidateTest, ShapeCheckFailurePrefixedWithActor) {
  Graph g;
  DataId x = g.input("x", 6);
  DataId y = g.output("y", 6);
  g.actor("odd_sized", "i32.neg", {x}, y).args("mode=fast");
  Registry r;
  ActorSpec spec;
  spec.function = [](ActorContext&) {};
  spec.check = [](const ActorShape& shape) -> std::string {
    if (shape.input_bytes.size() != 1 || shape.args != "mode=fast") return "unexpected shape";
    if (shape.input_bytes[0] % 4 != 0) return "input is not a whole number of i32";
    return "";
  };
  r.add("i32.neg", spec);
  expect_error_naming(validate(g, r, RuntimeOptions{}), {"odd_sized", "not a whole number of i32"});

  Graph ok;
  ok.actor("fine", "i32.neg", {ok.input("x", 8)}, ok.output("y", 8)).args("mode=fast");
  EXPECT_TRUE(validate(ok, r, RuntimeOptions{}).ok());
}

TEST(ValidateTest, DataNodeTooLargeForSlotAndDriverNamesNodeAndLimits) {
  Graph g;
  DataId x = g.input("small", 16);
  DataId y = g.output("huge", 4096);
  g.actor("grow", "i32.add", {x}, y);
  RuntimeOptions options;
  options.slot_bytes = 1024;
  options.driver_bytes = 2048;
  expect_error_naming(validate(g, pipeline_registry(), options), {"huge", "4096", "1024", "2048"});

  options.driver_bytes = 4096;  // the driver can hold it
  EXPECT_TRUE(validate(g, pipeline_registry(), options).ok());
  options.driver_bytes = 0;  // unresolved driver budget: not limited here
  EXPECT_TRUE(validate(g, pipeline_registry(), options).ok());
  options.slot_bytes = 8192;  // a slot can hold it
  options.driver_bytes = 16;
  EXPECT_TRUE(validate(g, pipeline_registry(), options).ok());
}

TEST(ValidateTest, DataNodeChecksKeepTheirOrderInOneWalk) {
  // The data-node checks share one walk, but report as separate walks would:
  // a producer error anywhere comes before a constant error on an earlier
  // node, and a constant error before an element-type error.
  Graph g;
  const DataId k = g.constant("k", zeros(4));
  g.mutable_data(k).bytes = 8;                                 // constant: contents do not match
  const DataId typed = g.input("typed", 6);
  g.mutable_data(typed).type = ElementType::kI32;              // element type: 6 bytes of int32
  g.output("late", 4);                                         // producers: none
  expect_error_naming(g.validate_structure(), {"'late'", "0 producers"});
  Graph h;
  const DataId ht = h.input("typed", 6);
  h.mutable_data(ht).type = ElementType::kI32;
  const DataId hk = h.constant("k", zeros(4));
  h.mutable_data(hk).bytes = 8;
  expect_error_naming(h.validate_structure(), {"constant 'k'", "declares bytes=8"});
}

TEST(ValidateTest, StructureIsCheckedBeforeFunctions) {
  Graph g;
  g.output("lonely", 4);
  Registry empty;
  expect_error_naming(validate(g, empty, RuntimeOptions{}), {"lonely"});
}

}  // namespace
}  // namespace redflow
