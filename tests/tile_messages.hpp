// Messages and an actor table for the tile tests (tile_test.cpp,
// tile_service_test.cpp): they drive the driver/tile protocol (tile.hpp)
// without a driver. Header-only, in a named namespace, so that the test files
// compiled into one unity object do not define them twice.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/registry.hpp"
#include "runtime/tile.hpp"

namespace redflow::runtime::tile_messages {

inline std::vector<std::byte> u32_bytes(std::vector<std::uint32_t> v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline DataNodeMessage from_driver(DataTag tag, SlotId slot, std::span<const std::byte> bytes) {
  DataNodeMessage m;
  m.tag = tag;
  m.slot = slot;
  m.bytes = bytes.size();
  m.payload = bytes;
  return m;
}

// Actor 0 of execution 1, reading `inputs` by port, its output of `bytes` into slot `out` as `tag`.
inline ActorMessage actor_message(std::span<const SlotId> inputs, SlotId out, DataTag tag, std::uint64_t bytes) {
  ActorMessage m;
  m.actor = 0;
  m.execution = 1;
  m.input_slots = inputs;
  m.output_slot = out;
  m.output_tag = tag;
  m.output_bytes = bytes;
  return m;
}

inline bool read(Tile& tile, SlotId slot, DataTag tag, std::span<std::byte> out) { return tile.read_slot(ReadSlotMessage{slot, tag, out.size()}, out); }

// The actor table of these tests: actor i runs functions[i] as "a<i>".
struct Table {
  Registry registry;
  std::vector<std::string> names, functions;
  std::vector<std::string_view> function_views;
  std::vector<ActorTableEntry> entries;
  explicit Table(std::vector<ActorFunction> fs, std::string_view args = "", unsigned runs = 1) {
    for (std::size_t i = 0; i < fs.size(); ++i) {
      names.push_back("a" + std::to_string(i));
      functions.push_back("f" + std::to_string(i));
      registry.add(functions.back(), std::move(fs[i]));
    }
    for (std::size_t i = 0; i < fs.size(); ++i) {
      function_views.push_back(functions[i]);
      entries.push_back(ActorTableEntry{names[i], args, static_cast<std::uint32_t>(i), static_cast<std::uint8_t>(runs)});
    }
  }
  ActorTableMessage message() const { return ActorTableMessage{1, function_views, entries}; }
  Status load(Tile& tile) const { return tile.load_actors(message(), registry); }
};

}  // namespace redflow::runtime::tile_messages
