// SlotIndex: which slot of one tile holds a data node, by data id. A small
// open-addressing table (linear probing, backward-shift deletion) sized by
// the tile's slots, not by the graph: the per-data-node array it replaces
// cost 4 bytes a node for every tile (8 MB a tile at 10^6 nodes, to index a
// few slots). Entries may go stale (a slot reused by a path that does not
// erase); readers check the slot's tag, and prune() drops stale entries when
// the table fills, so it never holds more than a few times the slots.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "redflow/graph.hpp"

namespace redflow::runtime {

class SlotIndex {
 public:
  // Empty, for a tile of `slots` slots: room for 4x as many entries, so
  // probes stay short and pruning is rare.
  void reset(std::size_t slots) {
    const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, 4 * slots));
    table_.assign(capacity, Entry{});
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    count_ = 0;
  }

  // The slot `d` was last indexed at, or -1.
  std::int32_t find(DataId d) const {
    for (std::size_t i = home(d);; i = next(i)) {
      if (table_[i].data == d) return table_[i].slot;
      if (table_[i].data == kEmpty) return -1;
    }
  }

  // Whether set() of a new id needs prune() first (half full).
  bool full() const { return 2 * (count_ + 1) > table_.size(); }

  // Indexes `d` at `slot`, replacing d's entry. Requires !full() (or d present).
  void set(DataId d, std::int32_t slot) {
    std::size_t i = home(d);
    for (; table_[i].data != kEmpty; i = next(i))
      if (table_[i].data == d) {
        table_[i].slot = slot;
        return;
      }
    table_[i] = Entry{d, slot};
    ++count_;
  }

  // Removes d's entry if it names `slot` (another slot's value of d stays).
  void erase_if(DataId d, std::int32_t slot) {
    std::size_t i = home(d);
    for (; table_[i].data != d; i = next(i))
      if (table_[i].data == kEmpty) return;
    if (table_[i].slot != slot) return;
    // Backward shift: pull later entries of the probe run into the hole so
    // that find() never stops early at it.
    for (std::size_t j = next(i);; j = next(j)) {
      if (table_[j].data == kEmpty) break;
      const std::size_t h = home(table_[j].data);
      // Entry j may move to i only if its home is not in (i, j] (cyclically).
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      table_[i] = table_[j];
      i = j;
    }
    table_[i] = Entry{};
    --count_;
  }

  // Keeps only the entries `still(d, slot)` says are true.
  template <class Still>
  void prune(Still still) {
    std::vector<Entry> kept;
    for (const Entry& e : table_)
      if (e.data != kEmpty && still(e.data, e.slot)) kept.push_back(e);
    table_.assign(table_.size(), Entry{});
    count_ = 0;
    for (const Entry& e : kept) set(e.data, e.slot);
  }

  std::size_t size() const { return count_; }

 private:
  static constexpr DataId kEmpty = ~DataId{0};
  struct Entry {
    DataId data = kEmpty;
    std::int32_t slot = -1;
  };
  // Fibonacci hashing: consecutive ids (a chain's nodes) spread over the table.
  std::size_t home(DataId d) const { return static_cast<std::size_t>((std::uint64_t{d} * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::size_t next(std::size_t i) const { return (i + 1) & (table_.size() - 1); }

  std::vector<Entry> table_;
  unsigned shift_ = 64;
  std::size_t count_ = 0;
};

}  // namespace redflow::runtime
