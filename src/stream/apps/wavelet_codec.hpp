// The arithmetic and token layouts the wavelet encoder's operators
// (wavelet.cpp) share with its sequential encoder and decoder: written once,
// so equal bytes from the two mean equal arithmetic, not two lookalikes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "stream/apps/wavelet.hpp"

namespace redflow::stream::wavelet_codec {

inline constexpr std::size_t kToken = 8;
inline constexpr int kPerToken = 4;         // int16 samples in a token
inline constexpr int kMaxLevels = 6;
inline constexpr int kMaxStep = 32767;  // coefficients are int16
inline constexpr char kMagic[4] = {'R', 'F', 'W', '2'};

struct Samples {
  std::int16_t v[kPerToken];
};
static_assert(sizeof(Samples) == kToken);

// The first token of every stream: its band's (padded) size, and the original
// image's, which the packer puts in the file header.
struct BandHeader {
  std::uint16_t width, height, image_width, image_height;
};
static_assert(sizeof(BandHeader) == kToken);

inline Samples to_token(const BandHeader& h) {
  Samples t;
  std::memcpy(&t, &h, kToken);
  return t;
}
inline BandHeader to_header(const Samples& t) {
  BandHeader h;
  std::memcpy(&h, &t, kToken);
  return h;
}

// The token before each coded row on an rle stream: how many coded tokens
// the row took (the packer copies them and drops this one).
inline Samples count_token(std::uint64_t n) {
  Samples t;
  std::memcpy(&t, &n, kToken);
  return t;
}
inline std::uint64_t to_count(const Samples& t) {
  std::uint64_t n;
  std::memcpy(&n, &t, kToken);
  return n;
}

// Width a multiple of 2^(levels+2) and height of 2^levels: every band at every
// level then has an even size and rows of whole 4-sample tokens, so no
// operator has to split a token across rows.
inline int padded_width(int w, int levels) {
  const int m = 1 << (levels + 2);
  return (w + m - 1) / m * m;
}
inline int padded_height(int h, int levels) {
  const int m = 1 << levels;
  return (h + m - 1) / m * m;
}

// Pads by repeating the last column and row (smooth, so few large
// coefficients); the decoder crops them off again.
inline std::vector<std::int16_t> padded_samples(const GrayImage& img, int levels, int& wp, int& hp) {
  wp = padded_width(img.width, levels);
  hp = padded_height(img.height, levels);
  std::vector<std::int16_t> out(static_cast<std::size_t>(wp) * hp);
  for (int y = 0; y < hp; ++y)
    for (int x = 0; x < wp; ++x)
      out[static_cast<std::size_t>(y) * wp + x] = img.pixels[static_cast<std::size_t>(std::min(y, img.height - 1)) * img.width + std::min(x, img.width - 1)];
  return out;
}

// Haar S-transform as one lifting step: predict d = odd - even, update
// s = even + floor(d / 2). Integer and exactly invertible (unlift).
inline void lift(int even, int odd, std::int16_t& s, std::int16_t& d) {
  const int dd = odd - even;
  d = static_cast<std::int16_t>(dd);
  s = static_cast<std::int16_t>(even + (dd >> 1));
}
inline void unlift(int s, int d, int& even, int& odd) {
  even = s - (d >> 1);
  odd = d + even;
}

// Deadzone quantiser: truncation toward zero, so small coefficients become
// the zeros the run-length coder feeds on.
inline std::int16_t quantise(int v, int step) { return static_cast<std::int16_t>(v / step); }
inline int dequantise(int q, int step) { return q == 0 ? 0 : (q > 0 ? q * step + step / 2 : q * step - step / 2); }

inline void put_le(char* p, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline std::uint32_t get_le(const char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// The entropy-ish code of a band row: (zero run, value) pairs, each as two
// varints (LEB128; the value zigzagged), packed into 8-byte tokens and the
// row's last token padded with zero bytes. Tokens stay whole and the decoder
// needs no lengths: it knows each row's width and skips to the next token.
class PairCoder {
 public:
  template <typename Emit>
  void pair(std::uint32_t run, int value, Emit&& emit) {
    varint(run, emit);
    varint((static_cast<std::uint32_t>(value) << 1) ^ static_cast<std::uint32_t>(value >> 31), emit);
  }
  // The bytes of a token begun but not yet emitted (a checkpoint's state).
  template <typename Writer>
  void save(Writer& w) const {
    w.value(buf_);
    w.value(n_);
  }
  template <typename Reader>
  void load(Reader& r) {
    r.value(buf_);
    r.value(n_);
    if (n_ >= kToken) throw std::runtime_error("a pair coder's saved state holds " + std::to_string(n_) + " bytes of an 8-byte token");
  }
  template <typename Emit>
  void flush(Emit&& emit) {
    if (n_ == 0) return;
    while (n_ < kToken) buf_[n_++] = 0;
    emit(buf_.data());
    n_ = 0;
  }

 private:
  template <typename Emit>
  void varint(std::uint32_t v, Emit& emit) {
    do {
      buf_[n_++] = static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v >>= 7;
      if (n_ == kToken) emit(buf_.data()), n_ = 0;
    } while (v != 0);
  }
  std::array<char, kToken> buf_{};
  std::size_t n_ = 0;
};

// The two tokens the packer writes first: magic, levels, step; image size.
inline std::array<char, 2 * kToken> file_header(int levels, int step, int width, int height) {
  std::array<char, 2 * kToken> h{};
  std::memcpy(h.data(), kMagic, 4);
  h[4] = static_cast<char>(levels);
  put_le(h.data() + 6, static_cast<std::uint32_t>(step), 2);
  put_le(h.data() + 8, static_cast<std::uint32_t>(width), 4);
  put_le(h.data() + 12, static_cast<std::uint32_t>(height), 4);
  return h;
}

}  // namespace redflow::stream::wavelet_codec
