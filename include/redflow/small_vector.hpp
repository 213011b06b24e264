// SmallVector: a vector of plain values (ids, edges) that keeps its first few
// elements inside itself and goes to the heap only past them. A graph node's
// edge lists almost always hold one or two entries (an actor has one output,
// an inner data node one producer); a std::vector spends 24 bytes and a
// 32-byte heap block on each, which made a 1,000,000-actor Graph cost 548
// bytes per actor. This one is 16 bytes with no heap block for up to
// 8 / sizeof(T) elements. Only for trivially copyable T: copies are memcpy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace redflow {

template <class T>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds plain values only");

 public:
  // Elements kept inline: as many as fit in the pointer they share space with.
  static constexpr std::uint32_t kInline = sizeof(T*) / sizeof(T) > 0 ? sizeof(T*) / sizeof(T) : 1;

  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  SmallVector(const std::vector<T>& values) { assign(values.data(), values.data() + values.size()); }  // NOLINT: drop-in for std::vector
  template <class It>
  SmallVector(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return capacity_; }
  T* data() { return on_heap() ? heap_ : inline_; }
  const T* data() const { return on_heap() ? heap_ : inline_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return data()[i];
  }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity_) grow(capacity_ * 2);
    data()[size_++] = value;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  void resize(std::size_t n, const T& value = T{}) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = static_cast<std::uint32_t>(n);
  }

  operator std::span<const T>() const { return {data(), size_}; }  // NOLINT: pass where a span is taken
  std::vector<T> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return capacity_ > kInline; }

  void assign(const T* first, const T* last) {
    clear();
    reserve(static_cast<std::size_t>(last - first));
    if (first != last) std::memcpy(data(), first, static_cast<std::size_t>(last - first) * sizeof(T));
    size_ = static_cast<std::uint32_t>(last - first);
  }
  void grow(std::size_t n) {
    T* bigger = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_ > 0) std::memcpy(bigger, data(), size_ * sizeof(T));
    release();
    heap_ = bigger;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void release() {
    if (on_heap()) ::operator delete(heap_);
    capacity_ = kInline;
  }
  void take(SmallVector& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else {
      std::memcpy(inline_, other.inline_, sizeof(inline_));
    }
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  union {
    T* heap_ = nullptr;
    T inline_[kInline];
  };
};

}  // namespace redflow
