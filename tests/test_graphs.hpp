// Graph shapes and a sequential reference executor shared by the runtime tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/redflow.hpp"

namespace redflow::testing {

// The bytes of a data node as a vector of T (copied: bytes need not be aligned for T).
template <typename T>
std::vector<T> from_bytes(const std::vector<std::byte>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(static_cast<void*>(v.data()), b.data(), v.size() * sizeof(T));
  return v;
}

inline constexpr std::size_t kElems = 64;  // int32 per data node
inline constexpr std::size_t kBytes = kElems * 4;
inline constexpr std::uint32_t kFailWord = 0xFA11FA11;  // t.fail_if fails on an input starting with it

// prefix + i. Not "x" + std::to_string(i): GCC 12's -Wrestrict reports a
// false positive there at -O3 (GCC bug 105329), which fails Release builds.
inline std::string numbered(std::string_view prefix, long long i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

// out[i] = salt + sum_k (k + 1) * in_k[i] (wrapping): sensitive to port order and to every input.
inline void mix(ActorContext& ctx) {
  auto out = ctx.output<std::uint32_t>();
  const std::uint32_t salt = static_cast<std::uint32_t>(ActorContext::find_arg_u64(ctx.args(), "salt").value_or(0));
  ctx.parallel_for(0, out.size(), [&](std::size_t i) {
    std::uint32_t v = salt;
    for (std::size_t k = 0; k < ctx.num_inputs(); ++k) v += static_cast<std::uint32_t>(k + 1) * ctx.input<std::uint32_t>(k)[i];
    out[i] = v;
  });
}

inline Registry test_registry() {
  Registry reg;
  reg.add("t.mix", mix);
  ActorSpec on_driver;
  on_driver.function = mix;
  on_driver.on_driver = true;
  reg.add("t.mix_driver", on_driver);
  reg.add("t.fail", [](ActorContext& ctx) { ctx.fail("asked to fail"); });
  // t.mix, except that it fails when its input 0 starts with kFailWord.
  reg.add("t.fail_if", [](ActorContext& ctx) {
    if (ctx.input<std::uint32_t>(0)[0] == kFailWord) {
      ctx.fail("asked to fail");
      return;
    }
    mix(ctx);
  });
  return reg;
}

inline std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// `tasks` independent "wf.task" actors (apps::app_registry()) of `micros`
// microseconds each, reading X (8 bytes) and writing Y0, Y1, ...: each
// one's work hint is its time exactly (at 1e9 ops/s), so HEFT splits them
// evenly over equal tiles.
inline Graph equal_workflow_tasks(int tasks, int micros, const std::string& name = "equal_tasks") {
  Graph g(name);
  const DataId x = g.input("X", 8);
  for (int i = 0; i < tasks; ++i)
    g.actor(numbered("t", i), "wf.task", {x}, g.output(numbered("y", i), 8))
        .args("id=" + std::to_string(i + 1) + ",micros=" + std::to_string(micros))
        .work(micros * 1e3);
  return g;
}

// Runs the graph actor by actor in topological order: the meaning every runtime must reproduce.
inline Outputs run_sequential(const Graph& g, const Registry& reg, const Inputs& inputs) {
  std::vector<std::vector<std::byte>> mem(g.data().size());
  for (DataId d = 0; d < g.data().size(); ++d) {
    const DataNode& n = g.data(d);
    if (n.kind == DataKind::kConstant) mem[d] = n.contents;
    else if (n.kind == DataKind::kInput) {
      auto in = inputs.at(n.name);
      mem[d].assign(in.begin(), in.end());
    } else mem[d].resize(n.bytes);
  }
  for (ActorId a : g.topological_order()) {
    const ActorNode& an = g.actor(a);
    std::vector<std::span<const std::byte>> ins;
    for (DataId d : an.inputs) ins.emplace_back(mem[d]);
    ActorContext ctx(an.name, an.args, ins, std::span<std::byte>(mem[an.outputs[0]]), nullptr);
    reg.find(an.function)->function(ctx);
  }
  Outputs out;
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kOutput) out[g.data(d).name] = mem[d];
  return out;
}

struct Shape {
  std::string name;
  Graph graph;
  std::vector<std::string> inputs;
};

// A runtime of `tiles` local tiles with 16 slots of kBytes, under `r`.
inline RuntimeOptions redundancy_options(Scheduler sched, unsigned tiles, Redundancy r) {
  RuntimeOptions o;
  o.scheduler = sched;
  o.tiles = tiles;
  o.slots = 16;
  o.slot_bytes = kBytes;
  o.redundancy = r;
  return o;
}

// `changed` >= 0: that actor mixes with another salt (the same shape, names
// and sizes: another program, for tests of what a run's results are bound to).
inline Shape chain(int length, int changed = -1) {
  Shape s{"chain", Graph("chain"), {"X"}};
  DataId prev = s.graph.input("X", kBytes);
  for (int i = 0; i < length; ++i) {
    DataId next = i + 1 == length ? s.graph.output("Y", kBytes) : s.graph.inner(numbered("d", i), kBytes);
    s.graph.actor(numbered("a", i), "t.mix", {prev}, next).args(numbered("salt=", i == changed ? 1000 + i : i));
    prev = next;
  }
  return s;
}

inline Shape diamond() {
  Shape s{"diamond", Graph("diamond"), {"X"}};
  Graph& g = s.graph;
  DataId x = g.input("X", kBytes), l = g.inner("L", kBytes), r = g.inner("R", kBytes), y = g.output("Y", kBytes);
  g.actor("top_left", "t.mix", {x}, l).args("salt=1");
  g.actor("top_right", "t.mix", {x}, r).args("salt=2");
  g.actor("join", "t.mix", {l, r}, y);
  return s;
}

// One split on the driver-free path, `width` parallel workers, one join through a driver actor.
inline Shape fan_out_fan_in(int width) {
  Shape s{"fan", Graph("fan"), {"X"}};
  Graph& g = s.graph;
  DataId x = g.input("X", kBytes);
  DataId c = g.constant("C", random_bytes(kBytes, 7));
  std::vector<DataId> parts;
  for (int i = 0; i < width; ++i) {
    DataId p = g.inner(numbered("p", i), kBytes);
    g.actor(numbered("w", i), "t.mix", {x, c}, p).args(numbered("salt=", i));
    parts.push_back(p);
  }
  DataId half = g.inner("half", kBytes);
  std::vector<DataId> first(parts.begin(), parts.begin() + width / 2);
  g.actor("join_driver", "t.mix_driver", first, half);
  std::vector<DataId> rest(parts.begin() + width / 2, parts.end());
  rest.push_back(half);
  g.actor("join", "t.mix", rest, g.output("Y", kBytes));
  return s;
}

// Random DAG: every actor reads 1-3 earlier data nodes; nodes nobody reads become outputs.
inline Shape random_dag(int actors, std::uint32_t seed, int max_inputs = 3) {
  Shape s{numbered("random", seed), Graph("random"), {"X0", "X1"}};
  Graph& g = s.graph;
  std::mt19937 rng(seed);
  std::vector<DataId> pool{g.input("X0", kBytes), g.input("X1", kBytes), g.constant("K", random_bytes(kBytes, seed))};
  for (int a = 0; a < actors; ++a) {
    int k = 1 + static_cast<int>(rng() % max_inputs);
    std::vector<DataId> ins;
    for (int i = 0; i < k; ++i) {
      // Prefer recent nodes so the graph has depth, not only width.
      std::size_t lo = pool.size() > 6 ? pool.size() - 6 : 0;
      ins.push_back(pool[lo + rng() % (pool.size() - lo)]);
    }
    DataId out = g.inner(numbered("d", a), kBytes);
    g.actor(numbered("a", a), a % 7 == 3 ? "t.mix_driver" : "t.mix", ins, out).args(numbered("salt=", a));
    pool.push_back(out);
  }
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kInner && g.data(d).consumers.empty()) g.mutable_data(d).kind = DataKind::kOutput;
  return s;
}

// X is cut into `blocks` blocks of `block` bytes by rf.split; each is sorted
// by i32.sort; one rf.collect gathers them into Y. Without `collect`, each
// sort writes an output sK. Needs Registry::with_builtins().
inline Graph split_sort(int blocks, std::size_t block, bool collect = true) {
  Graph g("sorts");
  const DataId x = g.input("X", block * static_cast<std::size_t>(blocks));
  std::vector<DataId> sorted;
  for (int i = 0; i < blocks; ++i) {
    const std::string n = std::to_string(i);
    const DataId part = g.inner("p" + n, block);
    g.actor("split" + n, "rf.split", {x}, part).args("offset=" + std::to_string(block * static_cast<std::size_t>(i)));
    const DataId s = collect ? g.inner("s" + n, block) : g.output("s" + n, block);
    g.actor("sort" + n, "i32.sort", {part}, s);
    sorted.push_back(s);
  }
  if (collect) g.actor("join", "rf.collect", sorted, g.output("Y", block * static_cast<std::size_t>(blocks)));
  return g;
}

// Fresh random bytes for every input of `s` (kept alive in `storage`), seeded per input.
inline Inputs make_inputs(const Shape& s, std::vector<std::vector<std::byte>>& storage, std::uint32_t seed) {
  Inputs in;
  storage.clear();
  for (std::size_t i = 0; i < s.inputs.size(); ++i) storage.push_back(random_bytes(kBytes, seed + static_cast<std::uint32_t>(i)));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) in[s.inputs[i]] = storage[i];
  return in;
}

}  // namespace redflow::testing
