// The case generator (generator.hpp). Graphs grow from a pool of data nodes:
// each motif reads nodes of the pool (fitted to the size it needs by a split
// or a mix) and adds its result to the pool. Inner nodes nobody reads become
// outputs at the end.
#include "generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "actors.hpp"
#include "apps/apps.hpp"
#include "apps/paper.hpp"
#include "schedule/heft.hpp"

namespace redflow::difftest {

Result<Exclusions> parse_exclusions(std::string_view list) {
  Exclusions e;
  if (list.empty() || list == "none") return e;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = list.find(',', at);
    const std::string_view item = list.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (item == "user-compare") e.user_compare = true;
    else if (item == "mixed-redundancy") e.mixed_redundancy = true;
    else if (item == "diff-faults") e.diff_faults = true;
    else if (item == "steal-failures") e.steal_failures = true;
    else if (item == "unaligned-split") e.unaligned_split = true;
    else
      return Status::InvalidArgument("--exclude: unknown class '" + std::string(item) +
                                     "' (expected user-compare, mixed-redundancy, diff-faults, steal-failures or unaligned-split)");
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return e;
}

std::string to_string(const Exclusions& e) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    // Appended, not `"," + std::string(name)`: GCC 12 at -O3 reports a false
    // -Wrestrict in the inlined operator+.
    if (!on) return;
    if (!s.empty()) s += ',';
    s += name;
  };
  add(e.user_compare, "user-compare");
  add(e.mixed_redundancy, "mixed-redundancy");
  add(e.diff_faults, "diff-faults");
  add(e.steal_failures, "steal-failures");
  add(e.unaligned_split, "unaligned-split");
  return s.empty() ? "none" : s;
}

namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// The growing graph and the random choices that shape it.
class Builder {
 public:
  Builder(std::uint64_t seed, const RuntimeOptions& o, const Exclusions& ex)
      : rng_(seed), side_(seed ^ 0x5bd1e995u), o_(o), ex_(ex), reg_(difftest_registry()) {}

  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::mt19937_64& rng() { return rng_; }
  Graph& graph() { return g_; }

  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  // A size in bytes: mostly whole int32s within a slot, sometimes 0, exactly
  // a slot, more than a slot (driver only) or an odd byte count.
  std::size_t any_size(bool int32 = false) {
    const std::size_t s = o_.slot_bytes;
    switch (below(10)) {
      case 0: return 0;
      case 1: return s;
      case 2: return s + 4 * (1 + below(8));
      case 3: return int32 ? 4 : 1 + below(7);
      default: return 4 * (1 + below(s / 4));
    }
  }

  void add_input(std::size_t bytes) { pool_.push_back(g_.input(fresh("X"), bytes)); }
  void add_constant(std::size_t bytes) { pool_.push_back(g_.constant(fresh("K"), random_bytes(bytes, rng_))); }

  // A pool node; recent ones are preferred so that graphs get depth.
  DataId pick() {
    const std::size_t lo = pool_.size() > 8 && chance(0.7) ? pool_.size() - 8 : 0;
    return pool_[lo + below(pool_.size() - lo)];
  }

  // A node of exactly `bytes`: a pool node of that size, a split of a larger
  // one, or a mix of one or two pool nodes.
  DataId fit(std::size_t bytes) {
    const DataId src = pick();
    const std::size_t have = g_.data(src).bytes;
    if (have == bytes && chance(0.5)) return src;
    const DataId out = g_.inner(fresh("d"), bytes);
    if (have >= bytes && chance(0.7)) {
      std::size_t offset = below(have - bytes + 1);
      if (ex_.unaligned_split) offset &= ~std::size_t{3};  // same draws: the other choices of the case stay as they are
      g_.actor(fresh("split"), "rf.split", {src}, out).args("offset=" + std::to_string(offset));
    } else {
      std::vector<DataId> ins{src};
      if (chance(0.3)) ins.push_back(pick());
      mix(ins, out);
    }
    return out;
  }

  void mix(const std::vector<DataId>& ins, DataId out) {
    g_.actor(fresh("mix"), "dt.mix", ins, out).args("salt=" + std::to_string(below(256)));
  }

  void produced(DataId d) { pool_.push_back(d); }

  // --- motifs ---------------------------------------------------------------

  // dt.mix with fan-in from 1 to beyond the slot count (those go to the driver).
  void motif_mix() {
    std::size_t k = 1 + below(3);
    if (chance(0.2)) k = 1 + below(o_.slots + 3);
    std::vector<DataId> ins;
    for (std::size_t i = 0; i < k; ++i) ins.push_back(pick());
    const DataId out = g_.inner(fresh("m"), any_size());
    mix(ins, out);
    produced(out);
  }

  // rf.split into B blocks -> i32.sort (or add/mul with itself) -> rf.collect.
  void motif_split_collect() {
    const std::size_t blocks = chance(0.3) ? 64 : 1 + below(16);
    const std::size_t per = 4 * (1 + below(std::max<std::size_t>(1, o_.slot_bytes / 4)));
    const DataId src = fit(blocks * per);
    std::vector<DataId> parts;
    const char* kernel = chance(0.7) ? "i32.sort" : (chance(0.5) ? "i32.add" : "i32.mul");
    for (std::size_t b = 0; b < blocks; ++b) {
      const DataId piece = g_.inner(fresh("p"), per);
      g_.actor(fresh("split"), "rf.split", {src}, piece).args("offset=" + std::to_string(b * per));
      const DataId done = g_.inner(fresh("s"), per);
      if (std::string(kernel) == "i32.sort") g_.actor(fresh("sort"), kernel, {piece}, done);
      else g_.actor(fresh("k"), kernel, {piece, piece}, done);
      parts.push_back(done);
    }
    const DataId out = g_.inner(fresh("c"), blocks * per);
    g_.actor(fresh("collect"), "rf.collect", parts, out);
    produced(out);
  }

  void motif_kernel() {
    switch (below(3)) {
      case 0:
      case 1: {
        const std::size_t bytes = any_size(true) / 4 * 4;
        const DataId a = fit(bytes), b = fit(bytes), out = g_.inner(fresh("k"), bytes);
        g_.actor(fresh(below(2) ? "add" : "mul"), below(2) ? "i32.add" : "i32.mul", {a, b}, out);
        produced(out);
        break;
      }
      default: {
        std::size_t n = below(7);
        while (n > 0 && n * n * 4 > o_.slot_bytes) --n;
        const DataId a = fit(n * n * 4), b = fit(n * n * 4), out = g_.inner(fresh("mm"), n * n * 4);
        g_.actor(fresh("matmul"), "i32.matmul", {a, b}, out);
        produced(out);
      }
    }
  }

  void motif_reorder() {
    static constexpr std::size_t kElems[] = {1, 2, 3, 4, 8, 16};
    const std::size_t elem = kElems[below(6)];
    const std::size_t count = 1 + below(16), picks = below(20);
    const DataId src = fit(count * elem);
    std::vector<std::byte> perm(picks * 4);
    for (std::size_t i = 0; i < picks; ++i) {
      const auto idx = static_cast<std::uint32_t>(below(count));
      std::memcpy(perm.data() + 4 * i, &idx, 4);
    }
    const DataId p = g_.constant(fresh("perm"), std::move(perm));
    const DataId out = g_.inner(fresh("r"), picks * elem);
    g_.actor(fresh("reorder"), "rf.reorder", {src, p}, out).args("elem=" + std::to_string(elem));
    produced(out);
  }

  // rf.compare as a user's actor: two of its inputs are the same node, so they agree.
  void motif_compare() {
    // The engine votes on any rf.compare as on replicas, which need a tile each.
    if (ex_.user_compare || o_.tiles < 2) return motif_mix();
    const DataId a = pick();
    std::vector<DataId> ins{a, a};
    if (o_.tiles >= 3 && chance(0.5)) ins.insert(ins.begin() + static_cast<long>(below(3)), fit(g_.data(a).bytes));
    const DataId out = g_.inner(fresh("v"), g_.data(a).bytes);
    g_.actor(fresh("compare"), "rf.compare", ins, out);
    produced(out);
  }

  // An application graph (matmul, bitonic or FFT) cut for this machine, embedded.
  void motif_app() {
    // The paper profile's graphs, at their smallest sizes (their 128-160 KiB
    // blocks run on the driver here). Drawn from a side stream so that seeds
    // that do not take this branch generate the cases they always did.
    if (side_() % 8 == 0) {
      static constexpr std::pair<const char*, std::size_t> kPaper[] = {
          {"matmul", 400}, {"fft", std::size_t{1} << 13}, {"fft", std::size_t{1} << 14},
          {"bitonic", std::size_t{1} << 15}, {"bitonic", std::size_t{1} << 16}};
      const auto& [app, n] = kPaper[side_() % std::size(kPaper)];
      Result<Graph> paper = apps::paper_graph(app, n);
      if (paper.ok()) return embed(*paper);
    }
    apps::Target t{.slot_bytes = o_.slot_bytes, .slots = o_.slots, .tiles = o_.tiles};
    Result<Graph> sub = Status::InvalidArgument("none");
    switch (below(3)) {
      case 0: sub = apps::matmul_graph({.n = 1 + below(8), .block = below(4), .target = t}); break;
      case 1: {
        const std::size_t n = std::size_t{1} << below(8);
        sub = apps::bitonic_graph({.n = n, .block = std::size_t{1} << below(5), .target = t});
        break;
      }
      default: sub = apps::fft_graph({.n = std::size_t{1} << (1 + below(6)), .block = 0, .target = t}); break;
    }
    if (!sub.ok()) return motif_mix();  // not every size fits every machine
    embed(*sub);
  }

  // Copies `sub` in with a name prefix: its inputs are fed from the pool (FFT
  // inputs are fresh constants of doubles in [-1, 1), since FFTs of random
  // bit patterns would be NaNs), its outputs become inner nodes.
  void embed(const Graph& sub) {
    const std::string prefix = fresh("app") + "_";
    std::vector<DataId> map(sub.data().size());
    const bool fft = sub.name() == "fft";
    for (DataId d = 0; d < sub.data().size(); ++d) {
      const DataNode& n = sub.data(d);
      if (n.kind == DataKind::kInput) {
        if (fft) {
          std::vector<double> x(n.bytes / 8);
          std::uniform_real_distribution<double> u(-1, 1);
          for (auto& v : x) v = u(rng_);
          std::vector<std::byte> b(n.bytes);
          std::memcpy(b.data(), x.data(), n.bytes);
          map[d] = g_.constant(prefix + n.name, std::move(b));
        } else {
          map[d] = fit(n.bytes);
        }
      } else if (n.kind == DataKind::kConstant) {
        map[d] = g_.constant(prefix + n.name, n.contents);
      } else {
        map[d] = g_.inner(prefix + n.name, n.bytes);
      }
    }
    for (const ActorNode& a : sub.actors()) {
      std::vector<DataId> ins;
      for (DataId d : a.inputs) ins.push_back(map[d]);
      g_.actor(prefix + a.name, a.function, ins, map[a.outputs[0]]).args(a.args).work(a.work);
    }
    for (DataId d = 0; d < sub.data().size(); ++d)
      if (sub.data(d).kind == DataKind::kOutput) produced(map[d]);
  }

  // noop reads anything and writes a 0-byte node (noop writes nothing, so only 0 bytes are valid).
  void motif_noop() {
    std::vector<DataId> ins;
    for (std::size_t i = below(3); i > 0; --i) ins.push_back(pick());
    const DataId out = g_.inner(fresh("z"), 0);
    g_.actor(fresh("noop"), "noop", ins, out);
    produced(out);
  }

  // A workflow task (apps/workflow.hpp; no wait) and a digest of it and another node on the driver.
  void motif_workflow() {
    std::vector<DataId> ins;
    for (std::size_t i = below(3); i > 0; --i) ins.push_back(pick());
    const DataId task = g_.inner(fresh("w"), 1 + any_size());  // a task writes at least 1 byte
    g_.actor(fresh("wf_task"), "wf.task", ins, task).args("id=" + std::to_string(below(1000)) + ",micros=0");
    produced(task);
    const DataId digest = g_.inner(fresh("wd"), 8);
    g_.actor(fresh("wf_digest"), "wf.digest", {task, pick()}, digest);
    produced(digest);
  }

  void motif_fail_if() {
    if (!fail_) fail_ = g_.input(kFailInput, 4);
    std::vector<DataId> ins{*fail_};
    for (std::size_t i = 1 + below(2); i > 0; --i) ins.push_back(pick());
    const DataId out = g_.inner(fresh("f"), any_size());
    g_.actor(fresh("maybe_fail"), "dt.fail_if", ins, out);
    produced(out);
  }

  bool has_fail() const { return fail_.has_value(); }

  // Some actors that run on compute tiles get their own configuration, within what the runtime can run.
  void per_actor_redundancy() {
    const MachineModel m = machine_of(o_);
    for (ActorId a = 0; a < g_.actors().size(); ++a) {
      if (!chance(0.12) || runs_on_driver(g_, a, m, reg_)) continue;
      std::set<DataId> distinct(g_.actor(a).inputs.begin(), g_.actor(a).inputs.end());
      std::vector<Redundancy> ok{Redundancy::kNone};
      for (Redundancy r : {Redundancy::kDoubleSame, Redundancy::kTripleSame})
        if (distinct.size() + replica_count(r) <= o_.slots) ok.push_back(r);
      for (Redundancy r : {Redundancy::kDoubleDiff, Redundancy::kTripleDiff})
        if (replica_count(r) <= o_.tiles) ok.push_back(r);
      g_.mutable_actor(a).redundancy = ok[below(ok.size())];
    }
  }

  // Inner nodes nobody reads, and a few others, become outputs.
  void mark_outputs() {
    for (DataId d = 0; d < g_.data().size(); ++d) {
      DataNode& n = g_.mutable_data(d);
      if (n.kind == DataKind::kInner && (n.consumers.empty() || chance(0.05))) n.kind = DataKind::kOutput;
    }
  }

  const Registry& registry() const { return reg_; }
  // A draw from the side stream (see side_).
  std::uint64_t side() { return side_(); }

 private:
  std::mt19937_64 rng_;
  std::mt19937_64 side_;  // choices added after seeds were recorded in docs/testing.md
  RuntimeOptions o_;
  Exclusions ex_;
  Registry reg_;
  Graph g_{"difftest"};
  std::vector<DataId> pool_;
  std::optional<DataId> fail_;
  unsigned counter_ = 0;
};

RuntimeOptions random_runtime(std::mt19937_64& rng) {
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  RuntimeOptions o;
  o.tiles = 1 + static_cast<unsigned>(below(5));
  o.cores_per_tile = 1 + static_cast<unsigned>(below(2));
  o.slots = below(4) == 0 ? 2 + static_cast<unsigned>(below(2)) : 3 + static_cast<unsigned>(below(14));
  static constexpr std::size_t kSlotBytes[] = {64, 128, 256, 1024, 4096};
  o.slot_bytes = kSlotBytes[below(5)];
  o.driver_bytes = std::size_t{64} << 20;
  o.scheduler = below(2) ? Scheduler::kSteal : Scheduler::kHeft;
  o.seed = 1 + below(1000);
  o.quarantine_after = below(3) == 0 ? 0 : 3;
  return o;
}

bool has_diff_actor(const Graph& g) {
  for (const ActorNode& a : g.actors())
    if (a.redundancy && replicas_on_distinct_tiles(*a.redundancy)) return true;
  return false;
}

std::vector<Step> random_steps(Builder& b, const RuntimeOptions& o, const Exclusions& ex) {
  const Graph& g = b.graph();
  std::vector<Step> steps(b.has_fail() && b.chance(0.5) ? 4 + b.below(12) : 1 + b.below(5));
  const bool diff_actor = has_diff_actor(g);
  for (Step& s : steps) {
    s.redundancy = kAllRedundancies[b.below(5)];
    const bool same = s.redundancy == Redundancy::kDoubleSame || s.redundancy == Redundancy::kTripleSame;
    if (ex.mixed_redundancy && diff_actor && same) s.redundancy = Redundancy::kNone;
    const bool diff = diff_actor || replicas_on_distinct_tiles(s.redundancy);
    const std::size_t kind = b.below(10);
    const std::string seed = std::to_string(1 + b.below(100000));
    if (!(ex.diff_faults && diff)) {
      static constexpr const char* kP[] = {"0.01", "0.05", "0.2"};
      if (kind < 3 || kind == 7) s.inject.push_back(std::string("bitflip:p=") + kP[b.below(3)] + ",seed=" + seed);
      if (kind == 3 || kind == 7) s.inject.push_back("faulty-tile:" + std::to_string(b.below(o.tiles)));
    }
    if (kind == 4 || kind == 8) s.inject.push_back("slow-tile:" + std::to_string(b.below(o.tiles)) + ",factor=" + std::to_string(2 + b.below(3)));
    s.fail = b.has_fail() && b.chance(0.4) && !(ex.steal_failures && o.scheduler == Scheduler::kSteal);
    for (const DataNode& n : g.data()) {
      if (n.kind != DataKind::kInput) continue;
      if (n.name == kFailInput) {
        s.inputs[n.name] = std::vector<std::byte>{static_cast<std::byte>(s.fail ? 1 : 0), {}, {}, {}};
      } else {
        s.inputs[n.name] = random_bytes(n.bytes, b.rng());
      }
    }
  }
  return steps;
}

}  // namespace

Case generate(std::uint64_t seed, const GenOptions& options) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + 17);
  Case c;
  c.seed = seed;
  c.options = random_runtime(rng);
  Builder b(rng(), c.options, options.exclude);
  for (std::size_t i = 1 + b.below(3); i > 0; --i) b.add_input(b.any_size());
  if (b.chance(0.5)) b.add_constant(b.any_size());
  const std::size_t motifs = 1 + b.below(options.max_motifs);
  for (std::size_t i = 0; i < motifs; ++i) {
    switch (b.below(16)) {
      case 0: case 1: case 2: case 3: b.motif_mix(); break;
      case 4: case 5: b.motif_split_collect(); break;
      case 6: case 7: b.motif_kernel(); break;
      case 8: b.motif_reorder(); break;
      case 9: b.motif_compare(); break;
      case 10: case 11: b.motif_app(); break;
      case 12: b.side() % 2 == 0 ? b.motif_workflow() : b.motif_noop(); break;  // the side stream: other seeds unchanged
      default: b.motif_fail_if(); break;
    }
  }
  b.per_actor_redundancy();
  b.mark_outputs();
  c.steps = random_steps(b, c.options, options.exclude);
  c.stop_after_steal_failure = options.exclude.steal_failures;
  c.graph = std::move(b.graph());
  return c;
}

}  // namespace redflow::difftest
