// TileService: the executor's side of the tile protocol. It decodes one
// encoded frame, calls its LocalTile and encodes the answer; the only code
// that touches the tile. WireTile's executor thread (wire_tile.hpp) and a
// worker process's executor (src/net/tile_worker.cpp) both use it, so a tile
// answers the same bytes in a thread and across a network.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "runtime/local_tile.hpp"

namespace redflow::runtime {

class TileService {
 public:
  explicit TileService(LocalTile& tile) : tile_(tile) {}

  // Answers `frame` into `reply` (cleared first). `registry` resolves an
  // actor table's functions (null: a table is refused). A tile that died
  // answers kLost.
  void serve(std::span<const std::byte> frame, const Registry* registry, std::vector<std::byte>& reply);

  // Places `piece`, the bytes at `offset` of a data node the worker's
  // transport fetches from a peer in chunks (LocalTile::write_piece): each
  // is copied once, into the slot. The piece that ends the value is
  // answered as a kDataNode frame would be; earlier ones leave `reply`
  // empty unless they failed.
  void place(const DataNodeMessage& message, std::uint64_t offset, std::span<const std::byte> piece, std::vector<std::byte>& reply);

  LocalTile& tile() { return tile_; }

 private:
  LocalTile& tile_;
  std::unique_ptr<DecodedFrame> table_;  // the actor table's strings, in use until the next table
};

}  // namespace redflow::runtime
