// The one field codec of every byte format redflow sends: the tile
// protocol's frames (src/runtime/tile_protocol.*), the envelope and the
// HELLO/WELCOME/REFUSED bodies (src/net/), the SPITS bodies
// (src/spits/net_messages.*) and the stream bodies
// (src/stream/stream_messages.*). Fixed-width fields are little-endian; a
// string, a byte run or a list is a u32 count followed by its elements.
//
// Writer appends fields to a byte vector. Reader is a bounds-checked cursor
// over bytes that came from somewhere else: every count is checked against
// a limit and against the bytes left before anything is allocated or
// copied, a boolean other than 0 or 1 is malformed, and the first failure
// sticks (later reads return zeros), so a decoder reads its fields straight
// through and checks once at the end; finish() refuses bytes after the last
// field. Error names what rule the bytes broke, status() makes the
// "<format>: <error>: <what>" InvalidArgument a caller returns.
//
// Both classes are plain values: one thread uses an instance at a time.
// Depends on nothing but redflow/status.hpp, so every layer may include it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redflow/status.hpp"

namespace redflow::wire {

static_assert(std::endian::native == std::endian::little, "the wire codec copies fields as they lie in memory: a little-endian host");

enum class Error {
  kNone,
  kTruncated,      // fewer bytes than a header or a field needs
  kBadMagic,       // not the format's magic (not a tile protocol frame, not a redflow envelope)
  kWrongVersion,   // a version this build does not speak
  kOversized,      // a length or a message beyond the format's limits
  kUnknownKind,    // a kind byte no message has
  kMalformed,      // a field out of range (a bool not 0/1, a bad status code), or the wrong number of parts
  kTrailingBytes,  // bytes after the last field
};

inline const char* error_name(Error e) {
  switch (e) {
    case Error::kNone: return "none";
    case Error::kTruncated: return "truncated";
    case Error::kBadMagic: return "bad magic";
    case Error::kWrongVersion: return "wrong version";
    case Error::kOversized: return "oversized";
    case Error::kUnknownKind: return "unknown kind";
    case Error::kMalformed: return "malformed";
    case Error::kTrailingBytes: return "trailing bytes";
  }
  return "unknown error";
}

// "<format>: <error name>: <what>" as InvalidArgument, e.g.
// "tile protocol: truncated: data node slot needs 4 bytes, 2 left".
inline Status status(const char* format, Error e, const std::string& what) {
  return Status::InvalidArgument(std::string(format) + ": " + error_name(e) + ": " + what);
}

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u8(std::uint8_t v) { raw(&v, 1); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  // A u32 count, then the bytes.
  void bytes(std::span<const std::byte> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    raw(b.data(), b.size());
  }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }

 protected:
  std::vector<std::byte>& out() { return out_; }

 private:
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  // `whole` names what the bytes are in a failure's text ("a count ... runs
  // past the <whole>'s end"): "message" for a body, "frame" for a frame.
  explicit Reader(std::span<const std::byte> in, const char* whole = "message") : in_(in), whole_(whole) {}

  bool failed() const { return error_ != Error::kNone; }
  Error error() const { return error_; }
  const std::string& what() const { return what_; }
  std::size_t left() const { return in_.size() - at_; }
  // Records the first failure; later ones are dropped (the first is the cause).
  void fail(Error e, std::string what) {
    if (failed()) return;
    error_ = e;
    what_ = std::move(what);
  }

  // The text of a kTruncated failure. Out of line and cold: inlined into
  // every get<T>, GCC 12 at -O3 reports a false -Warray-bounds inside the
  // string concatenation.
  [[gnu::noinline, gnu::cold]] static std::string truncated_what(const char* field, std::size_t n, std::size_t left) {
    std::string s(field);
    s += " needs ";
    s += std::to_string(n);
    s += " bytes, ";
    s += std::to_string(left);
    s += " left";
    return s;
  }

  // Copies the next `n` bytes into `p` (zeros once failed).
  bool take(void* p, std::size_t n, const char* field) {
    if (!failed() && n > left())
      fail(Error::kTruncated, truncated_what(field, n, left()));
    if (failed()) {
      if (n != 0) std::memset(p, 0, n);
      return false;
    }
    if (n != 0) std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  template <typename T>
  T get(const char* field) {
    T v{};
    take(&v, sizeof v, field);
    return v;
  }
  std::uint8_t u8(const char* f) { return get<std::uint8_t>(f); }
  std::uint16_t u16(const char* f) { return get<std::uint16_t>(f); }
  std::uint32_t u32(const char* f) { return get<std::uint32_t>(f); }
  std::uint64_t u64(const char* f) { return get<std::uint64_t>(f); }
  double f64(const char* f) { return get<double>(f); }
  bool boolean(const char* field) {
    const std::uint8_t v = u8(field);
    if (v > 1) fail(Error::kMalformed, std::string(field) + " is " + std::to_string(v) + ", not 0 or 1");
    return v == 1;
  }

  // A u32 count of elements of at least `unit` bytes each, checked against
  // `limit` and against the bytes left (0 once failed).
  std::size_t count(const char* field, std::size_t limit, std::size_t unit) {
    const std::uint32_t n = u32(field);
    if (failed()) return 0;
    if (n > limit) {
      fail(Error::kOversized, std::string(field) + " of " + std::to_string(n) + " exceeds the limit of " + std::to_string(limit));
      return 0;
    }
    if (std::size_t{n} * unit > left()) {
      fail(Error::kTruncated, std::string(field) + " of " + std::to_string(n) + " runs past the " + whole_ + "'s end");
      return 0;
    }
    return n;
  }
  // A counted byte run (Writer::bytes), as a view into the input, not copied.
  std::span<const std::byte> bytes(const char* field, std::size_t limit) {
    const std::size_t n = count(field, limit, 1);
    if (failed()) return {};
    const auto view = in_.subspan(at_, n);
    at_ += n;
    return view;
  }
  // A counted string (Writer::str).
  std::string str(const char* field, std::size_t limit) {
    const auto b = bytes(field, limit);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  // A view of the next `n` bytes, whose length the caller knows (not counted).
  std::span<const std::byte> view(const char* field, std::size_t n) {
    if (failed()) return {};
    if (n > left()) {
      fail(Error::kTruncated, std::string(field) + " of " + std::to_string(n) + " bytes runs past the " + whole_ + "'s end");
      return {};
    }
    const auto v = in_.subspan(at_, n);
    at_ += n;
    return v;
  }
  // Fails with kTrailingBytes when bytes are left after the last field of `what`.
  void finish(const char* what) {
    if (!failed() && left() != 0) fail(Error::kTrailingBytes, std::to_string(left()) + " bytes after the last field of " + what);
  }

 private:
  std::span<const std::byte> in_;
  const char* whole_;
  std::size_t at_ = 0;
  Error error_ = Error::kNone;
  std::string what_;
};

}  // namespace redflow::wire
