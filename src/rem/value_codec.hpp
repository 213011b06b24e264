// How a label value lives in a Store: one key per label, a checksum every
// reader verifies, and chunks for values larger than the store's item limit.
// The key under the label's name is the single-assignment point: it is
// written last, with add, so a reader sees the whole value or nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "redflow/rem.hpp"

namespace redflow::rem {

// What happened when a scheduler wrote a label.
enum class WriteOutcome : std::uint8_t { kWritten, kAlreadyThere };

// Reads and writes the labels of one program instance. Label names are not in
// the keys (they may hold any character); the label's index is, and the
// instance id makes index collisions across programs impossible.
class LabelCodec {
 public:
  LabelCodec(Store& store, const Program& program, std::string instance);

  std::string key(LabelId l) const;
  // Writes the value (chunks first, then the manifest with add). If a value is
  // already there its checksum must equal this one's: a different value is an
  // error naming the label (a nondeterministic task, or a corrupted store).
  Result<WriteOutcome> write(LabelId l, std::span<const std::byte> value, std::uint64_t* bytes_written = nullptr);
  // nullopt if the label has no value yet; an error naming the label if the
  // stored value fails its checksum, is truncated or lacks a chunk.
  Result<std::optional<Value>> read(LabelId l);
  Result<bool> present(LabelId l);

 private:
  Store& store_;
  const Program& program_;
  std::string prefix_;
};

}  // namespace redflow::rem
