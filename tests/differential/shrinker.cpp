// Greedy shrinking of failing cases (shrinker.hpp).
#include "shrinker.hpp"

#include <fmt/format.h>

#include <chrono>

#include "interpreter.hpp"
#include "isolate.hpp"

namespace redflow::difftest {

Case drop_actors(const Case& c, const std::vector<bool>& drop, const Registry& reg) {
  const Graph& g = c.graph;
  // Values of every data node in every execution: what a cut node carries.
  std::vector<Reference> refs;
  for (const Step& s : c.steps) {
    Inputs in;
    for (const auto& [name, bytes] : s.inputs) in[name] = bytes;
    refs.push_back(interpret(g, reg, in));
  }
  std::vector<bool> read(g.data().size(), false), written(g.data().size(), false);
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    if (drop[a]) continue;
    for (DataId d : g.actor(a).inputs) read[d] = true;
    written[g.actor(a).outputs[0]] = true;
  }
  Case out;
  out.seed = c.seed;
  out.options = c.options;
  out.steps = c.steps;
  for (Step& s : out.steps) s.inputs.clear();
  out.graph = Graph(g.name());
  std::vector<DataId> map(g.data().size(), ~DataId{0});
  for (DataId d = 0; d < g.data().size(); ++d) {
    if (!read[d] && !written[d]) continue;
    DataNode n = g.data(d);
    n.producers.clear();
    n.consumers.clear();
    const bool cut = !written[d] && (n.kind == DataKind::kInner || n.kind == DataKind::kOutput);
    if (cut) n.kind = DataKind::kInput;
    map[d] = out.graph.add_data(std::move(n));
    if (out.graph.data(map[d]).kind != DataKind::kInput) continue;
    for (std::size_t k = 0; k < c.steps.size(); ++k)
      out.steps[k].inputs[g.data(d).name] = cut ? refs[k].data[d] : c.steps[k].inputs.at(g.data(d).name);
  }
  for (ActorId a = 0; a < g.actors().size(); ++a) {
    if (drop[a]) continue;
    ActorNode n = g.actor(a);
    for (DataId& d : n.inputs) d = map[d];
    for (DataId& d : n.outputs) d = map[d];
    out.graph.add_actor(std::move(n));
  }
  return out;
}

namespace {

// Tries candidates and keeps those that still fail with the target outcome.
class Shrinker {
 public:
  Shrinker(const Case& c, const Verdict& v, const Registry& reg, const ShrinkOptions& o)
      : reg_(reg), o_(o), start_(std::chrono::steady_clock::now()) {
    best_.smallest = c;
    best_.verdict = v;
  }

  bool out_of_time() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > o_.budget_s;
  }

  bool try_case(Case candidate, const char* what) {
    if (out_of_time() || candidate.graph.actors().empty() || candidate.steps.empty()) return false;
    ++best_.candidates;
    // A candidate that does not hang finishes in well under a second; a hang costs the full limit.
    Verdict v = run_isolated(candidate, reg_, o_.timeout_s);
    if (v.outcome != best_.verdict.outcome) return false;
    best_.smallest = std::move(candidate);
    best_.verdict = v;
    if (o_.log) o_.log(fmt::format("shrink: {} -> {}, {} execution(s)", what, graph_size(best_.smallest.graph), best_.smallest.steps.size()));
    return true;
  }

  void shrink_steps() {
    const Case& c = best_.smallest;
    if (best_.verdict.step >= 0 && static_cast<std::size_t>(best_.verdict.step) + 1 < c.steps.size()) {
      Case t = c;
      t.steps.resize(static_cast<std::size_t>(best_.verdict.step) + 1);
      try_case(std::move(t), "executions after the failing one dropped");
    }
    for (std::size_t k = 0; k + 1 < best_.smallest.steps.size();) {
      Case t = best_.smallest;
      t.steps.erase(t.steps.begin() + static_cast<long>(k));
      if (!try_case(std::move(t), "an execution dropped")) ++k;
    }
  }

  void shrink_runtime() {
    for (;;) {
      Case t = best_.smallest;
      if (t.options.tiles <= 1 || !(--t.options.tiles, try_case(std::move(t), "one tile fewer"))) break;
    }
    if (best_.smallest.options.cores_per_tile > 1) {
      Case t = best_.smallest;
      t.options.cores_per_tile = 1;
      try_case(std::move(t), "one core per tile");
    }
  }

  void shrink_redundancy() {
    Case t = best_.smallest;
    bool any = false;
    for (ActorId a = 0; a < t.graph.actors().size(); ++a) {
      any = any || t.graph.actor(a).redundancy.has_value();
      t.graph.mutable_actor(a).redundancy.reset();
    }
    if (any) try_case(std::move(t), "per-actor redundancy cleared");
  }

  // ddmin-like: drop chunks of actors, from halves down to single actors.
  void shrink_actors() {
    for (std::size_t chunk = best_.smallest.graph.actors().size() / 2; chunk >= 1 && !out_of_time(); chunk /= 2) {
      for (std::size_t at = 0; at < best_.smallest.graph.actors().size() && !out_of_time();) {
        const std::size_t n = best_.smallest.graph.actors().size();
        std::vector<bool> drop(n, false);
        for (std::size_t a = at; a < std::min(n, at + chunk); ++a) drop[a] = true;
        if (!try_case(drop_actors(best_.smallest, drop, reg_), "actors dropped")) at += chunk;
      }
    }
  }

  ShrinkResult run() {
    for (std::size_t before = ~std::size_t{0}; !out_of_time();) {
      const std::size_t size = best_.smallest.graph.actors().size() + best_.smallest.graph.data().size() + best_.smallest.steps.size() +
                               best_.smallest.options.tiles;
      if (size >= before) break;  // a whole pass gained nothing
      before = size;
      shrink_steps();
      shrink_runtime();
      shrink_redundancy();
      shrink_actors();
    }
    return best_;
  }

 private:
  const Registry& reg_;
  ShrinkOptions o_;
  std::chrono::steady_clock::time_point start_;
  ShrinkResult best_;
};

}  // namespace

ShrinkResult shrink(const Case& c, const Verdict& v, const Registry& reg, const ShrinkOptions& options) {
  return Shrinker(c, v, reg, options).run();
}

}  // namespace redflow::difftest
