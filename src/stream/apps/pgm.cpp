// Binary PGM files (wavelet.hpp: read_pgm, write_pgm), the wavelet
// encoder's input: 8-bit grayscale, comments allowed in the header, every
// way a file can be wrong named.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

#include "stream/apps/wavelet.hpp"

namespace redflow::stream {

Result<GrayImage> read_pgm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("PGM '{}': cannot open it (missing file?)", path));
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 2 || data[0] != 'P' || data[1] != '5') {
    std::string magic;
    for (std::size_t i = 0; i < std::min<std::size_t>(2, data.size()); ++i)
      magic += std::isprint(static_cast<unsigned char>(data[i])) ? std::string(1, data[i]) : fmt::format("\\x{:02x}", static_cast<unsigned char>(data[i]));
    return Status::InvalidArgument(fmt::format("PGM '{}': bad magic '{}' (expected P5, a binary 8-bit grayscale PGM)", path, magic));
  }
  std::size_t pos = 2;
  // A header number after whitespace and # comments; -1 when there is none.
  auto number = [&]() -> long {
    for (;;) {
      while (pos < data.size() && std::isspace(static_cast<unsigned char>(data[pos]))) ++pos;
      if (pos < data.size() && data[pos] == '#') {
        while (pos < data.size() && data[pos] != '\n') ++pos;
        continue;
      }
      break;
    }
    long v = -1;
    for (int digits = 0; pos < data.size() && std::isdigit(static_cast<unsigned char>(data[pos])); ++pos, ++digits)
      v = digits >= 9 ? 999999999 : (v < 0 ? 0 : v) * 10 + (data[pos] - '0');  // saturate: far beyond any limit
    return v;
  };
  const long w = number(), h = number(), maxval = number();
  if (w < 0 || h < 0 || maxval < 0) return Status::InvalidArgument(fmt::format("PGM '{}': truncated header (expected width, height and maxval)", path));
  if (maxval > 255) return Status::InvalidArgument(fmt::format("PGM '{}': maxval {} > 255 (16-bit PGM is not supported)", path, maxval));
  if (maxval == 0) return Status::InvalidArgument(fmt::format("PGM '{}': maxval 0", path));
  if (w < kPgmMinSide || h < kPgmMinSide || w > kPgmMaxSide || h > kPgmMaxSide)
    return Status::InvalidArgument(fmt::format("PGM '{}': bad size {}x{} (each side must be {}..{})", path, w, h, kPgmMinSide, kPgmMaxSide));
  if (pos >= data.size() || !std::isspace(static_cast<unsigned char>(data[pos])))
    return Status::InvalidArgument(fmt::format("PGM '{}': truncated data: 0 of {} pixel bytes", path, w * h));
  ++pos;  // the single whitespace before the pixels
  const std::size_t need = static_cast<std::size_t>(w) * h;
  if (data.size() - pos < need)
    return Status::InvalidArgument(fmt::format("PGM '{}': truncated data: {} of {} pixel bytes", path, data.size() - pos, need));
  GrayImage img{static_cast<int>(w), static_cast<int>(h), std::vector<std::uint8_t>(data.begin() + pos, data.begin() + pos + need)};
  return img;
}

Status write_pgm(const GrayImage& image, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << "P5\n" << image.width << " " << image.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
  if (!out) return Status::IOError(fmt::format("PGM '{}': cannot write it", path));
  return Status::Ok();
}

}  // namespace redflow::stream
