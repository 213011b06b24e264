// Which streams between nodes carry credits, and their windows
// (docs/streams.md, "Back-pressure"). Every stream whose two ends run on
// different nodes gets a window of the run's stream buffer (in tokens, at
// least one): its producer's node sends no more than the reader's node has
// granted. A window can hold back tokens a Kahn network that runs with
// unbounded streams needs (a producer that writes a burst to one stream
// before the other of two that meet again); Parks' rule resolves it on the
// reader's node (Room::make_room): when nothing there can fire, the network
// has been quiet a while and a stream's producer has used up its credit,
// that window doubles. Every node computes the same windows from its SETUP.
#pragma once

#include <cstdint>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream {

// Per stream of `p`: its credit window in tokens, 0 for none (a stream
// within one node, or buffer_bytes 0: unbounded streams).
std::vector<std::uint64_t> credit_windows(const Program& p, const std::vector<std::uint32_t>& node_of, std::uint64_t buffer_bytes);

}  // namespace redflow::stream
