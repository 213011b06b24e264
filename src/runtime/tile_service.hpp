// TileService: the executor's side of the tile protocol. It decodes one
// encoded frame, calls its LocalTile and encodes the answer; the only code
// that touches the tile. WireTile's executor thread (wire_tile.hpp) and a
// worker process's executor (src/net/tile_worker.cpp) both use it, so a tile
// answers the same bytes in a thread and across a network.
//
// It is also where the end-to-end check meets a value that crossed a
// process boundary: a data node that carries its checksum (whole, in
// pieces, or fetched from a peer) is verified before the tile publishes it,
// and a value whose bytes do not match is answered DataLoss, never placed.
// Not thread-safe: one executor thread calls it.
#pragma once

#include <xxhash.h>

#include <map>
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
  // A piece of a value into its slot; the piece that ends a checked value
  // is placed only if the value's bytes hash to its checksum.
  Status write_checked(const DataNodeMessage& message, std::uint64_t offset, std::span<const std::byte> piece);
  struct FreeState {
    void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
  };
  LocalTile& tile_;
  // Per slot: the hash of a checked value arriving in pieces, so far.
  std::map<SlotId, std::unique_ptr<XXH3_state_t, FreeState>> hashing_;
  std::unique_ptr<DecodedFrame> table_;  // the actor table's strings, in use until the next table
};

}  // namespace redflow::runtime
