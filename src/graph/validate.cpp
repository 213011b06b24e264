// Validation of a Graph before it runs: its structure (Graph::validate_structure)
// and, with a Registry and RuntimeOptions, that it can run here (validate).
// Every error names the node at fault, so a user can find it in the DOT file.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "graph/suggest.hpp"
#include "redflow/graph.hpp"
#include "redflow/runtime.hpp"

namespace redflow {
namespace {

std::string join_actor_names(const Graph& g, std::span<const ActorId> ids) {
  std::string out;
  for (ActorId a : ids) out += (out.empty() ? "'" : ", '") + g.actor(a).name + "'";
  return out;
}

// An open-addressing hash set of node numbers (data nodes 0..D-1, then
// actors), each slot also holding the upper half of its name's hash so that
// names are compared only when the hashes agree: linear time and 16 bytes
// a node, where a std::map of names cost O(n log n) string compares and a
// heap node per name (a 1,000,000-actor graph: 2,000,000 names).
Status check_unique_names(const Graph& g) {
  const std::size_t data = g.data().size(), total = data + g.actors().size();
  auto name_of = [&](std::size_t k) -> const std::string& { return k < data ? g.data()[k].name : g.actors()[k - data].name; };
  std::size_t capacity = 16;
  while (capacity < 2 * total) capacity *= 2;
  constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  HugePageVector<std::uint64_t> table(capacity, kEmpty);  // (hash >> 32) << 32 | node
  const std::hash<std::string_view> hash;
  // The table is far larger than a cache: hash a few names ahead and
  // prefetch their slots, so the misses overlap instead of queueing.
  constexpr std::size_t kAhead = 16;
  std::uint64_t ahead[kAhead];
  auto look_ahead = [&](std::size_t k) {
    ahead[k % kAhead] = hash(name_of(k));
    __builtin_prefetch(&table[ahead[k % kAhead] & (capacity - 1)]);
  };
  for (std::size_t k = 0; k < std::min(kAhead, total); ++k) look_ahead(k);
  for (std::size_t k = 0; k < total; ++k) {
    const bool is_data = k < data;
    const std::string& name = name_of(k);
    if (name.empty())
      return Status::InvalidGraph(fmt::format("{} #{} has an empty name", is_data ? "data node" : "actor", is_data ? k : k - data));
    const std::uint64_t h = ahead[k % kAhead];
    if (k + kAhead < total) look_ahead(k + kAhead);
    const std::uint64_t tag = h >> 32 << 32;
    for (std::size_t at = h & (capacity - 1);; at = (at + 1) & (capacity - 1)) {
      if (table[at] == kEmpty) {
        table[at] = tag | k;
        break;
      }
      const std::size_t other = table[at] & 0xffffffffu;
      if ((table[at] & ~std::uint64_t{0xffffffffu}) == tag && name_of(other) == name) {
        return Status::InvalidGraph(fmt::format("node '{}': name used twice (by {} and {}); names are unique across "
                                                "data nodes and actors",
                                                name, other < data ? "a data node" : "an actor", is_data ? "a data node" : "an actor"));
      }
    }
  }
  return Status::Ok();
}

// Every id an actor names exists, and it has exactly one output.
Status check_actor_ends(const Graph& g) {
  for (const ActorNode& a : g.actors()) {
    for (std::size_t port = 0; port < a.inputs.size(); ++port) {
      if (a.inputs[port] >= g.data().size()) {
        return Status::InvalidGraph(fmt::format("actor '{}': input port {} names data node #{}, which does not exist",
                                                a.name, port, a.inputs[port]));
      }
    }
    for (DataId d : a.outputs) {
      if (d >= g.data().size()) {
        return Status::InvalidGraph(
            fmt::format("actor '{}': output names data node #{}, which does not exist", a.name, d));
      }
    }
    if (a.outputs.size() != 1) {
      std::string names;
      for (DataId d : a.outputs) names += (names.empty() ? "" : ", ") + g.data(d).name;
      return Status::InvalidGraph(fmt::format("actor '{}' has {} output data nodes{} (expected exactly 1)", a.name,
                                              a.outputs.size(), names.empty() ? "" : " (" + names + ")"));
    }
  }
  return Status::Ok();
}

// The producer/consumer lists kept on data nodes must say what the actors
// say: the schedulers and the driver read the lists, not the actors. In
// linear time and a bit per edge: every listed edge must be an edge the
// actors declare, none listed twice, and as many listed as declared.
Status check_links(const Graph& g) {
  const std::size_t actors = g.actors().size();
  HugePageVector<std::size_t> first_in(actors + 1, 0), first_out(actors + 1, 0);
  for (ActorId a = 0; a < actors; ++a) {
    first_in[a + 1] = first_in[a] + g.actor(a).inputs.size();
    first_out[a + 1] = first_out[a] + g.actor(a).outputs.size();
  }
  std::vector<bool> in_seen(first_in[actors]), out_seen(first_out[actors]);
  std::size_t listed_in = 0, listed_out = 0;
  auto disagree = [&](const DataNode& n) {
    return Status::InvalidGraph(fmt::format("data node '{}': its producer/consumer links disagree with the actors' "
                                            "inputs and outputs (an actor changed after add_actor?)",
                                            n.name));
  };
  for (DataId d = 0; d < g.data().size(); ++d) {
    const DataNode& n = g.data(d);
    for (const Consumer& c : n.consumers) {
      if (c.actor >= actors || c.port >= g.actor(c.actor).inputs.size() || g.actor(c.actor).inputs[c.port] != d) return disagree(n);
      const std::size_t edge = first_in[c.actor] + c.port;
      if (in_seen[edge]) return disagree(n);
      in_seen[edge] = true;
      ++listed_in;
    }
    for (ActorId p : n.producers) {
      if (p >= actors) return disagree(n);
      const auto& outs = g.actor(p).outputs;
      std::size_t k = 0;
      while (k < outs.size() && (outs[k] != d || out_seen[first_out[p] + k])) ++k;
      if (k == outs.size()) return disagree(n);
      out_seen[first_out[p] + k] = true;
      ++listed_out;
    }
  }
  if (listed_in == first_in[actors] && listed_out == first_out[actors]) return Status::Ok();
  // Some declared edge is missing from its data node's list: name that node.
  for (ActorId a = 0; a < actors; ++a) {
    const ActorNode& actor = g.actor(a);
    for (std::size_t port = 0; port < actor.inputs.size(); ++port)
      if (!in_seen[first_in[a] + port]) return disagree(g.data(actor.inputs[port]));
    for (std::size_t k = 0; k < actor.outputs.size(); ++k)
      if (!out_seen[first_out[a] + k]) return disagree(g.data(actor.outputs[k]));
  }
  return Status::Ok();
}

// inner/output: computed by exactly one actor; input/constant: by none.
std::optional<Status> producers_error(const Graph& g, const DataNode& n) {
  const std::size_t count = n.producers.size();
  const bool given = n.kind == DataKind::kInput || n.kind == DataKind::kConstant;
  if (given && count != 0) {
    return Status::InvalidGraph(fmt::format("data node '{}' is {} {}, but actor {} writes it as its output; input and "
                                            "constant nodes are given, not computed",
                                            n.name, n.kind == DataKind::kInput ? "an" : "a", to_string(n.kind),
                                            join_actor_names(g, n.producers)));
  }
  if (!given && count != 1) {
    std::string who = count == 0 ? "" : " (" + join_actor_names(g, n.producers) + ")";
    return Status::InvalidGraph(fmt::format("data node '{}' ({}) has {} producers{} (expected exactly 1)", n.name,
                                            to_string(n.kind), count, who));
  }
  return std::nullopt;
}

std::optional<Status> constant_error(const DataNode& n) {
  if (n.kind == DataKind::kConstant && n.contents.size() != n.bytes)
    return Status::InvalidGraph(fmt::format("constant '{}' has {} bytes of contents, but declares bytes={}", n.name,
                                            n.contents.size(), n.bytes));
  return std::nullopt;
}

// A typed data node holds a whole number of elements.
std::optional<Status> element_type_error(const DataNode& n) {
  const std::size_t size = element_size(n.type);
  if (n.bytes % size != 0)
    return Status::InvalidGraph(fmt::format("data node '{}': bytes={} is not a whole number of {} elements ({} bytes each)", n.name,
                                            n.bytes, to_string(n.type), size));
  return std::nullopt;
}

// The checks of one data node at a time (producers, constants, element
// types), in one walk: at 10^6 nodes a walk of the data nodes costs ~0.1 s
// where address translation is refilled page by page (docs/performance.md),
// whatever it checks. The error is the one three walks would give: the
// first node failing the first check that any node fails.
Status check_data_nodes(const Graph& g) {
  std::optional<Status> producers, constants, types;
  for (const DataNode& n : g.data()) {
    if (!producers) producers = producers_error(g, n);
    if (producers) break;  // nothing found later can come before it
    if (!constants) constants = constant_error(n);
    if (!types) types = element_type_error(n);
  }
  for (const std::optional<Status>* found : {&producers, &constants, &types})
    if (*found) return **found;
  return Status::Ok();
}

// How many actors of a cycle its message spells out. A cycle through
// 200,000 actors would otherwise make a 2 MB message.
constexpr std::size_t kCycleActorsShown = 6;
// Marks a "cycle" found on inconsistent links, which has no data node to show.
constexpr DataId kNoData = std::numeric_limits<DataId>::max();

// Some actor left over by Kahn's algorithm lies on or behind a cycle; walking
// back through unfinished producers from it must repeat, and the repeated
// stretch is a cycle. Returns it in data-flow order as (actor, the data node
// it writes for the next actor), starting anywhere on the cycle.
std::vector<std::pair<ActorId, DataId>> find_cycle(const Graph& g, const std::vector<ActorId>& order) {
  std::vector<bool> done(g.actors().size(), false);
  for (ActorId a : order) done[a] = true;
  ActorId start = 0;
  while (done[start]) ++start;
  std::vector<std::pair<ActorId, DataId>> walk;  // actor, and the input that leads back to an unfinished producer
  std::map<ActorId, std::size_t> position;
  ActorId a = start;
  while (position.find(a) == position.end()) {
    position[a] = walk.size();
    std::optional<std::pair<ActorId, DataId>> step;
    for (DataId d : g.actor(a).inputs) {
      for (ActorId p : g.data(d).producers) {
        if (!done[p]) step = std::make_pair(p, d);
        if (step) break;
      }
      if (step) break;
    }
    if (!step) return {{a, kNoData}};  // unreachable when the links are consistent
    walk.emplace_back(a, step->second);
    a = step->first;
  }
  // walk[position[a]..] goes backwards: each actor, then the data node it
  // reads from its predecessor (the next entry's actor, or `a` after the
  // last entry). Forwards, each actor is followed by that data node.
  std::vector<std::pair<ActorId, DataId>> cycle;
  for (std::size_t i = walk.size(); i-- > position[a];) {
    cycle.emplace_back(i + 1 == walk.size() ? a : walk[i + 1].first, walk[i].second);
  }
  return cycle;
}

Status check_acyclic(const Graph& g) {
  std::vector<ActorId> order = g.topological_order();
  if (order.size() == g.actors().size()) return Status::Ok();
  const auto cycle = find_cycle(g, order);
  const std::string& first = g.actor(cycle.front().first).name;
  if (cycle.front().second == kNoData) return Status::InvalidGraph(fmt::format("actor '{}' is on a cycle", first));
  // "a -> d1 -> b -> d2 -> a", or its first few steps and how many are left.
  std::string path;
  const std::size_t shown = std::min(cycle.size(), kCycleActorsShown);
  for (std::size_t i = 0; i < shown; ++i) {
    path += g.actor(cycle[i].first).name + " -> " + g.data(cycle[i].second).name + " -> ";
  }
  if (shown < cycle.size()) path += fmt::format("... ({} more actors) -> ", cycle.size() - shown);
  path += first;
  return Status::InvalidGraph(fmt::format("actor '{}' is on a cycle of {} actor{}: {}", first, cycle.size(),
                                          cycle.size() == 1 ? "" : "s", path));
}

std::string suggestion(const Registry& registry, std::string_view function) {
  std::string best = nearest_name(function, registry.names());
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

Status check_functions(const Graph& g, const Registry& registry) {
  for (const ActorNode& a : g.actors()) {
    const ActorSpec* spec = registry.find(a.function);
    if (spec == nullptr) {
      return Status::InvalidGraph(fmt::format("actor '{}': unknown actor function '{}'{}; `redflow actors` lists the "
                                              "known ones, and --lib PLUGIN.so loads more",
                                              a.name, a.function, suggestion(registry, a.function)));
    }
    if (!spec->check) continue;
    std::vector<std::size_t> input_bytes;
    for (DataId d : a.inputs) input_bytes.push_back(g.data(d).bytes);
    ActorShape shape{input_bytes, g.data(a.outputs[0]).bytes, a.args};
    std::string problem = spec->check(shape);
    if (!problem.empty()) {
      return Status::InvalidGraph(fmt::format("actor '{}' (function '{}'): {}", a.name, a.function, problem));
    }
  }
  return Status::Ok();
}

// Every data node needs somewhere to live: a tile slot or the driver's
// memory. driver_bytes == 0 means the caller did not resolve the driver's
// budget (Runtime::options() does), so the driver is taken as unlimited.
Status check_memory(const Graph& g, const RuntimeOptions& options) {
  if (options.driver_bytes == 0) return Status::Ok();
  const std::size_t limit = std::max(options.slot_bytes, options.driver_bytes);
  for (const DataNode& n : g.data()) {
    if (n.bytes > limit) {
      return Status::ResourceExhausted(fmt::format("data node '{}' needs {} bytes, more than a tile slot "
                                                   "(slot_bytes = {}) or the driver (driver_bytes = {}) can hold",
                                                   n.name, n.bytes, options.slot_bytes, options.driver_bytes));
    }
  }
  return Status::Ok();
}

}  // namespace

Status Graph::validate_structure() const {
  REDFLOW_RETURN_IF_ERROR(check_unique_names(*this));
  REDFLOW_RETURN_IF_ERROR(check_actor_ends(*this));
  REDFLOW_RETURN_IF_ERROR(check_links(*this));
  REDFLOW_RETURN_IF_ERROR(check_data_nodes(*this));
  return check_acyclic(*this);
}

Status validate(const Graph& graph, const Registry& registry, const RuntimeOptions& options) {
  REDFLOW_RETURN_IF_ERROR(graph.validate_structure());
  REDFLOW_RETURN_IF_ERROR(check_functions(graph, registry));
  return check_memory(graph, options);
}

}  // namespace redflow
