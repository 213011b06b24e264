// WireWriter / WireReader: the little-endian field encoding every message of
// src/net/ uses (the envelope, the worker's and the driver's messages), with
// the tile protocol's rule: every length is checked against a limit and
// against the bytes left before anything is allocated or copied, and the
// first failure sticks (later reads return zeros) so a decoder reads its
// fields straight through and checks once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/net_error.hpp"

namespace redflow::net {

class WireWriter {
 public:
  explicit WireWriter(std::vector<std::byte>& out) : out_(out) {}
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u8(std::uint8_t v) { raw(&v, 1); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }

 private:
  std::vector<std::byte>& out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> in) : in_(in) {}
  bool failed() const { return error_ != NetError::kNone; }
  NetError error() const { return error_; }
  const std::string& what() const { return what_; }
  std::size_t left() const { return in_.size() - at_; }
  void fail(NetError e, std::string what) {
    if (failed()) return;
    error_ = e;
    what_ = std::move(what);
  }
  template <typename T>
  T get(const char* field) {
    T v{};
    if (failed()) return v;
    if (sizeof v > left()) {
      fail(NetError::kTruncated, std::string(field) + " needs " + std::to_string(sizeof v) + " bytes, " + std::to_string(left()) + " left");
      return v;
    }
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::uint8_t u8(const char* f) { return get<std::uint8_t>(f); }
  std::uint16_t u16(const char* f) { return get<std::uint16_t>(f); }
  std::uint32_t u32(const char* f) { return get<std::uint32_t>(f); }
  std::uint64_t u64(const char* f) { return get<std::uint64_t>(f); }
  // A count of elements of at least `unit` bytes each, checked against `limit` and the bytes left.
  std::size_t count(const char* field, std::size_t limit, std::size_t unit) {
    const std::uint32_t n = u32(field);
    if (failed()) return 0;
    if (n > limit) {
      fail(NetError::kOversized, std::string(field) + " of " + std::to_string(n) + " exceeds the limit of " + std::to_string(limit));
      return 0;
    }
    if (std::size_t{n} * unit > left()) {
      fail(NetError::kTruncated, std::string(field) + " of " + std::to_string(n) + " runs past the message's end");
      return 0;
    }
    return n;
  }
  std::string str(const char* field, std::size_t limit) {
    const std::size_t n = count(field, limit, 1);
    if (failed()) return {};
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);
    at_ += n;
    return s;
  }
  // A view of the next `n` bytes (into the message, not copied).
  std::span<const std::byte> bytes(const char* field, std::size_t n) {
    if (failed()) return {};
    if (n > left()) {
      fail(NetError::kTruncated, std::string(field) + " of " + std::to_string(n) + " bytes runs past the message's end");
      return {};
    }
    const auto view = in_.subspan(at_, n);
    at_ += n;
    return view;
  }
  // Fails with kTrailingBytes when bytes are left after the last field.
  void finish(const char* message) {
    if (!failed() && left() != 0) fail(NetError::kTrailingBytes, std::to_string(left()) + " bytes after the last field of " + message);
  }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  NetError error_ = NetError::kNone;
  std::string what_;
};

}  // namespace redflow::net
