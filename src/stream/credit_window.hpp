// Which streams between nodes carry credits, and their windows
// (docs/streams.md, "Back-pressure"). A stream whose two ends run on
// different nodes gets a window of the run's stream buffer (in tokens, at
// least one) when it is a bridge of the program's graph taken undirected:
// removing it leaves its two ends unconnected. Only then can a full window
// never be what keeps the consumer from the tokens it needs: every path from
// the producer to the consumer's other inputs goes through this stream.
// Bounding a stream on an undirected cycle can deadlock a Kahn network that
// runs with unbounded streams, and resolving that (Parks' rule) takes a look
// at every node at once; such streams keep no window (their producer's node
// sends what it has). Every node computes the same windows from its SETUP.
#pragma once

#include <cstdint>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream {

// Per stream of `p`: its credit window in tokens, 0 for none (a stream
// within one node, one on an undirected cycle, or buffer_bytes 0).
std::vector<std::uint64_t> credit_windows(const Program& p, const std::vector<std::uint32_t>& node_of, std::uint64_t buffer_bytes);

// Per stream: it is a bridge of the program's undirected graph (parallel
// streams and self-loops never are).
std::vector<char> bridge_streams(const Program& p);

}  // namespace redflow::stream
