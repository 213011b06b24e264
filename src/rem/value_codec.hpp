// How a label value lives in a Store: one key per label, a checksum every
// reader verifies, and chunks for values larger than the store's item limit.
// The key under the label's name is the single-assignment point: it is
// written last, with add, so a reader sees the whole value or nothing.
// Every record names the key it was written for and the program that wrote
// it, and an instance key names the program an instance belongs to, so a
// record is used only where and by whom it was written (docs/rem.md, "Key
// layout").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redflow/rem.hpp"

namespace redflow::rem {

// What happened when a scheduler wrote a label.
enum class WriteOutcome : std::uint8_t { kWritten, kAlreadyThere };

// A label as read from the store: absent, present with its value, or
// retired (every task that needs it has run: its record keeps the value's
// size and checksum, not the value). Cheap to copy: `bytes` points into
// `owner`, which a store in this process shares rather than copies.
struct LabelValue {
  enum class State : std::uint8_t { kAbsent, kPresent, kRetired };
  State state = State::kAbsent;
  SharedValue owner;                 // keeps `bytes` alive
  std::span<const std::byte> bytes;  // the value (kPresent)
  std::uint64_t size = 0;            // the value's size and XXH3 (kPresent, kRetired)
  std::uint64_t checksum = 0;
  bool present() const { return state == State::kPresent; }
  bool retired() const { return state == State::kRetired; }
};

// Reads and writes the labels of one program instance. Label names are not in
// the keys (they may hold any character); the label's index is, and the
// instance id makes index collisions across programs impossible.
// Not thread-safe: each scheduler has its own (the Store below it is shared).
class LabelCodec {
 public:
  LabelCodec(Store& store, const Program& program, std::string instance);

  std::string key(LabelId l) const;
  // The key of chunk `i` of a value with `checksum` under label key `k`.
  static std::string chunk_key(const std::string& k, std::uint64_t checksum, std::uint32_t i);
  // The key a scheduler adds, expiring, while it runs task `t` (a claim).
  std::string claim_key(TaskId t) const { return prefix_ + "C" + std::to_string(t); }
  // The key that names the program an instance belongs to.
  std::string instance_key() const { return prefix_ + "program"; }
  // The key under which the first scheduler of an instance that chose its
  // coalescing automatically recorded the choice (choose_coalescing()).
  std::string coalesce_key() const { return prefix_ + "coalesce"; }
  // Binds the instance to this program: writes the program's hash under
  // instance_key() with add (single assignment) if no one has, and refuses,
  // naming the instance, if another program's hash is there. With
  // claim=false only checks (an instance nobody started is fine).
  Status bind_instance(bool claim);
  // Writes the value (chunks first, then the manifest with add). If a value is
  // already there its checksum must equal this one's: a different value is an
  // error naming the label (a nondeterministic task, or a corrupted store).
  // `stored`, if given, gets the value's size and checksum and, when this
  // call wrote it whole in one record, that record (a store in this process
  // keeps it without a copy, so the caller may keep it instead of its own
  // buffer); otherwise its owner stays null.
  Result<WriteOutcome> write(LabelId l, std::span<const std::byte> value, std::uint64_t* bytes_written = nullptr,
                             LabelValue* stored = nullptr);
  // kAbsent if the label has no value yet; an error naming the label if the
  // stored value fails its checksum, is truncated, lacks a chunk, or was
  // written for another key or by another program.
  Result<LabelValue> read(LabelId l);
  // read() of several labels with one multi-get (chunks, if any, one by one).
  Result<std::vector<LabelValue>> read_many(std::span<const LabelId> labels);
  Result<bool> present(LabelId l);
  // Retires a label every task that needs it has run (docs/rem.md,
  // "Retiring labels"): its record is replaced by one that keeps the value's
  // size and checksum (`value`, as read or written), then its chunks go.
  // The key stays, so the label still counts as written and a late writer
  // of it is still checked against its checksum.
  Status retire(LabelId l, const LabelValue& value);
  // Deletes the label's record and then the chunks it lists (a record that
  // does not parse is deleted alone); returns the keys deleted.
  Result<std::uint64_t> remove(LabelId l);
  // Deletes the instance key (after every label: clean_instance()).
  Result<std::uint64_t> remove_instance_key();
  // Claims (docs/rem.md, "Claims"): whether the store can hold them, adding
  // one for task `t` that lapses after `lease` (true: this scheduler holds
  // it; false: another does), and deleting one (clean_instance()).
  bool claims_possible() const { return store_.expires(); }
  Result<bool> claim(TaskId t, std::chrono::milliseconds lease);
  Result<std::uint64_t> remove_claim(TaskId t);

 private:
  // Checks and unpacks `record`, read from label `l`'s key `k` (null: none).
  Result<LabelValue> decode(LabelId l, const std::string& k, SharedValue record);
  // The label whose key `k` is in this instance, for messages ("" if none).
  std::string label_of_key(std::string_view k) const;

  Store& store_;
  const Program& program_;
  std::string instance_;
  std::string prefix_;
  std::uint64_t program_hash_;
};

}  // namespace redflow::rem
