// Bridges of a stream program's undirected graph, and the credit windows
// they get (credit_window.hpp).
#include "stream/credit_window.hpp"

#include <algorithm>
#include <cstddef>

namespace redflow::stream {

// Tarjan's bridge finding, without recursion (a program may have a million
// operators): a stream is a bridge when nothing below its lower end in the
// depth-first tree reaches above it by another stream.
std::vector<char> bridge_streams(const Program& p) {
  const auto& streams = p.streams();
  const std::size_t n = p.instances().size();
  struct Arc {
    std::size_t to, stream;
  };
  std::vector<std::vector<Arc>> adj(n);
  for (std::size_t k = 0; k < streams.size(); ++k) {
    adj[streams[k].from].push_back({streams[k].to, k});
    adj[streams[k].to].push_back({streams[k].from, k});
  }
  constexpr std::size_t kUnseen = static_cast<std::size_t>(-1);
  std::vector<std::size_t> disc(n, kUnseen), low(n, 0);
  std::vector<char> bridge(streams.size(), 0);
  struct Frame {
    std::size_t v, via, next;  // the operator, the stream it was reached by, its next arc
  };
  std::vector<Frame> stack;
  std::size_t time = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (disc[root] != kUnseen) continue;
    disc[root] = low[root] = time++;
    stack.push_back({root, kUnseen, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < adj[f.v].size()) {
        const Arc a = adj[f.v][f.next++];
        if (a.stream == f.via) continue;  // the tree stream back up (a parallel one is another stream)
        if (disc[a.to] == kUnseen) {
          disc[a.to] = low[a.to] = time++;
          stack.push_back({a.to, a.stream, 0});
        } else {
          low[f.v] = std::min(low[f.v], disc[a.to]);
        }
        continue;
      }
      const Frame done = f;
      stack.pop_back();
      if (stack.empty()) break;
      const std::size_t up = stack.back().v;
      low[up] = std::min(low[up], low[done.v]);
      if (low[done.v] > disc[up]) bridge[done.via] = 1;
    }
  }
  return bridge;
}

std::vector<std::uint64_t> credit_windows(const Program& p, const std::vector<std::uint32_t>& node_of, std::uint64_t buffer_bytes) {
  const auto& streams = p.streams();
  std::vector<std::uint64_t> window(streams.size(), 0);
  if (buffer_bytes == 0) return window;
  const std::vector<char> bridge = bridge_streams(p);
  for (std::size_t k = 0; k < streams.size(); ++k) {
    const auto& st = streams[k];
    if (!bridge[k] || st.from >= node_of.size() || st.to >= node_of.size() || node_of[st.from] == node_of[st.to]) continue;
    window[k] = std::max<std::uint64_t>(1, buffer_bytes / std::max<std::uint64_t>(1, st.token_bytes));
  }
  return window;
}

}  // namespace redflow::stream
