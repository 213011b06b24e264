// Decodes an 8-bit RGB or RGBA PNG (what chromium's --screenshot writes)
// into its pixels, so a test can check a screenshot is not blank. Only the
// subset the tests meet: no interlace, no palette, no 16-bit channels.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace redflow::testing {

struct PngPixels {
  std::string error;  // empty when decoded
  std::uint32_t width = 0, height = 0;
  unsigned channels = 0;
  std::vector<std::uint8_t> bytes;  // rows of width * channels bytes
};

inline std::uint32_t png_be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

inline PngPixels png_failure(std::string why) {
  PngPixels p;
  p.error = std::move(why);
  return p;
}

inline PngPixels read_png(const std::string& path) {
  PngPixels out;
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (f.size() < 8 || !std::equal(kSignature, kSignature + 8, f.begin())) return png_failure(path + ": not a PNG file");
  std::vector<std::uint8_t> idat;
  int color_type = -1;
  for (std::size_t at = 8; at + 12 <= f.size();) {
    const std::uint32_t len = png_be32(&f[at]);
    if (at + 12 + len > f.size()) return png_failure(path + ": truncated chunk");
    const std::string type(reinterpret_cast<const char*>(&f[at + 4]), 4);
    const std::uint8_t* data = &f[at + 8];
    if (type == "IHDR") {
      out.width = png_be32(data);
      out.height = png_be32(data + 4);
      if (data[8] != 8 || data[12] != 0) return png_failure(path + ": not 8-bit non-interlaced");
      color_type = data[9];
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    }
    at += 12 + len;
  }
  if (color_type != 2 && color_type != 6) return png_failure(path + ": not RGB or RGBA");
  out.channels = color_type == 2 ? 3 : 4;
  const std::size_t stride = std::size_t{out.width} * out.channels;
  std::vector<std::uint8_t> raw((stride + 1) * out.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, idat.data(), idat.size()) != Z_OK || raw_size != raw.size())
    return png_failure(path + ": bad image data");
  out.bytes.resize(stride * out.height);
  const unsigned bpp = out.channels;
  for (std::uint32_t y = 0; y < out.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* src = &raw[y * (stride + 1) + 1];
    std::uint8_t* row = &out.bytes[y * stride];
    const std::uint8_t* up = y > 0 ? &out.bytes[(y - 1) * stride] : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? row[x - bpp] : 0, b = up ? up[x] : 0, c = (up && x >= bpp) ? up[x - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: return png_failure(path + ": bad filter type");
      }
      row[x] = static_cast<std::uint8_t>(src[x] + pred);
    }
  }
  return out;
}

// The share of the pixels that have the most common colour, and how many colours there are.
struct PngColours {
  double top_share = 1;
  std::size_t distinct = 0;
};

inline PngColours png_colours(const PngPixels& p) {
  std::map<std::uint32_t, std::size_t> counts;
  for (std::size_t i = 0; i + p.channels <= p.bytes.size(); i += p.channels)
    ++counts[std::uint32_t{p.bytes[i]} << 16 | std::uint32_t{p.bytes[i + 1]} << 8 | p.bytes[i + 2]];
  std::size_t top = 0;
  for (const auto& [colour, n] : counts) top = std::max(top, n);
  const std::size_t pixels = std::size_t{p.width} * p.height;
  return {pixels ? static_cast<double>(top) / static_cast<double>(pixels) : 1, counts.size()};
}

}  // namespace redflow::testing
