// The wavelet encoder as plain loops, and its decoder (wavelet.hpp):
// whole planes transformed level by level, then each band row coded and
// written in the packer's order. They share the lifting step, the
// quantiser, the pair coder and the file header with the operators
// (wavelet_codec.hpp), so equal bytes from the two mean equal arithmetic.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <utility>

#include "stream/apps/wavelet.hpp"
#include "stream/apps/wavelet_codec.hpp"

namespace redflow::stream {
namespace {

using namespace wavelet_codec;

// A band or image of the sequential codec, in ints: wide enough for the
// decoder's intermediate values however coarse the step.
struct Plane {
  int w = 0, h = 0;
  std::vector<int> v;
  int& at(int x, int y) { return v[static_cast<std::size_t>(y) * w + x]; }
};

Plane plane(int w, int h) { return Plane{w, h, std::vector<int>(static_cast<std::size_t>(w) * h)}; }

void hlift_plane(Plane& in, Plane& lo, Plane& hi) {
  lo = plane(in.w / 2, in.h), hi = plane(in.w / 2, in.h);
  std::int16_t s, d;
  for (int y = 0; y < in.h; ++y)
    for (int x = 0; x < lo.w; ++x) {
      lift(in.at(2 * x, y), in.at(2 * x + 1, y), s, d);
      lo.at(x, y) = s, hi.at(x, y) = d;
    }
}
void vlift_plane(Plane& in, Plane& lo, Plane& hi) {
  lo = plane(in.w, in.h / 2), hi = plane(in.w, in.h / 2);
  std::int16_t s, d;
  for (int y = 0; y < lo.h; ++y)
    for (int x = 0; x < in.w; ++x) {
      lift(in.at(x, 2 * y), in.at(x, 2 * y + 1), s, d);
      lo.at(x, y) = s, hi.at(x, y) = d;
    }
}
Plane hunlift_plane(Plane& lo, Plane& hi) {
  Plane out = plane(lo.w * 2, lo.h);
  for (int y = 0; y < lo.h; ++y)
    for (int x = 0; x < lo.w; ++x) unlift(lo.at(x, y), hi.at(x, y), out.at(2 * x, y), out.at(2 * x + 1, y));
  return out;
}
Plane vunlift_plane(Plane& lo, Plane& hi) {
  Plane out = plane(lo.w, lo.h * 2);
  for (int y = 0; y < lo.h; ++y)
    for (int x = 0; x < lo.w; ++x) unlift(lo.at(x, y), hi.at(x, y), out.at(x, 2 * y), out.at(x, 2 * y + 1));
  return out;
}

}  // namespace

Bytes wavelet_encode_sequential(const GrayImage& image, int levels, int step) {
  int wp = 0, hp = 0;
  const auto samples = padded_samples(image, levels, wp, hp);
  Plane cur = plane(wp, hp);
  std::copy(samples.begin(), samples.end(), cur.v.begin());
  std::vector<std::array<Plane, 3>> detail(levels + 1);  // [level]: LH, HL, HH
  for (int l = 1; l <= levels; ++l) {
    Plane lo, hi, ll;
    hlift_plane(cur, lo, hi);
    vlift_plane(lo, ll, detail[l][0]);
    vlift_plane(hi, detail[l][1], detail[l][2]);
    cur = std::move(ll);
  }
  const auto fh = file_header(levels, step, image.width, image.height);
  Bytes out(reinterpret_cast<const std::byte*>(fh.data()), reinterpret_cast<const std::byte*>(fh.data() + fh.size()));
  auto code_row = [&](const Plane& band, int y, int q) {
    PairCoder coder;
    auto emit = [&](const char* token) { out.insert(out.end(), reinterpret_cast<const std::byte*>(token), reinterpret_cast<const std::byte*>(token + kToken)); };
    std::uint32_t run = 0;
    for (int x = 0; x < band.w; ++x) {
      const int c = quantise(band.v[static_cast<std::size_t>(y) * band.w + x], q);
      if (c == 0) {
        ++run;
        continue;
      }
      coder.pair(run, c, emit);
      run = 0;
    }
    if (run > 0) coder.pair(run - 1, 0, emit);
    coder.flush(emit);
  };
  // The packer's order: per row of the coarsest band, each band's rows beside it.
  std::vector<std::pair<const Plane*, int>> bands{{&cur, 1}};
  for (int l = levels; l >= 1; --l)
    for (const Plane& band : detail[l]) bands.emplace_back(&band, step);
  for (int g = 0; g < cur.h; ++g)
    for (const auto& [band, q] : bands) {
      const int per = band->h / cur.h;
      for (int y = g * per; y < (g + 1) * per; ++y) code_row(*band, y, q);
    }
  return out;
}

Result<GrayImage> wavelet_decode_sequential(const Bytes& encoded) {
  const std::string_view enc(reinterpret_cast<const char*>(encoded.data()), encoded.size());
  if (enc.size() < 2 * kToken || std::memcmp(enc.data(), kMagic, 4) != 0) return Status::InvalidArgument("wavelet decode: no RFW2 header");
  const int levels = static_cast<unsigned char>(enc[4]);
  const int step = static_cast<int>(get_le(enc.data() + 6, 2));
  const int width = static_cast<int>(get_le(enc.data() + 8, 4)), height = static_cast<int>(get_le(enc.data() + 12, 4));
  if (levels < 1 || levels > kMaxLevels || step < 1 || step > kMaxStep || width < kPgmMinSide || height < kPgmMinSide || width > kPgmMaxSide ||
      height > kPgmMaxSide)
    return Status::InvalidArgument(fmt::format("wavelet decode: bad header (levels {}, step {}, {}x{})", levels, step, width, height));
  const int wp = padded_width(width, levels), hp = padded_height(height, levels);
  std::size_t pos = 2 * kToken;
  auto varint = [&](std::uint32_t& v) -> Status {
    v = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= enc.size()) return Status::InvalidArgument(fmt::format("wavelet decode: truncated at byte {}", pos));
      if (shift > 28) return Status::InvalidArgument(fmt::format("wavelet decode: overlong number at byte {}", pos));
      const auto b = static_cast<unsigned char>(enc[pos++]);
      v |= static_cast<std::uint32_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return Status::Ok();
    }
  };
  auto row = [&](Plane& p, int y, int q) -> Status {
    int* v = p.v.data() + static_cast<std::size_t>(y) * p.w;
    std::size_t n = 0;
    const auto w = static_cast<std::size_t>(p.w);
    while (n < w) {
      std::uint32_t run = 0, zz = 0;
      REDFLOW_RETURN_IF_ERROR(varint(run));
      REDFLOW_RETURN_IF_ERROR(varint(zz));
      if (run >= w - n) return Status::InvalidArgument(fmt::format("wavelet decode: a zero run overflows its row at byte {}", pos));
      n += run;
      v[n++] = dequantise(static_cast<int>(zz >> 1) ^ -static_cast<int>(zz & 1), q);
    }
    for (; pos % kToken != 0; ++pos)  // the row's last token's padding
      if (pos >= enc.size() || enc[pos] != 0) return Status::InvalidArgument(fmt::format("wavelet decode: bad padding at byte {}", pos));
    return Status::Ok();
  };
  Plane cur = plane(wp >> levels, hp >> levels);
  std::vector<std::array<Plane, 3>> detail(levels + 1);
  std::vector<std::pair<Plane*, int>> bands{{&cur, 1}};
  for (int l = levels; l >= 1; --l)
    for (Plane& b : detail[l]) {
      b = plane(wp >> l, hp >> l);
      bands.emplace_back(&b, step);
    }
  for (int g = 0; g < cur.h; ++g)
    for (const auto& [band, q] : bands) {
      const int per = band->h / cur.h;
      for (int y = g * per; y < (g + 1) * per; ++y) REDFLOW_RETURN_IF_ERROR(row(*band, y, q));
    }
  if (pos != enc.size()) return Status::InvalidArgument(fmt::format("wavelet decode: {} bytes after the last band", enc.size() - pos));
  for (int l = levels; l >= 1; --l) {
    Plane lo = vunlift_plane(cur, detail[l][0]);
    Plane hi = vunlift_plane(detail[l][1], detail[l][2]);
    cur = hunlift_plane(lo, hi);
  }
  GrayImage img{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height)};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) img.pixels[static_cast<std::size_t>(y) * width + x] = static_cast<std::uint8_t>(std::clamp(cur.at(x, y), 0, 255));
  return img;
}

}  // namespace redflow::stream
