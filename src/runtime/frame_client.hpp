// The caller's side of a tile reached only through frames (WireTile in this
// process, a WorkerTile in a worker process): building a data node's
// frame, relaying the bytes through the driver when they sit on another tile,
// and reading an actor's completion or a slot's bytes out of an answer. One
// place, so both transports answer the engine the same way.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/tile.hpp"

namespace redflow::runtime {

// Encodes `message` into `frame`; a transfer from another tile is relayed:
// the bytes are read from peers[source_tile] and travel along.
Status data_node_frame(const DataNodeMessage& message, std::span<Tile* const> peers, std::vector<std::byte>& frame);

// A transfer from another tile, relayed: its bytes read from
// peers[source_tile] into `bytes`, and `relayed` the same data node with
// them along (from main memory, as far as the receiving tile knows).
Status read_relayed(const DataNodeMessage& message, std::span<Tile* const> peers, std::vector<std::byte>& bytes, DataNodeMessage& relayed);

// The completion an actor message's answer says. `sent`: how the call went
// (not OK: the transport failed); `who` names the tile in errors.
Completion completion_of(const Status& sent, const DecodedFrame& reply, ActorId actor, const std::string& who);

// Copies a read slot message's answer into `out`; false unless it found the value, exactly out.size() bytes.
bool slot_data_of(const Status& sent, const DecodedFrame& reply, std::span<std::byte> out);

}  // namespace redflow::runtime
