// Operator placement (placement.hpp): the paper's load-time partitioners, kept
// free of any runtime state so a placement can be computed, scored and
// compared before the cluster is touched.
//
// How Smart_max gets a max-cut out of METIS, which only minimises a cut:
// let w(u,v) be the tokens between two operators (0 when no stream joins
// them) and C a constant above every w. Partition the *complete* graph whose
// edge weights are w'(u,v) = C - w(u,v) for every pair of operators. For any
// placement, cut(w') = C * (pairs split) - cut(w). When the node sizes are
// fixed, the number of split pairs is fixed too, so the placement with the
// smallest cut(w') is exactly the one with the largest cut(w): METIS's
// minimum of the inverted weights is a maximum of the real ones. METIS only
// keeps the node loads (busy time) nearly equal rather than the sizes
// exactly, so this is a heuristic, but a reasonable one: pairs joined by
// heavy streams are the cheapest to separate, so they are the ones split.
// Inverting only the existing streams (w' = C - w on stream edges, nothing
// between unconnected operators) would be wrong: leaving a stream uncut
// always costs nothing, so METIS would still mostly minimise how many
// streams it cuts. The complete graph has operators^2/2 edges, so above
// kDenseMaxCutLimit operators we fall back to inverting the existing streams
// only (which still prefers cutting heavy streams to light ones).
#include "stream/placement.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <new>
#include <random>
#include <utility>

namespace redflow::stream {

namespace {

constexpr const char* kAlgoNames[] = {"naive", "topological", "smart", "smart_min", "smart_max"};
// METIS sums weights in idx_t (32 bits here); keep every total well under 2^31.
constexpr double kWeightBudget = double{1 << 29};
constexpr idx_t kMaxWeight = idx_t{1} << 20;
constexpr std::size_t kDenseMaxCutLimit = 1024;

struct WeightedPair { unsigned u, v; double w; };

Status validate(const PlacementGraph& g, unsigned nodes) {
  const std::size_t n = g.operators.size();
  if (nodes == 0) return Status::InvalidArgument("placement: nodes is 0 (need at least one cluster node)");
  if (n == 0) return Status::InvalidGraph("placement: the graph has no operators");
  if (n > static_cast<std::size_t>(std::numeric_limits<idx_t>::max() / 4) ||
      g.streams.size() > static_cast<std::size_t>(std::numeric_limits<idx_t>::max() / 4))
    return Status::ResourceExhausted("placement: graph too large (" + std::to_string(n) + " operators, " +
                                     std::to_string(g.streams.size()) + " streams)");
  if (!g.busy.empty() && g.busy.size() != n)
    return Status::InvalidGraph("placement: busy has " + std::to_string(g.busy.size()) + " entries but the graph has " +
                                std::to_string(n) + " operators");
  for (std::size_t i = 0; i < g.busy.size(); i++)
    if (!std::isfinite(g.busy[i]) || g.busy[i] < 0)
      return Status::InvalidGraph("placement: busy time of operator '" + g.operators[i] + "' is " + std::to_string(g.busy[i]) +
                                  " (must be finite and >= 0)");
  for (std::size_t i = 0; i < g.streams.size(); i++) {
    const auto& s = g.streams[i];
    for (unsigned end : {s.from, s.to})
      if (end >= n)
        return Status::InvalidGraph("placement: stream #" + std::to_string(i) + " (" + std::to_string(s.from) + " -> " +
                                    std::to_string(s.to) + ") names operator " + std::to_string(end) + " but the graph has only " +
                                    std::to_string(n) + " operators");
    if (!std::isfinite(s.tokens) || s.tokens < 0)
      return Status::InvalidGraph("placement: stream #" + std::to_string(i) + " ('" + g.operators[s.from] + "' -> '" +
                                  g.operators[s.to] + "') has tokens " + std::to_string(s.tokens) + " (must be finite and >= 0)");
  }
  return Status::Ok();
}

// Round-robin over a seeded shuffle: pseudo-random like mpirun's assignment,
// yet no node is left idle while operators remain. The Fisher-Yates swap
// draws straight from mt19937_64 (whose output the standard fixes) rather
// than std::shuffle (whose use of it is library-defined), so a seed means the
// same placement on every platform.
std::vector<unsigned> place_naive(std::size_t n, unsigned nodes, std::uint64_t seed) {
  std::vector<unsigned> order(n);
  for (std::size_t i = 0; i < n; i++) order[i] = static_cast<unsigned>(i);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n - 1; i > 0; i--) std::swap(order[i], order[rng() % (i + 1)]);
  std::vector<unsigned> node_of(n);
  for (std::size_t i = 0; i < n; i++) node_of[order[i]] = static_cast<unsigned>(i % nodes);
  return node_of;
}

// Tarjan's strongly connected components, iterative so a long chain of
// operators cannot overflow the stack.
std::vector<unsigned> strongly_connected(const std::vector<std::vector<unsigned>>& out, unsigned* count) {
  const unsigned n = static_cast<unsigned>(out.size());
  constexpr unsigned kUnvisited = std::numeric_limits<unsigned>::max();
  std::vector<unsigned> index(n, kUnvisited), low(n), comp(n, kUnvisited), stack;
  std::vector<std::pair<unsigned, std::size_t>> calls;  // operator, next stream to follow
  unsigned next_index = 0;
  *count = 0;
  for (unsigned root = 0; root < n; root++) {
    if (index[root] != kUnvisited) continue;
    calls.push_back({root, 0});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    while (!calls.empty()) {
      auto& [v, e] = calls.back();
      if (e < out[v].size()) {
        const unsigned w = out[v][e++];
        if (index[w] == kUnvisited) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          calls.push_back({w, 0});
        } else if (comp[w] == kUnvisited) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const unsigned done = v;
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
      if (low[done] == index[done]) {
        unsigned w;
        do {
          w = stack.back();
          stack.pop_back();
          comp[w] = *count;
        } while (w != done);
        ++*count;
      }
    }
  }
  return comp;
}

// Loop clustering, then greedy breadth-first packing of the clusters in
// topological order: cycles always share a node (the paper's first rule),
// and neighbours in the flow tend to fill the same node.
std::vector<unsigned> place_topological(const PlacementGraph& g, unsigned nodes) {
  const std::size_t n = g.operators.size();
  std::vector<std::vector<unsigned>> out(n);
  for (const auto& s : g.streams) out[s.from].push_back(s.to);
  unsigned clusters = 0;
  const std::vector<unsigned> comp = strongly_connected(out, &clusters);

  std::vector<std::vector<unsigned>> members(clusters), next(clusters);
  std::vector<unsigned> indegree(clusters, 0);
  for (unsigned v = 0; v < n; v++) members[comp[v]].push_back(v);
  for (const auto& s : g.streams)
    if (comp[s.from] != comp[s.to]) {
      next[comp[s.from]].push_back(comp[s.to]);
      indegree[comp[s.to]]++;
    }

  std::deque<unsigned> ready;
  std::vector<bool> queued(clusters, false);
  for (unsigned v = 0; v < n; v++)  // sources in operator order, for a stable result
    if (indegree[comp[v]] == 0 && !queued[comp[v]]) {
      queued[comp[v]] = true;
      ready.push_back(comp[v]);
    }

  const std::size_t capacity = (n + nodes - 1) / nodes;
  std::vector<std::size_t> load(nodes, 0);
  std::vector<unsigned> node_of(n, 0);
  unsigned current = 0;
  while (!ready.empty()) {
    const unsigned c = ready.front();
    ready.pop_front();
    const std::size_t size = members[c].size();
    unsigned target = nodes;
    for (unsigned k = 0; k < nodes && size <= capacity; k++) {
      const unsigned candidate = (current + k) % nodes;
      if (load[candidate] + size <= capacity) {
        target = current = candidate;
        break;
      }
    }
    if (target == nodes) target = static_cast<unsigned>(std::min_element(load.begin(), load.end()) - load.begin());
    load[target] += size;
    for (unsigned v : members[c]) node_of[v] = target;
    for (unsigned d : next[c])
      if (--indegree[d] == 0) ready.push_back(d);
  }
  return node_of;
}

// Maps w in [0, max] onto integers in [0, top], proportionally.
idx_t scale(double w, double max, idx_t top) {
  if (max <= 0) return 0;
  return static_cast<idx_t>(std::llround(std::min(1.0, w / max) * top));
}

// Streams as undirected operator pairs; parallel and opposite streams merge
// by summing their weight. Self-loops are dropped: they can never be cut.
std::vector<WeightedPair> undirected(const PlacementGraph& g, bool unit) {
  std::vector<WeightedPair> pairs;
  for (const auto& s : g.streams)
    if (s.from != s.to) pairs.push_back({std::min(s.from, s.to), std::max(s.from, s.to), unit ? 1.0 : s.tokens});
  std::sort(pairs.begin(), pairs.end(), [](const WeightedPair& a, const WeightedPair& b) { return a.u != b.u ? a.u < b.u : a.v < b.v; });
  std::vector<WeightedPair> merged;
  for (const auto& p : pairs) {
    if (!merged.empty() && merged.back().u == p.u && merged.back().v == p.v)
      merged.back().w += p.w;
    else
      merged.push_back(p);
  }
  return merged;
}

struct MetisGraph {
  std::vector<idx_t> xadj, adjncy, adjwgt, vwgt;
};

MetisGraph to_csr(std::size_t n, const std::vector<WeightedPair>& pairs, const std::vector<idx_t>& weights) {
  MetisGraph m;
  m.xadj.assign(n + 1, 0);
  for (const auto& p : pairs) {
    m.xadj[p.u + 1]++;
    m.xadj[p.v + 1]++;
  }
  for (std::size_t v = 0; v < n; v++) m.xadj[v + 1] += m.xadj[v];
  // One spare slot so data() is never null for a graph without streams.
  m.adjncy.assign(static_cast<std::size_t>(m.xadj[n]) + 1, 0);
  m.adjwgt.assign(m.adjncy.size(), 0);
  std::vector<idx_t> fill(m.xadj.begin(), m.xadj.end() - 1);
  for (std::size_t i = 0; i < pairs.size(); i++) {
    m.adjncy[fill[pairs[i].u]] = static_cast<idx_t>(pairs[i].v);
    m.adjwgt[fill[pairs[i].u]++] = weights[i];
    m.adjncy[fill[pairs[i].v]] = static_cast<idx_t>(pairs[i].u);
    m.adjwgt[fill[pairs[i].v]++] = weights[i];
  }
  return m;
}

// Edge weights for METIS: stream counts (Smart), scaled tokens with a floor
// of 1 (Smart_min), or inverted tokens on the complete graph (Smart_max; see
// the top of this file).
MetisGraph metis_graph(const PlacementGraph& g, PlaceAlgo algo) {
  const std::size_t n = g.operators.size();
  std::vector<WeightedPair> pairs = undirected(g, algo == PlaceAlgo::kSmart);
  double max_w = 0;
  for (const auto& p : pairs) max_w = std::max(max_w, p.w);
  std::vector<idx_t> weights;
  if (algo == PlaceAlgo::kSmartMax) {
    if (n <= kDenseMaxCutLimit) {
      std::vector<WeightedPair> all;
      all.reserve(n * (n - 1) / 2);
      std::size_t next = 0;
      for (unsigned u = 0; u < n; u++)
        for (unsigned v = u + 1; v < n; v++) {
          const bool stream = next < pairs.size() && pairs[next].u == u && pairs[next].v == v;
          all.push_back({u, v, stream ? pairs[next++].w : 0.0});
        }
      pairs = std::move(all);
    }
    const idx_t top = std::max<idx_t>(1, std::min<idx_t>(kMaxWeight, static_cast<idx_t>(kWeightBudget / std::max<std::size_t>(1, pairs.size())) - 1));
    for (const auto& p : pairs) weights.push_back(top + 1 - scale(p.w, max_w, top));
  } else {
    const idx_t top = std::max<idx_t>(1, std::min<idx_t>(kMaxWeight, static_cast<idx_t>(kWeightBudget / std::max<std::size_t>(1, pairs.size()))));
    for (const auto& p : pairs)
      weights.push_back(algo == PlaceAlgo::kSmart ? std::min<idx_t>(top, static_cast<idx_t>(p.w)) : std::max<idx_t>(1, scale(p.w, max_w, top)));
  }
  MetisGraph m = to_csr(n, pairs, weights);
  double max_busy = 0;
  for (double b : g.busy) max_busy = std::max(max_busy, b);
  const idx_t top_v = std::max<idx_t>(1, std::min<idx_t>(kMaxWeight, static_cast<idx_t>(kWeightBudget / n)));
  m.vwgt.assign(n, 1);
  if (algo != PlaceAlgo::kSmart && !g.busy.empty())
    for (std::size_t v = 0; v < n; v++) m.vwgt[v] = std::max<idx_t>(1, scale(g.busy[v], max_busy, top_v));
  return m;
}

const char* metis_code_name(int rc) {
  switch (rc) {
    case METIS_ERROR_INPUT: return "METIS_ERROR_INPUT";
    case METIS_ERROR_MEMORY: return "METIS_ERROR_MEMORY";
    case METIS_ERROR: return "METIS_ERROR";
  }
  return "unknown METIS return code";
}

// Whether GKlib (METIS's support library) keeps its random state and memory
// core per thread depends on how it was built, and its error traps are
// process-wide; serialising costs little next to a load-time partition and
// keeps concurrent placements deterministic.
std::mutex& metis_mutex() {
  static std::mutex mu;
  return mu;
}

Result<std::vector<unsigned>> place_metis(const PlacementGraph& g, unsigned nodes, PlaceAlgo algo, std::uint64_t seed) {
  const std::size_t n = g.operators.size();
  // More nodes than operators: METIS cannot use the extra nodes, leave them empty.
  const unsigned parts = static_cast<unsigned>(std::min<std::size_t>(nodes, n));
  if (parts == 1) return std::vector<unsigned>(n, 0);
  MetisGraph m = metis_graph(g, algo);
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = static_cast<idx_t>(parts), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % static_cast<std::uint64_t>(std::numeric_limits<idx_t>::max()));
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(n, 0);
  int rc;
  {
    std::lock_guard<std::mutex> lock(metis_mutex());
    rc = METIS_PartGraphRecursive(&nvtxs, &ncon, m.xadj.data(), m.adjncy.data(), m.vwgt.data(), nullptr, m.adjwgt.data(), &nparts,
                                  nullptr, nullptr, options, &objval, part.data());
  }
  if (rc != METIS_OK)
    return Status::Internal(std::string("placement ") + place_algo_name(algo) + ": METIS_PartGraphRecursive returned " +
                            std::to_string(rc) + " (" + metis_code_name(rc) + ") for " + std::to_string(n) + " operators on " +
                            std::to_string(parts) + " nodes");
  std::vector<unsigned> node_of(n);
  for (std::size_t v = 0; v < n; v++) {
    if (part[v] < 0 || part[v] >= nparts)
      return Status::Internal("placement: METIS put operator '" + g.operators[v] + "' on node " + std::to_string(part[v]));
    node_of[v] = static_cast<unsigned>(part[v]);
  }
  return node_of;
}

}  // namespace

Result<PlaceAlgo> parse_place_algo(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kAlgoNames); i++)
    if (name == kAlgoNames[i]) return static_cast<PlaceAlgo>(i);
  std::string known;
  for (const char* a : kAlgoNames) known += std::string(known.empty() ? "" : ", ") + a;
  return Status::InvalidArgument("unknown placement algorithm '" + std::string(name) + "' (expected one of: " + known + ")");
}

const char* place_algo_name(PlaceAlgo a) {
  const auto i = static_cast<std::size_t>(a);
  return i < std::size(kAlgoNames) ? kAlgoNames[i] : "?";
}

Result<Placement> place(const PlacementGraph& g, unsigned nodes, PlaceAlgo algo, std::uint64_t seed) {
  REDFLOW_RETURN_IF_ERROR(validate(g, nodes));
  const std::size_t n = g.operators.size();
  Placement p;
  try {
    if (nodes == 1) {
      p.node_of.assign(n, 0);
    } else {
      switch (algo) {
        case PlaceAlgo::kNaive: p.node_of = place_naive(n, nodes, seed); break;
        case PlaceAlgo::kTopological: p.node_of = place_topological(g, nodes); break;
        case PlaceAlgo::kSmart:
        case PlaceAlgo::kSmartMin:
        case PlaceAlgo::kSmartMax: {
          auto node_of = place_metis(g, nodes, algo, seed);
          if (!node_of.ok()) return node_of.status();
          p.node_of = std::move(*node_of);
          break;
        }
        default: return Status::InvalidArgument("placement: unknown algorithm " + std::to_string(static_cast<int>(algo)));
      }
    }
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("placement: out of memory placing " + std::to_string(n) + " operators on " +
                                     std::to_string(nodes) + " nodes");
  }
  score(g, nodes, p);
  return p;
}

void score(const PlacementGraph& g, unsigned nodes, Placement& p) {
  const std::size_t n = g.operators.size();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  p.edge_cut = p.balance = kNaN;
  if (nodes == 0 || p.node_of.size() != n || (!g.busy.empty() && g.busy.size() != n)) return;
  for (unsigned node : p.node_of)
    if (node >= nodes) return;
  double cut = 0;
  for (const auto& s : g.streams) {
    if (s.from >= n || s.to >= n) return;
    if (p.node_of[s.from] != p.node_of[s.to]) cut += s.tokens;
  }
  std::vector<double> load(nodes, 0);
  double total = 0;
  for (std::size_t v = 0; v < n; v++) {
    const double w = g.busy.empty() ? 1.0 : g.busy[v];
    load[p.node_of[v]] += w;
    total += w;
  }
  p.edge_cut = cut;
  p.balance = total > 0 ? *std::max_element(load.begin(), load.end()) / (total / nodes) : 1.0;
}

}  // namespace redflow::stream
