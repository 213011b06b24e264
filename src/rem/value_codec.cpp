// Label values in a store: checksum, chunking, the manifest that makes a
// chunked value appear atomically, and the binding of every record to its key
// and program (docs/rem.md, "Key layout").
#include "rem/value_codec.hpp"

#include <xxhash.h>

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace redflow::rem {

namespace {

// Every stored label value starts with this header, then the key it was
// written for, then the payload (inline) or a chunk table (chunked).
constexpr char kMagic[4] = {'R', 'F', 'L', '2'};
constexpr char kMagicV1[4] = {'R', 'F', 'L', '1'};  // records without key and program
constexpr std::uint32_t kInline = 0, kChunked = 1, kRetired = 2;
struct Header {
  char magic[4];
  std::uint32_t layout;     // kInline: payload follows; kChunked: a chunk table follows; kRetired: nothing follows
  std::uint64_t size;       // payload bytes
  std::uint64_t checksum;   // XXH3 of the payload
  std::uint64_t program;    // Program::fingerprint() of the writer
  std::uint32_t key_bytes;  // length of the key text after the header
  std::uint32_t pad;        // zero bytes after the key (inline only), so that the value starts 16-byte aligned
  std::uint64_t self;       // XXH3 of the metadata (header with self = 0, key, chunk table): a torn or moved record is caught too
};
static_assert(sizeof(Header) == 48);
struct ChunkTable {
  std::uint32_t chunks;
  std::uint32_t chunk_bytes;
};

// The instance key's value: which program the instance belongs to.
constexpr char kInstanceMagic[4] = {'R', 'F', 'I', '1'};
struct InstanceHeader {
  char magic[4];
  std::uint32_t name_bytes;  // the program's name follows, for messages
  std::uint64_t program;
  std::uint64_t self;        // XXH3 of the record with self = 0
};
static_assert(sizeof(InstanceHeader) == 24);

std::uint64_t hash(const void* p, std::size_t n) { return XXH3_64bits(p, n); }

// The hash of `meta` (a record's metadata) with its 8-byte self field at `self_at` taken as zero.
std::uint64_t self_hash(std::span<const std::byte> meta, std::size_t self_at) {
  Value copy(meta.begin(), meta.end());
  std::memset(copy.data() + self_at, 0, 8);
  return hash(copy.data(), copy.size());
}

// resize + memcpy, not insert(end, b, b + n): GCC 12 reports a false
// -Wstringop-overflow for the insert in some unity batches (TSan build).
template <typename T>
void append(Value& v, const T& x) {
  const std::size_t at = v.size();
  v.resize(at + sizeof(T));
  std::memcpy(v.data() + at, &x, sizeof(T));
}

void append_text(Value& v, std::string_view s) {
  const std::size_t at = v.size();
  v.resize(at + s.size());
  if (!s.empty()) std::memcpy(v.data() + at, s.data(), s.size());
}

// Text from the store, fit for a message: printable and bounded.
std::string printable(std::span<const std::byte> bytes) {
  std::string s;
  for (std::size_t i = 0; i < bytes.size() && i < 120; ++i) {
    const char c = static_cast<char>(bytes[i]);
    s += c >= 0x20 && c < 0x7f ? c : '?';
  }
  if (bytes.size() > 120) s += "...";
  return s;
}

}  // namespace

LabelCodec::LabelCodec(Store& store, const Program& program, std::string instance)
    : store_(store), program_(program), instance_(std::move(instance)), prefix_("rf:" + instance_ + ":"),
      program_hash_(program.fingerprint()) {}

std::string LabelCodec::key(LabelId l) const { return prefix_ + "L" + std::to_string(l); }

std::string LabelCodec::label_of_key(std::string_view k) const {
  if (!k.starts_with(prefix_ + "L")) return "";
  const std::string_view digits = k.substr(prefix_.size() + 1);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) return "";
  const auto l = static_cast<std::size_t>(std::stoul(std::string(digits)));
  return l < program_.labels().size() ? program_.label(static_cast<LabelId>(l)).name : "";
}

Status LabelCodec::bind_instance(bool claim) {
  const std::string k = instance_key();
  const std::string& name = program_.name();
  InstanceHeader h{};
  std::memcpy(h.magic, kInstanceMagic, 4);
  h.name_bytes = static_cast<std::uint32_t>(name.size());
  h.program = program_hash_;
  Value record;
  append(record, h);
  append_text(record, name);
  h.self = self_hash(record, offsetof(InstanceHeader, self));
  std::memcpy(record.data() + offsetof(InstanceHeader, self), &h.self, 8);
  if (claim) {
    auto added = store_.add(k, record);
    if (!added.ok()) return Status::IOError("binding instance '" + instance_ + "' to its program: " + added.status().message());
    if (*added) return Status::Ok();
  }
  auto got = store_.get(k);
  if (!got.ok()) return Status::IOError("reading the program of instance '" + instance_ + "': " + got.status().message());
  if (!*got) return Status::Ok();  // only when !claim: an instance nobody has started
  const Value& rec = **got;
  auto corrupt = [&](const std::string& why) {
    return Status::IOError("instance '" + instance_ + "': its program record (key " + k + ") is corrupted in the store: " + why +
                           "; use another --instance");
  };
  InstanceHeader theirs;
  if (rec.size() < sizeof theirs) return corrupt(fmt::format("{} bytes, shorter than its header", rec.size()));
  std::memcpy(&theirs, rec.data(), sizeof theirs);
  if (std::memcmp(theirs.magic, kInstanceMagic, 4) != 0) return corrupt("bad magic");
  if (rec.size() != sizeof theirs + theirs.name_bytes) return corrupt("size does not match its header");
  if (theirs.self != self_hash(rec, offsetof(InstanceHeader, self))) return corrupt("checksum mismatch");
  if (theirs.program == program_hash_) return Status::Ok();
  const std::string their_name = printable(std::span<const std::byte>(rec).subspan(sizeof theirs));
  return Status::InvalidArgument(fmt::format(
      "instance '{}' belongs to another program: '{}' (program hash {:016x}) started it; this is '{}' (program hash {:016x}). "
      "A record is used only by the program that wrote it: use another --instance (or omit it: the default id is derived "
      "from the program and its inputs), or flush the store",
      instance_, their_name, theirs.program, name, program_hash_));
}

namespace {

// The bytes before an inline value under key `k`: header, key, and padding
// so that the value starts 16-byte aligned in its record (which a store in
// this process hands to tasks as it is: they read floats and integers
// straight out of it). A value that does not fit beside them is chunked.
std::size_t inline_meta(const std::string& k) {
  const std::size_t used = sizeof(Header) + k.size();
  return used + (16 - used % 16) % 16;
}

// The header of a record under key `k` of a value of `size` bytes with
// `checksum`, written by program `program` (layout and padding: the caller's).
Header header_for(const std::string& k, std::uint64_t size, std::uint64_t checksum, std::uint64_t program) {
  Header h{};
  std::memcpy(h.magic, kMagic, 4);
  h.size = size;
  h.checksum = checksum;
  h.program = program;
  h.key_bytes = static_cast<std::uint32_t>(k.size());
  return h;
}

// Fills in the self field of a record whose first `meta_bytes` are its metadata.
void seal(Value& record, std::size_t meta_bytes) {
  const std::uint64_t self = self_hash(std::span<const std::byte>(record).first(meta_bytes), offsetof(Header, self));
  std::memcpy(record.data() + offsetof(Header, self), &self, 8);
}

}  // namespace

std::string LabelCodec::chunk_key(const std::string& k, std::uint64_t checksum, std::uint32_t i) {
  return fmt::format("{}:{:016x}:{}", k, checksum, i);
}

Result<WriteOutcome> LabelCodec::write(LabelId l, std::span<const std::byte> value, std::uint64_t* bytes_written, LabelValue* stored) {
  const std::string k = key(l);
  auto refused = [&](const Status& s) {
    return s.code() == Status::Code::kResourceExhausted
               ? Status::ResourceExhausted("the store refused label '" + program_.label(l).name + "': " + s.message())
               : Status::IOError("writing label '" + program_.label(l).name + "': " + s.message());
  };
  Header h = header_for(k, value.size(), hash(value.data(), value.size()), program_hash_);
  if (stored) *stored = LabelValue{LabelValue::State::kPresent, nullptr, {}, h.size, h.checksum};
  Value record;
  const std::size_t limit = store_.max_value_bytes();
  const std::size_t meta = inline_meta(k), pad = meta - sizeof(Header) - k.size();
  Result<bool> added = false;
  if (value.size() + meta <= limit) {
    h.layout = kInline;
    h.pad = static_cast<std::uint32_t>(pad);
    record.reserve(meta + value.size());
    append(record, h);
    append_text(record, k);
    record.resize(meta);  // the padding: zero bytes
    seal(record, meta);
    record.insert(record.end(), value.begin(), value.end());
    auto shared = std::make_shared<const Value>(std::move(record));
    added = store_.add_shared(k, shared);
    if (added.ok() && *added && stored) {
      stored->bytes = std::span<const std::byte>(*shared).subspan(meta);
      stored->owner = std::move(shared);
    }
  } else {
    // Chunks go under keys that name the value's checksum, so two writers of
    // the same value meet on the same chunks, and a different value (which
    // must not happen) can never be stitched from another's chunks.
    const std::size_t chunk = limit;
    ChunkTable table{static_cast<std::uint32_t>((value.size() + chunk - 1) / chunk), static_cast<std::uint32_t>(chunk)};
    std::vector<std::uint64_t> sums(table.chunks);
    for (std::uint32_t i = 0; i < table.chunks; ++i) {
      auto part = value.subspan(std::size_t{i} * chunk, std::min(chunk, value.size() - std::size_t{i} * chunk));
      sums[i] = hash(part.data(), part.size());
      auto part_added = store_.add(chunk_key(k, h.checksum, i), part);
      if (!part_added.ok()) return refused(part_added.status());
      if (bytes_written && *part_added) *bytes_written += part.size();
    }
    h.layout = kChunked;
    append(record, h);
    append_text(record, k);
    append(record, table);
    for (auto s : sums) append(record, s);
    seal(record, record.size());
    added = store_.add(k, record);
  }
  if (!added.ok()) return refused(added.status());
  if (*added) {
    if (bytes_written) *bytes_written += h.layout == kInline ? meta + value.size() : record.size();
    return WriteOutcome::kWritten;
  }
  // Someone wrote it first. Single assignment makes that fine only if it is
  // the same value (a retired label's record still holds its checksum).
  auto there = read(l);
  if (!there.ok()) return there.status();
  if (there->state == LabelValue::State::kAbsent)
    return Status::Internal("label '" + program_.label(l).name + "': add found a value that get cannot see");
  const std::uint64_t theirs = there->checksum;
  if (theirs == h.checksum && there->size == value.size()) return WriteOutcome::kAlreadyThere;
  if (!program_.task(program_.producer(l)).computes)
    return Status::InvalidArgument(fmt::format("input label '{}' already holds a different value in instance '{}' (checksum {:016x}, {} bytes; "
                                               "this one {:016x}, {} bytes): the instance was started with other inputs; use another --instance",
                                               program_.label(l).name, instance_, theirs, there->size, h.checksum, value.size()));
  return Status::Internal(fmt::format("label '{}' already holds a different value in the store (checksum {:016x}, {} bytes; "
                                      "this one {:016x}, {} bytes): a nondeterministic task, or an actor whose code changed under the same name",
                                      program_.label(l).name, theirs, there->size, h.checksum, value.size()));
}

Result<LabelValue> LabelCodec::read(LabelId l) {
  const std::string k = key(l);
  auto got = store_.get(k);
  if (!got.ok()) return Status::IOError("reading label '" + program_.label(l).name + "': " + got.status().message());
  return decode(l, k, std::move(*got));
}

Result<std::vector<LabelValue>> LabelCodec::read_many(std::span<const LabelId> labels) {
  std::vector<std::string> keys;
  for (LabelId l : labels) keys.push_back(key(l));
  auto got = store_.get_many(keys);
  if (!got.ok()) return Status::IOError("reading label '" + program_.label(labels.front()).name + "' and " + std::to_string(labels.size() - 1) +
                                        " more: " + got.status().message());
  std::vector<LabelValue> out;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    auto v = decode(labels[i], keys[i], std::move((*got)[i]));
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

Result<LabelValue> LabelCodec::decode(LabelId l, const std::string& k, SharedValue got) {
  const std::string& name = program_.label(l).name;
  if (!got) return LabelValue{};
  const Value& rec = *got;
  auto corrupt = [&](const std::string& why) {
    return Status::IOError("label '" + name + "' (key " + k + ") is corrupted in the store: " + why + "; refusing to use it");
  };
  if (rec.size() >= 4 && std::memcmp(rec.data(), kMagicV1, 4) == 0)
    return Status::IOError("label '" + name + "' (key " + k + ") holds a record of an older format (RFL1, which names neither its key " +
                           "nor its program), written by an older redflow; refusing to use it: use another --instance or flush the store");
  Header h;
  if (rec.size() < sizeof(Header)) return corrupt(fmt::format("{} bytes, shorter than its header", rec.size()));
  std::memcpy(&h, rec.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, 4) != 0) return corrupt("bad magic");
  if (h.key_bytes > rec.size() - sizeof(Header)) return corrupt("truncated key");
  if (h.pad >= 16 || (h.pad != 0 && h.layout != kInline)) return corrupt(fmt::format("{} bytes of padding after its key", h.pad));
  std::size_t meta = sizeof(Header) + h.key_bytes + h.pad;
  if (meta > rec.size()) return corrupt("truncated padding");
  ChunkTable table{};
  if (h.layout == kChunked) {
    if (rec.size() < meta + sizeof(ChunkTable)) return corrupt("truncated chunk table");
    std::memcpy(&table, rec.data() + meta, sizeof table);
    if (table.chunk_bytes == 0 || rec.size() != meta + sizeof(ChunkTable) + std::size_t{table.chunks} * 8 ||
        std::size_t{table.chunks} * table.chunk_bytes < h.size)
      return corrupt("inconsistent chunk table");
    meta = rec.size();
  } else if (h.layout == kRetired) {
    if (rec.size() != meta) return corrupt("a retired record with bytes after its key");
  } else if (h.layout != kInline) {
    return corrupt("unknown layout");
  }
  if (h.self != self_hash(std::span<const std::byte>(rec).first(meta), offsetof(Header, self)))
    return corrupt(h.layout == kInline ? "header checksum mismatch" : "manifest checksum mismatch");
  // A whole, valid record, but is it this key's, written by this program?
  const std::string_view found(reinterpret_cast<const char*>(rec.data() + sizeof(Header)), h.key_bytes);
  if (found != k) {
    const std::string other = label_of_key(found);
    return corrupt("it holds the record written for key " + printable(std::as_bytes(std::span(found))) +
                   (other.empty() ? std::string() : " (label '" + other + "')"));
  }
  if (h.program != program_hash_)
    return corrupt(fmt::format("it was written by another program (program hash {:016x}; this program's is {:016x})", h.program, program_hash_));
  LabelValue out{LabelValue::State::kPresent, nullptr, {}, h.size, h.checksum};
  if (h.layout == kRetired) {
    out.state = LabelValue::State::kRetired;
    return out;
  }
  if (h.layout == kInline) {
    if (rec.size() - meta != h.size) return corrupt(fmt::format("{} payload bytes, header says {}", rec.size() - meta, h.size));
    if (hash(rec.data() + meta, h.size) != h.checksum) return corrupt("checksum mismatch");
    out.bytes = std::span<const std::byte>(rec).subspan(meta);
    out.owner = std::move(got);
    return out;
  }
  const std::size_t sums_at = sizeof(Header) + h.key_bytes + sizeof(ChunkTable);
  auto whole = std::make_shared<Value>();
  whole->reserve(h.size);
  for (std::uint32_t i = 0; i < table.chunks; ++i) {
    std::uint64_t want;
    std::memcpy(&want, rec.data() + sums_at + 8 * std::size_t{i}, 8);
    auto part = store_.get(chunk_key(k, h.checksum, i));
    if (!part.ok()) return Status::IOError("reading label '" + name + "': " + part.status().message());
    if (!*part) {
      // The record changed meanwhile (only retiring replaces one, and its
      // chunks go after its record): read what is there now. A chunk missing
      // under a record that still lists it is damage.
      auto again = store_.get(k);
      if (again.ok() && *again && **again != rec) return decode(l, k, std::move(*again));
      return corrupt(fmt::format("chunk {} of {} is missing", i, table.chunks));
    }
    if (hash((*part)->data(), (*part)->size()) != want) return corrupt(fmt::format("chunk {} of {} fails its checksum", i, table.chunks));
    whole->insert(whole->end(), (*part)->begin(), (*part)->end());
  }
  if (whole->size() != h.size || hash(whole->data(), whole->size()) != h.checksum) return corrupt("reassembled value fails its checksum");
  out.bytes = *whole;
  out.owner = std::move(whole);
  return out;
}

Status LabelCodec::retire(LabelId l, const LabelValue& value) {
  const std::string k = key(l);
  Header h = header_for(k, value.size, value.checksum, program_hash_);
  h.layout = kRetired;
  Value record;
  append(record, h);
  append_text(record, k);
  seal(record, record.size());
  auto failed = [&](const Status& s) { return Status::IOError("retiring label '" + program_.label(l).name + "': " + s.message()); };
  auto replaced = store_.replace(k, record);
  if (!replaced.ok()) return failed(replaced.status());
  // The chunks a value of this size has in this store, if it has any.
  const std::size_t limit = store_.max_value_bytes();
  if (*replaced && value.size + inline_meta(k) > limit)
    for (std::uint32_t i = 0; i < (value.size + limit - 1) / limit; ++i)
      if (auto gone = store_.remove(chunk_key(k, value.checksum, i)); !gone.ok()) return failed(gone.status());
  return Status::Ok();
}

Result<std::uint64_t> LabelCodec::remove(LabelId l) {
  const std::string k = key(l);
  auto failed = [&](const Status& s) { return Status::IOError("removing label '" + program_.label(l).name + "': " + s.message()); };
  auto got = store_.get(k);
  if (!got.ok()) return failed(got.status());
  if (!*got) return std::uint64_t{0};
  // The chunk keys, from the record's table, before the record goes: the
  // record first, so no reader ever sees it with a chunk missing.
  std::vector<std::string> chunks;
  const Value& rec = **got;
  Header h;
  if (rec.size() >= sizeof h) {
    std::memcpy(&h, rec.data(), sizeof h);
    const std::size_t meta = sizeof(Header) + std::size_t{h.key_bytes};
    ChunkTable table{};
    if (std::memcmp(h.magic, kMagic, 4) == 0 && h.layout == kChunked && rec.size() >= meta + sizeof table) {
      std::memcpy(&table, rec.data() + meta, sizeof table);
      if (rec.size() == meta + sizeof table + std::size_t{table.chunks} * 8)
        for (std::uint32_t i = 0; i < table.chunks; ++i) chunks.push_back(chunk_key(k, h.checksum, i));
    }
  }
  std::uint64_t removed = 0;
  auto gone = store_.remove(k);
  if (!gone.ok()) return failed(gone.status());
  removed += *gone;
  for (const std::string& c : chunks) {
    auto part = store_.remove(c);
    if (!part.ok()) return failed(part.status());
    removed += *part;
  }
  return removed;
}

Result<std::uint64_t> LabelCodec::remove_instance_key() {
  auto gone = store_.remove(instance_key());
  if (!gone.ok()) return Status::IOError("removing the program record of instance '" + instance_ + "': " + gone.status().message());
  return std::uint64_t{*gone};
}

Result<bool> LabelCodec::claim(TaskId t, std::chrono::milliseconds lease) {
  auto got = store_.add_expiring(claim_key(t), {}, lease);
  if (!got.ok()) return Status::IOError("claiming task '" + program_.task(t).name + "': " + got.status().message());
  return *got;
}

Result<std::uint64_t> LabelCodec::remove_claim(TaskId t) {
  auto gone = store_.remove(claim_key(t));
  if (!gone.ok()) return Status::IOError("removing the claim of task '" + program_.task(t).name + "': " + gone.status().message());
  return std::uint64_t{*gone};
}

Result<bool> LabelCodec::present(LabelId l) {
  auto r = store_.exists(key(l));
  if (!r.ok()) return Status::IOError("checking label '" + program_.label(l).name + "': " + r.status().message());
  return *r;
}

}  // namespace redflow::rem
