// REM with the in-process store: the program model and its validation, the
// graph mapping against driver-mode runs, coalescing, corruption detection.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <thread>

#include "redflow/rem.hpp"
#include "rem/stencil.hpp"
#include "rem/value_codec.hpp"
#include "test_graphs.hpp"

namespace redflow::testing {
namespace {

using namespace redflow::rem;

// test_registry()'s t.mix and t.mix_driver, each calling `before` first:
// the tests below learn from it who executes a task and when.
Registry mix_registry_with_hook(std::function<void()> before) {
  Registry reg;
  auto hooked = [before](ActorContext& ctx) {
    before();
    mix(ctx);
  };
  reg.add("t.mix", hooked);
  ActorSpec on_driver;
  on_driver.function = hooked;
  on_driver.on_driver = true;
  reg.add("t.mix_driver", on_driver);
  return reg;
}

Computes add_one() {
  return [](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
    for (std::size_t i = 0; i < out[0].size(); ++i) out[0][i] = static_cast<std::byte>(static_cast<unsigned>(in[0][i]) + 1);
    return Status::Ok();
  };
}

TEST(RemProgram, RefusesInvalidProgramsNamingTheCulprit) {
  {
    Program p("p");
    LabelId a = p.input("a", 4), b = p.label("b", 4);
    p.task("t", {a}, {b}, add_one());
    EXPECT_NE(p.validate().message().find("no result label"), std::string::npos) << p.validate().ToString();
    p.result(b);
    EXPECT_TRUE(p.validate().ok()) << p.validate().ToString();
    p.label("orphan", 4);
    EXPECT_NE(p.validate().message().find("label 'orphan' has no producer"), std::string::npos) << p.validate().ToString();
  }
  {
    Program p("p");
    LabelId a = p.input("a", 4), b = p.label("b", 4);
    p.result(b);
    p.task("t1", {a}, {b}, add_one());
    p.task("t2", {a}, {b}, add_one());
    EXPECT_NE(p.validate().message().find("label 'b' has two producers: tasks 't1' and 't2'"), std::string::npos) << p.validate().ToString();
  }
  {
    Program p("p");
    LabelId a = p.input("a", 4), b = p.label("b", 4), c = p.label("c", 4);
    p.result(c);
    p.task("t1", {a, c}, {b}, add_one());
    p.task("t2", {b}, {c}, add_one());
    Status s = p.validate();
    EXPECT_NE(s.message().find("no partial order"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("'t1'"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("'t2'"), std::string::npos) << s.ToString();
  }
  {
    Program p("p");
    LabelId a = p.label("a", 4);
    p.result(a);
    p.task("self", {a}, {a}, add_one());
    EXPECT_NE(p.validate().message().find("task 'self' requires label 'a', which it produces itself"), std::string::npos)
        << p.validate().ToString();
  }
  {
    Program p("p");
    LabelId a = p.input("a", 4), b = p.label("b", 4);
    p.result(b);
    p.task("t", {a}, {b}, add_one());
    p.task("idle", {a}, {}, add_one());
    EXPECT_NE(p.validate().message().find("task 'idle' produces no label"), std::string::npos) << p.validate().ToString();
  }
  {
    Program p("p");
    LabelId a = p.input("a", 4), b = p.label("b", 4);
    p.result(b);
    p.task("t", {a, 7}, {b}, add_one());
    EXPECT_NE(p.validate().message().find("task 't' requires label #7"), std::string::npos) << p.validate().ToString();
  }
}

TEST(RemProgram, TaskProducingSeveralLabelsAndWrongSizeIsNamed) {
  Program p("multi");
  LabelId x = p.input("x", 4), lo = p.label("lo", 2), hi = p.label("hi", 2), sum = p.label("sum", 2);
  p.task("split", {x}, {lo, hi}, [](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
    std::memcpy(out[0].data(), in[0].data(), 2);
    std::memcpy(out[1].data(), in[0].data() + 2, 2);
    return Status::Ok();
  });
  p.task("add", {lo, hi}, {sum}, [](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
    for (int i = 0; i < 2; ++i) out[0][i] = static_cast<std::byte>(static_cast<unsigned>(in[0][i]) + static_cast<unsigned>(in[1][i]));
    return Status::Ok();
  });
  p.result(sum);
  auto store = make_inproc_store();
  std::vector<std::byte> xv = {std::byte{1}, std::byte{2}, std::byte{10}, std::byte{20}};
  auto run = run_program(p, *store, {{"x", xv}}, 3);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outputs.at("sum"), (Value{std::byte{11}, std::byte{22}}));

  Program bad("bad");
  LabelId y = bad.input("y", 4), z = bad.label("z", 4);
  bad.result(z);
  bad.task("shrink", {y}, {z}, [](std::span<const std::span<const std::byte>>, std::span<Value> out) {
    out[0].resize(3);
    return Status::Ok();
  });
  auto r = run_program(bad, *store, {{"y", xv}}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("task 'shrink' computed 3 bytes for label 'z', which declares 4"), std::string::npos) << r.status().ToString();
}

// Every graph shape the runtime tests use runs uncoordinated with the same outputs as the driver.
TEST(RemGraph, OutputsEqualDriverModeForEveryShape) {
  Registry reg = test_registry();
  std::vector<Shape> shapes;
  shapes.push_back(chain(6));
  shapes.push_back(diamond());
  shapes.push_back(fan_out_fan_in(8));
  shapes.push_back(random_dag(40, 5));
  for (auto& shape : shapes) {
    SCOPED_TRACE(shape.name);
    std::vector<std::vector<std::byte>> bufs;
    Inputs inputs;
    for (std::size_t i = 0; i < shape.inputs.size(); ++i) {
      bufs.push_back(random_bytes(shape.graph.data(*shape.graph.find_data(shape.inputs[i])).bytes, 100 + static_cast<std::uint32_t>(i)));
    }
    for (std::size_t i = 0; i < shape.inputs.size(); ++i) inputs[shape.inputs[i]] = bufs[i];
    Runtime rt({.tiles = 2, .scheduler = Scheduler::kSteal});
    auto loaded = rt.load(shape.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto driver = loaded->execute(inputs);
    ASSERT_TRUE(driver.ok()) << driver.status().ToString();
    auto program = from_graph(shape.graph, reg);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    for (unsigned schedulers : {1u, 4u}) {
      auto store = make_inproc_store();
      auto run = run_program(*program, *store, inputs, schedulers);
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      EXPECT_EQ(run->outputs, *driver);
      EXPECT_TRUE(run->stats.finished);
      // Every needed task ran at least once; duplicates are counted, never more than the extra schedulers could cause.
      std::size_t computing = 0;  // actors and constants: the tasks that are not input sources
      for (const Task& t : program->tasks()) computing += t.computes ? 1 : 0;
      EXPECT_GE(computing, shape.graph.actors().size());
      EXPECT_EQ(run->stats.executed - run->stats.duplicates, computing);
    }
  }
}

TEST(RemGraph, DemoGraphWithConstantsAndSpecialActors) {
  auto g = Graph::from_dot_file(std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Registry reg = Registry::with_builtins();
  auto a = random_bytes(256, 3);
  Inputs in{{"A", a}};
  Runtime rt({.tiles = 2});
  auto loaded = rt.load(*g, reg);
  ASSERT_TRUE(loaded.ok());
  auto driver = loaded->execute(in);
  ASSERT_TRUE(driver.ok());
  auto program = from_graph(*g, reg);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto store = make_inproc_store();
  auto run = run_program(*program, *store, in, 2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outputs, *driver);
}

TEST(RemGraph, UnknownActorFunctionIsRefusedNamingTheActor) {
  Graph g("g");
  auto x = g.input("X", 16);
  g.actor("mystery", "no.such.function", {x}, g.output("Y", 16));
  auto p = from_graph(g, test_registry());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("mystery"), std::string::npos) << p.status().ToString();
}

TEST(RemGraph, FailingActorStopsTheRunNamingTheTask) {
  Graph g("g");
  auto x = g.input("X", 16);
  g.actor("boom", "t.fail", {x}, g.output("Y", 16));
  auto p = from_graph(g, test_registry());
  ASSERT_TRUE(p.ok());
  auto store = make_inproc_store();
  auto xv = random_bytes(16, 1);
  auto r = run_program(*p, *store, {{"X", xv}}, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("task 'boom' failed"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("asked to fail"), std::string::npos) << r.status().ToString();
}

TEST(RemCodec, ChunkedValuesRoundTripAndCorruptionIsDetected) {
  Program p("codec");
  LabelId big = p.input("big");
  p.result(big);
  ASSERT_TRUE(p.validate().ok());
  auto store = make_inproc_store(1000);  // forces 1000-byte chunks
  LabelCodec codec(*store, p, "inst1");
  auto v = random_bytes(10'000, 9);
  auto w = codec.write(big, v);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(*w, WriteOutcome::kWritten);
  auto r = codec.read(big);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->present());
  EXPECT_EQ(Value(r->bytes.begin(), r->bytes.end()), v);
  // The same value again: fine. A different value: refused, naming the label.
  w = codec.write(big, v);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, WriteOutcome::kAlreadyThere);
  auto other = random_bytes(10'000, 10);
  w = codec.write(big, other);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("label 'big' already holds a different value"), std::string::npos) << w.status().ToString();
  // Corrupt values in a second store, byte by byte of a small one.
  Program q("codec");
  LabelId small = q.input("small");
  q.result(small);
  ASSERT_TRUE(q.validate().ok());
  auto sv = random_bytes(64, 11);
  for (std::size_t flip : {std::size_t{0}, std::size_t{20}, std::size_t{40}, std::size_t{95}}) {
    auto s2 = make_inproc_store();
    LabelCodec good(*s2, q, "i");
    ASSERT_TRUE(good.write(small, sv).ok());
    auto raw = s2->get(good.key(small));
    ASSERT_TRUE(raw.ok() && *raw);
    Value bad = **raw;
    ASSERT_LT(flip, bad.size());
    bad[flip] ^= std::byte{0x40};
    auto s3 = make_inproc_store();
    ASSERT_TRUE(*s3->add(good.key(small), bad));
    LabelCodec reader(*s3, q, "i");
    auto got = reader.read(small);
    ASSERT_FALSE(got.ok()) << "flip at " << flip << " went unnoticed";
    EXPECT_NE(got.status().message().find("label 'small'"), std::string::npos) << got.status().ToString();
    EXPECT_NE(got.status().message().find("corrupted"), std::string::npos) << got.status().ToString();
  }
  // A half-written value (truncated record) is refused too.
  auto s4 = make_inproc_store();
  LabelCodec c4(*s4, q, "i");
  auto raw = make_inproc_store();
  LabelCodec c5(*raw, q, "i");
  ASSERT_TRUE(c5.write(small, sv).ok());
  Value rec = **raw->get(c5.key(small));
  rec.resize(rec.size() / 2);
  ASSERT_TRUE(*s4->add(c4.key(small), rec));
  EXPECT_FALSE(c4.read(small).ok());
}

TEST(RemCodec, RecordsAreBoundToTheirKeyAndProgram) {
  Program p("bound");
  LabelId a = p.input("a", 64), b = p.input("b", 64), c = p.label("c", 64);
  p.task("t", {a, b}, {c}, add_one());
  p.result(c);
  ASSERT_TRUE(p.validate().ok());
  auto expect_refused = [](const Result<LabelValue>& got, const std::vector<std::string>& parts) {
    ASSERT_FALSE(got.ok()) << "a record that is not this key's was used";
    for (const std::string& part : parts) EXPECT_NE(got.status().message().find(part), std::string::npos) << part << " in " << got.status().ToString();
  };
  for (std::size_t limit : {std::size_t{1} << 20, std::size_t{100}}) {  // inline records, then chunked ones (a one-chunk manifest)
    SCOPED_TRACE(fmt::format("item limit {}", limit));
    auto store = make_inproc_store(limit);
    LabelCodec codec(*store, p, "i1");
    ASSERT_TRUE(codec.write(a, random_bytes(64, 1)).ok());
    const Value rec_a = **store->get(codec.key(a));
    EXPECT_EQ(rec_a.size() > 64 + 48, limit > 100) << "inline: header, key and the 64 bytes; chunked: header, key and a chunk table";
    // A valid record copied onto another label's key: refused like a corrupted one, naming both.
    ASSERT_TRUE(*store->add(codec.key(b), rec_a));
    expect_refused(codec.read(b), {"label 'b' (key rf:i1:L1) is corrupted", "record written for key rf:i1:L0 (label 'a')"});
    // ... onto the same label of another instance.
    LabelCodec other(*store, p, "i2");
    ASSERT_TRUE(*store->add(other.key(a), rec_a));
    expect_refused(other.read(a), {"label 'a' (key rf:i2:L0) is corrupted", "record written for key rf:i1:L0"});
    // Under its own key but read by another program (one task renamed).
    Program q("bound");
    LabelId qa = q.input("a", 64), qb = q.input("b", 64), qc = q.label("c", 64);
    q.task("t2", {qa, qb}, {qc}, add_one());
    q.result(qc);
    ASSERT_TRUE(q.validate().ok());
    ASSERT_NE(p.fingerprint(), q.fingerprint());
    expect_refused(LabelCodec(*store, q, "i1").read(qa),
                   {"label 'a' (key rf:i1:L0) is corrupted", fmt::format("written by another program (program hash {:016x}", p.fingerprint())});
    // The original stays readable.
    auto fine = codec.read(a);
    ASSERT_TRUE(fine.ok()) << fine.status().ToString();
    ASSERT_TRUE(fine->present());
    EXPECT_EQ(Value(fine->bytes.begin(), fine->bytes.end()), random_bytes(64, 1));
  }
  // A record of the format that bound neither key nor program (magic RFL1): a clear error, not a value.
  auto store = make_inproc_store();
  LabelCodec codec(*store, p, "old");
  Value v1(32 + 64);
  std::memcpy(v1.data(), "RFL1", 4);
  ASSERT_TRUE(*store->add(codec.key(a), v1));
  expect_refused(codec.read(a), {"label 'a' (key rf:old:L0) holds a record of an older format", "use another --instance"});
}

TEST(RemRun, AnotherProgramUnderTheSameInstanceIsRefusedByName) {
  Registry reg = test_registry();
  auto real = from_graph(chain(4).graph, reg);
  auto changed = from_graph(chain(4, 2).graph, reg);
  ASSERT_TRUE(real.ok() && changed.ok());
  auto x = random_bytes(kBytes, 3);
  Inputs in{{"X", x}};
  auto store = make_inproc_store();
  RunOptions o;
  o.instance = "reuse1";
  auto first = run_program(*changed, *store, in, 2, o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_NE(first->outputs, run_sequential(chain(4).graph, reg, in));  // serving it would be a wrong output
  const std::string refused = "instance 'reuse1' belongs to another program";
  auto second = run_program(*real, *store, in, 2, o);
  ASSERT_FALSE(second.ok()) << "the other program's outputs were served";
  EXPECT_EQ(second.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(second.status().message().find(refused), std::string::npos) << second.status().ToString();
  EXPECT_NE(second.status().message().find(fmt::format("program hash {:016x}", changed->fingerprint())), std::string::npos);
  EXPECT_NE(second.status().message().find("use another --instance"), std::string::npos);
  // A joiner without inputs, and a reader of the results, are refused the same way.
  auto joiner = run_scheduler(*real, *store, {}, o);
  ASSERT_FALSE(joiner.ok());
  EXPECT_NE(joiner.status().message().find(refused), std::string::npos) << joiner.status().ToString();
  auto read = read_results(*real, *store, "reuse1");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(refused), std::string::npos) << read.status().ToString();
  // Its own program is welcome back: nothing runs again, the same outputs.
  auto again = run_program(*changed, *store, in, 1, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stats.executed, 0u);
  EXPECT_EQ(again->outputs, first->outputs);
  // Other inputs under the instance: refused naming the input.
  auto y = random_bytes(kBytes, 4);
  auto other_inputs = run_program(*changed, *store, {{"X", y}}, 1, o);
  ASSERT_FALSE(other_inputs.ok());
  EXPECT_NE(other_inputs.status().message().find("input label 'X' already holds a different value in instance 'reuse1'"), std::string::npos)
      << other_inputs.status().ToString();
}

TEST(RemRun, CorruptedInnerLabelStopsTheRunInsteadOfBeingConsumed) {
  Shape s = chain(4);
  Registry reg = test_registry();
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  auto x = random_bytes(kBytes, 4);
  Inputs in{{"X", x}};
  auto store = make_inproc_store();
  const std::string inst = derive_instance(*p, in);
  // Plant a corrupted value for d1 before anyone computes it.
  LabelCodec codec(*store, *p, inst);
  auto d1 = *p->find_label("d1");
  auto clean = make_inproc_store();
  LabelCodec clean_codec(*clean, *p, inst);
  ASSERT_TRUE(clean_codec.write(d1, random_bytes(kBytes, 5)).ok());
  Value rec = **clean->get(clean_codec.key(d1));
  rec.back() ^= std::byte{1};
  ASSERT_TRUE(*store->add(codec.key(d1), rec));
  auto r = run_program(*p, *store, in, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("label 'd1'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("corrupted"), std::string::npos) << r.status().ToString();
}

TEST(RemRun, SchedulersThatJoinLaterWithoutInputsHelpFinish) {
  Shape s = fan_out_fan_in(16);
  auto x = random_bytes(kBytes, 8);
  Inputs in{{"X", x}};
  auto expected = run_sequential(s.graph, test_registry(), in);
  // The starter's first task waits (at most 10 s) until the joiner has
  // executed one: help that is measured, not left to timing.
  const std::thread::id starter_thread = std::this_thread::get_id();
  std::atomic<int> joiner_executions{0};
  Registry reg = mix_registry_with_hook([&] {
    if (std::this_thread::get_id() != starter_thread) {
      ++joiner_executions;
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (joiner_executions == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  auto store = make_inproc_store();
  const std::string inst = derive_instance(*p, in);
  RunOptions joiner;
  joiner.instance = inst;
  joiner.timeout = std::chrono::seconds(20);
  // The joiner starts first and waits for the inputs; then the starter writes them.
  Result<RunStats> joined = Status::Internal("not run");
  std::thread t([&] { joined = run_scheduler(*p, *store, {}, joiner); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  RunOptions starter;
  starter.seed = 2;
  auto started = run_scheduler(*p, *store, in, starter);
  t.join();
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_TRUE(joined->finished);
  EXPECT_GT(joined->executed, 0u) << "the joiner executed no task";
  EXPECT_GT(joiner_executions.load(), 0) << "no task ran on the joiner's thread";
  auto out = read_results(*p, *store, inst);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, expected);
  // Without inputs and without an instance id, a scheduler cannot know which run to join.
  auto lost = run_scheduler(*p, *store, {}, RunOptions{});
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.status().message().find("input label 'X' not given"), std::string::npos);
}

TEST(RemRun, StoppedSchedulersAreReplacedAndTheRunFinishes) {
  Shape s = random_dag(60, 12);
  std::vector<std::vector<std::byte>> bufs;
  Inputs in;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) bufs.push_back(random_bytes(kBytes, 40 + static_cast<std::uint32_t>(i)));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) in[s.inputs[i]] = bufs[i];
  auto expected = run_sequential(s.graph, test_registry(), in);
  // The three first schedulers stop when `stop_after` tasks have started:
  // mid-run, after some labels were written and before the end.
  std::atomic<bool> stop{false};
  std::atomic<unsigned> started{0}, stop_after{0};
  Registry reg = mix_registry_with_hook([&] {
    if (++started == stop_after) stop = true;
  });
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  std::mt19937 rng(77);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto store = make_inproc_store();
    stop = false;
    started = 0;
    stop_after = 5 + static_cast<unsigned>(rng() % 40);
    RunOptions o;
    o.stop = &stop;
    std::vector<std::thread> first;
    for (int i = 0; i < 3; ++i)
      first.emplace_back([&, i] {
        RunOptions oi = o;
        oi.seed = 10 + i;
        (void)run_scheduler(*p, *store, in, oi);
      });
    for (auto& t : first) t.join();
    ASSERT_TRUE(stop) << "the first schedulers finished before " << stop_after << " tasks had started";
    stop_after = 0;  // the replacements run to the end
    auto run = run_program(*p, *store, in, 2);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->outputs, expected);
    // The replacements found work left, and did not redo all 60 tasks.
    EXPECT_GT(run->stats.executed, 0u) << "the stop landed after the end";
    EXPECT_LT(run->stats.executed - run->stats.duplicates, 60u) << "no label the stopped schedulers wrote was used";
  }
}

TEST(RemCoalesce, SameOutputsWithFewerTasksAndBundledLabels) {
  Shape s = fan_out_fan_in(12);
  Registry reg = test_registry();
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  auto x = random_bytes(kBytes, 21);
  Inputs in{{"X", x}};
  auto expected = run_sequential(s.graph, reg, in);
  for (unsigned k : {1u, 3u, 12u}) {
    for (bool labels : {false, true}) {
      SCOPED_TRACE(fmt::format("tasks={} labels={}", k, labels));
      auto c = coalesce(*p, {.tasks = k, .labels = labels});
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      const std::size_t fine = p->tasks().size(), coarse = c->program.tasks().size();
      if (k == 1) {
        EXPECT_EQ(coarse, fine);
      } else {
        EXPECT_LT(coarse, fine);
      }
      if (labels && k > 1) {
        EXPECT_LT(c->program.labels().size(), p->labels().size());
      }
      auto store = make_inproc_store();
      auto run = run_program(c->program, *store, in, 3);
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      EXPECT_EQ(run->outputs, expected);
    }
  }
  EXPECT_FALSE(coalesce(*p, {.tasks = 0}).ok());
}

TEST(RemStencil, EqualsThePlainThreadedStencilBitForBit) {
  stencil::Params sp{.n = 48, .tiles = 4, .steps = 7};
  auto expected = stencil::run_threads(sp, 3);
  // The threaded stencil itself against a direct sequential sweep.
  std::vector<float> a = stencil::initial_grid(sp), b = a;
  for (std::size_t s = 0; s < sp.steps; ++s) {
    for (std::size_t r = 1; r + 1 < sp.n; ++r)
      for (std::size_t c = 1; c + 1 < sp.n; ++c) {
        const float* x = &a[r * sp.n + c];
        b[r * sp.n + c] = 0.2f * (x[0] + x[-static_cast<std::ptrdiff_t>(sp.n)] + x[sp.n] + x[-1] + x[1]);
      }
    std::swap(a, b);
  }
  ASSERT_EQ(expected, a);
  EXPECT_NE(expected, stencil::initial_grid(sp));  // the steps changed something
  auto prog = stencil::program(sp);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  EXPECT_EQ(prog->tasks().size(), 16u * 8u);
  for (auto [k, labels] : {std::pair{1u, false}, std::pair{4u, false}, std::pair{4u, true}, std::pair{16u, true}}) {
    SCOPED_TRACE(fmt::format("tasks={} labels={}", k, labels));
    auto c = coalesce(*prog, {.tasks = k, .labels = labels});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto store = make_inproc_store();
    auto run = run_program(c->program, *store, {}, 3);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto grid = stencil::gather(sp, run->outputs);
    ASSERT_TRUE(grid.ok()) << grid.status().ToString();
    EXPECT_EQ(*grid, expected);
  }
  // Deeper tasks (strips and corners d cells deep, a partial last level,
  // a depth above the steps, a depth of a whole tile) compute the same bits
  // and store fewer tiles.
  for (std::size_t depth : {2u, 3u, 5u, 12u}) {
    SCOPED_TRACE(fmt::format("depth {}", depth));
    stencil::Params deep = sp;
    deep.depth = depth;
    auto d = stencil::program(deep);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const std::size_t levels = (sp.steps + std::min(depth, sp.steps) - 1) / std::min(depth, sp.steps);
    EXPECT_EQ(d->tasks().size(), 16u * (levels + 1));
    for (unsigned schedulers : {1u, 3u}) {
      auto store = make_inproc_store();
      auto run = run_program(*d, *store, {}, schedulers);
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      auto grid = stencil::gather(deep, run->outputs);
      ASSERT_TRUE(grid.ok()) << grid.status().ToString();
      EXPECT_EQ(*grid, expected);
    }
  }
  // With several tiles per side deeper than a tile is wide, the grid's ring lies inside a neighbour's strip.
  for (std::size_t depth : {4u, 6u}) {
    stencil::Params small{.n = 24, .tiles = 4, .steps = 9, .depth = depth};
    auto d = stencil::program(small);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    auto store = make_inproc_store();
    auto run = run_program(*d, *store, {}, 2);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto grid = stencil::gather(small, run->outputs);
    ASSERT_TRUE(grid.ok()) << grid.status().ToString();
    EXPECT_EQ(*grid, stencil::run_threads(small, 2)) << "depth " << depth;
  }
  EXPECT_NE(stencil::check({.n = 48, .tiles = 4, .steps = 3, .depth = 13}).message().find("--depth 13"), std::string::npos);
  EXPECT_NE(stencil::check({.n = 48, .tiles = 4, .steps = 3, .depth = 0}).message().find("--depth 0"), std::string::npos);
  EXPECT_NE(stencil::check({.n = 50, .tiles = 4, .steps = 1}).message().find("--n 50"), std::string::npos);
  EXPECT_NE(stencil::check({.n = 48, .tiles = 4, .steps = 0}).message().find("--steps"), std::string::npos);
  EXPECT_GT(stencil::triad_bandwidth(1 << 16, 2, 2), 0.0);
}

// A claim is the one key a store forgets: added once, refused while it
// holds, added again once its lease is over.
TEST(RemClaims, AClaimHoldsForItsLeaseAndThenLapses) {
  auto store = make_inproc_store();
  ASSERT_TRUE(store->expires());
  const auto lease = std::chrono::milliseconds(100);
  const auto t0 = std::chrono::steady_clock::now();
  auto first = store->add_expiring("c1", {}, lease);
  ASSERT_TRUE(first.ok() && *first);
  auto again = store->add_expiring("c1", {}, lease);
  ASSERT_TRUE(again.ok());
  if (std::chrono::steady_clock::now() - t0 < lease) {
    EXPECT_FALSE(*again) << "a claim held for its lease was taken again";
  }
  auto other = store->add_expiring("c2", {}, lease);
  ASSERT_TRUE(other.ok() && *other) << "another key is another claim";
  std::this_thread::sleep_until(t0 + lease + std::chrono::milliseconds(20));
  auto lapsed = store->add_expiring("c1", {}, lease);
  ASSERT_TRUE(lapsed.ok());
  EXPECT_TRUE(*lapsed) << "the claim did not lapse after its lease";
}

// A task claimed by a scheduler that then died (a claim nobody will honour)
// is left alone until the claim lapses, then run: the run finishes with the
// right outputs, the task runs once, and the wait is the lease, not forever.
TEST(RemClaims, ATaskWhoseClaimerDiedRunsOnceItsClaimLapses) {
  Shape s = chain(4);
  auto x = random_bytes(kBytes, 21);
  Inputs in{{"X", x}};
  auto expected = run_sequential(s.graph, test_registry(), in);
  std::atomic<int> runs{0};
  Registry reg = mix_registry_with_hook([&] { ++runs; });
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  auto store = make_inproc_store();
  const std::string inst = derive_instance(*p, in);
  const auto a2 = p->find_task("a2");
  ASSERT_TRUE(a2.has_value());
  LabelCodec codec(*store, *p, inst);
  const auto dead_lease = std::chrono::milliseconds(400);
  const auto claimed_at = std::chrono::steady_clock::now();
  auto claimed = codec.claim(*a2, dead_lease);
  ASSERT_TRUE(claimed.ok() && *claimed);
  RunOptions o;
  o.timeout = std::chrono::seconds(20);
  auto stats = run_scheduler(*p, *store, in, o);
  const auto took = std::chrono::steady_clock::now() - claimed_at;
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(stats->finished);
  EXPECT_GE(stats->left_to_claimer, 1u) << "the claimed task was run while its claim held";
  EXPECT_GE(took, dead_lease) << "a2 ran before the dead scheduler's claim lapsed";
  EXPECT_LT(took, std::chrono::seconds(10)) << "the lapsed claim held the run up";
  EXPECT_EQ(runs.load(), 4) << "every task once";
  EXPECT_EQ(stats->duplicates, 0u);
  auto out = read_results(*p, *store, inst);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, expected);
}

// Without claims (RunOptions::claims off) the same claim is ignored: a2 runs at once.
TEST(RemClaims, WithClaimsOffAClaimIsNotLookedAt) {
  Shape s = chain(4);
  auto x = random_bytes(kBytes, 22);
  Inputs in{{"X", x}};
  auto p = from_graph(s.graph, test_registry());
  ASSERT_TRUE(p.ok());
  auto store = make_inproc_store();
  const std::string inst = derive_instance(*p, in);
  LabelCodec codec(*store, *p, inst);
  auto claimed = codec.claim(*p->find_task("a2"), std::chrono::seconds(60));
  ASSERT_TRUE(claimed.ok() && *claimed);
  RunOptions o;
  o.claims = false;
  o.timeout = std::chrono::seconds(20);
  auto stats = run_scheduler(*p, *store, in, o);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(stats->finished);
  EXPECT_EQ(stats->left_to_claimer, 0u);
  EXPECT_EQ(stats->executed, 4u);
}

// Cleaning an instance out deletes its claims that have not lapsed yet.
TEST(RemClaims, CleanDeletesClaimsNotLapsedYet) {
  Shape s = chain(3);
  auto x = random_bytes(kBytes, 23);
  Inputs in{{"X", x}};
  auto p = from_graph(s.graph, test_registry());
  ASSERT_TRUE(p.ok());
  auto store = make_inproc_store();
  RunOptions o;
  o.claim_min_lease = std::chrono::seconds(600);  // every claim of the run still holds when the test looks
  o.timeout = std::chrono::seconds(20);
  auto stats = run_scheduler(*p, *store, in, o);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const std::string inst = derive_instance(*p, in);
  LabelCodec codec(*store, *p, inst);
  const auto a1 = p->find_task("a1");
  ASSERT_TRUE(a1.has_value());
  auto held = codec.claim(*a1, std::chrono::seconds(1));
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(*held) << "the run left no claim on a task it ran";
  auto cleaned = clean_instance(*p, *store, inst);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  for (TaskId t = 0; t < p->tasks().size(); ++t) {
    if (!p->task(t).computes) continue;
    auto again = codec.claim(t, std::chrono::seconds(1));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(*again) << "task '" << p->task(t).name << "' is still claimed after the clean";
  }
}

}  // namespace
}  // namespace redflow::testing
