// Label values in a store: checksum, chunking, and the manifest that makes a
// chunked value appear atomically (docs/rem.md, "Key layout").
#include "rem/value_codec.hpp"

#include <xxhash.h>

#include <fmt/format.h>

#include <cstring>

namespace redflow::rem {

namespace {

// Every stored label value starts with this header.
constexpr char kMagic[4] = {'R', 'F', 'L', '1'};
constexpr std::uint32_t kInline = 0, kChunked = 1;
struct Header {
  char magic[4];
  std::uint32_t layout;     // kInline: payload follows; kChunked: a chunk table follows
  std::uint64_t size;       // payload bytes
  std::uint64_t checksum;   // XXH3 of the payload
  std::uint64_t self;       // XXH3 of the bytes above (and, when chunked, of the chunk table): a torn header is caught too
};
static_assert(sizeof(Header) == 32);
struct ChunkTable {
  std::uint32_t chunks;
  std::uint32_t chunk_bytes;
};

std::uint64_t hash(const void* p, std::size_t n) { return XXH3_64bits(p, n); }

// resize + memcpy, not insert(end, b, b + n): GCC 12 reports a false
// -Wstringop-overflow for the insert in some unity batches (TSan build).
template <typename T>
void append(Value& v, const T& x) {
  const std::size_t at = v.size();
  v.resize(at + sizeof(T));
  std::memcpy(v.data() + at, &x, sizeof(T));
}

}  // namespace

LabelCodec::LabelCodec(Store& store, const Program& program, std::string instance)
    : store_(store), program_(program), prefix_("rf:" + instance + ":") {}

std::string LabelCodec::key(LabelId l) const { return prefix_ + "L" + std::to_string(l); }

Result<WriteOutcome> LabelCodec::write(LabelId l, std::span<const std::byte> value, std::uint64_t* bytes_written) {
  const std::string k = key(l);
  auto refused = [&](const Status& s) {
    return s.code() == Status::Code::kResourceExhausted
               ? Status::ResourceExhausted("the store refused label '" + program_.label(l).name + "': " + s.message())
               : Status::IOError("writing label '" + program_.label(l).name + "': " + s.message());
  };
  Header h{};
  std::memcpy(h.magic, kMagic, 4);
  h.size = value.size();
  h.checksum = hash(value.data(), value.size());
  Value record;
  const std::size_t limit = store_.max_value_bytes();
  if (value.size() + sizeof(Header) <= limit) {
    h.layout = kInline;
    h.self = hash(&h, offsetof(Header, self));
    record.reserve(sizeof(Header) + value.size());
    append(record, h);
    record.insert(record.end(), value.begin(), value.end());
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
      auto added = store_.add(fmt::format("{}:{:016x}:{}", k, h.checksum, i), part);
      if (!added.ok()) return refused(added.status());
      if (bytes_written && *added) *bytes_written += part.size();
    }
    h.layout = kChunked;
    Value body;
    append(body, table);
    for (auto s : sums) append(body, s);
    Value self_input;
    append(self_input, h);
    self_input.resize(offsetof(Header, self));
    self_input.insert(self_input.end(), body.begin(), body.end());
    h.self = hash(self_input.data(), self_input.size());
    append(record, h);
    record.insert(record.end(), body.begin(), body.end());
  }
  auto added = store_.add(k, record);
  if (!added.ok()) return refused(added.status());
  if (*added) {
    if (bytes_written) *bytes_written += record.size();
    return WriteOutcome::kWritten;
  }
  // Someone wrote it first. Single assignment makes that fine only if it is the same value.
  auto there = read(l);
  if (!there.ok()) return there.status();
  if (!*there) return Status::Internal("label '" + program_.label(l).name + "': add found a value that get cannot see");
  const std::uint64_t theirs = hash((*there)->data(), (*there)->size());
  if (theirs != h.checksum || (*there)->size() != value.size())
    return Status::Internal(fmt::format("label '{}' already holds a different value in the store (checksum {:016x}, {} bytes; "
                                        "this one {:016x}, {} bytes): a nondeterministic task, or different inputs under one instance id",
                                        program_.label(l).name, theirs, (*there)->size(), h.checksum, value.size()));
  return WriteOutcome::kAlreadyThere;
}

Result<std::optional<Value>> LabelCodec::read(LabelId l) {
  const std::string k = key(l);
  const std::string& name = program_.label(l).name;
  auto got = store_.get(k);
  if (!got.ok()) return Status::IOError("reading label '" + name + "': " + got.status().message());
  if (!*got) return std::optional<Value>{};
  const Value& rec = **got;
  auto corrupt = [&](const std::string& why) {
    return Status::IOError("label '" + name + "' (key " + k + ") is corrupted in the store: " + why + "; refusing to use it");
  };
  Header h;
  if (rec.size() < sizeof(Header)) return corrupt(fmt::format("{} bytes, shorter than its header", rec.size()));
  std::memcpy(&h, rec.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, 4) != 0) return corrupt("bad magic");
  if (h.layout == kInline) {
    if (h.self != hash(&h, offsetof(Header, self))) return corrupt("header checksum mismatch");
    if (rec.size() - sizeof(Header) != h.size) return corrupt(fmt::format("{} payload bytes, header says {}", rec.size() - sizeof(Header), h.size));
    if (hash(rec.data() + sizeof(Header), h.size) != h.checksum) return corrupt("checksum mismatch");
    return std::optional<Value>(Value(rec.begin() + sizeof(Header), rec.end()));
  }
  if (h.layout != kChunked) return corrupt("unknown layout");
  if (rec.size() < sizeof(Header) + sizeof(ChunkTable)) return corrupt("truncated chunk table");
  ChunkTable table;
  std::memcpy(&table, rec.data() + sizeof(Header), sizeof table);
  if (table.chunk_bytes == 0 || rec.size() != sizeof(Header) + sizeof(ChunkTable) + std::size_t{table.chunks} * 8 ||
      std::size_t{table.chunks} * table.chunk_bytes < h.size)
    return corrupt("inconsistent chunk table");
  {
    Value self_input(rec.begin(), rec.begin() + offsetof(Header, self));
    self_input.insert(self_input.end(), rec.begin() + sizeof(Header), rec.end());
    if (h.self != hash(self_input.data(), self_input.size())) return corrupt("manifest checksum mismatch");
  }
  Value out;
  out.reserve(h.size);
  for (std::uint32_t i = 0; i < table.chunks; ++i) {
    std::uint64_t want;
    std::memcpy(&want, rec.data() + sizeof(Header) + sizeof(ChunkTable) + 8 * i, 8);
    auto part = store_.get(fmt::format("{}:{:016x}:{}", k, h.checksum, i));
    if (!part.ok()) return Status::IOError("reading label '" + name + "': " + part.status().message());
    if (!*part) return corrupt(fmt::format("chunk {} of {} is missing", i, table.chunks));
    if (hash((*part)->data(), (*part)->size()) != want) return corrupt(fmt::format("chunk {} of {} fails its checksum", i, table.chunks));
    out.insert(out.end(), (*part)->begin(), (*part)->end());
  }
  if (out.size() != h.size || hash(out.data(), out.size()) != h.checksum) return corrupt("reassembled value fails its checksum");
  return std::optional<Value>(std::move(out));
}

Result<bool> LabelCodec::present(LabelId l) {
  auto r = store_.exists(key(l));
  if (!r.ok()) return Status::IOError("checking label '" + program_.label(l).name + "': " + r.status().message());
  return *r;
}

}  // namespace redflow::rem
