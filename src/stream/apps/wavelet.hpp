// The paper's first application (docs/stream-apps.md): a wavelet image
// encoder of about thirty light operators, so cheap per token that a run is
// dominated by moving tokens (communication-bound, the case where placement
// matters). An 8-bit grayscale PGM is read, transformed by a 3-level 2-D
// integer Haar (S-transform) lifting wavelet, quantised and zero-run coded per
// subband, and packed into one byte stream that a `collect` gathers. The
// packer interleaves the bands by rows, so the output is written while the
// image streams in.
//
// The same encoder is also written as ordinary loops
// (wavelet_encode_sequential) and must give the very same bytes; a decoder
// inverts it (lossless for step=1), which shows the transform is real.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream {

// An 8-bit grayscale image, row-major.
struct GrayImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
  bool operator==(const GrayImage&) const = default;
};

// Sides accepted by read_pgm: at least 8 (so three levels have something to
// halve), at most 16384 (the padded size must fit the 16-bit stream header).
inline constexpr int kPgmMinSide = 8, kPgmMaxSide = 16384;

// A binary PGM (P5, maxval <= 255; comments allowed in the header). Named
// errors: the file missing, bad magic, bad size, maxval > 255, truncated data.
Result<GrayImage> read_pgm(const std::string& path);
Status write_pgm(const GrayImage& image, const std::string& path);

// The operators, all with 8-byte tokens (docs/stream-apps.md):
//   wavelet.source path=FILE levels=L   the padded image, 4 int16 samples a token
//   wavelet.hlift                       rows: (s, d) of adjacent samples -> L, H
//   wavelet.vlift                       columns: (s, d) of adjacent rows -> *L, *H
//   wavelet.quant step=Q                deadzone quantiser
//   wavelet.rle                         zero-run coding of each band row: varint (run, value) pairs packed in tokens
//   wavelet.pack levels=L step=Q        file header, then the bands' rows interleaved in a fixed order
// Every stream starts with a header token saying its band's size, so no
// operator needs the image's size as an arg and the DOT form stays the same
// for any image.
void add_wavelet_operators(OperatorRegistry& registry);

// Operator instances of the program for `levels`: 9 * levels + 5 (32 for 3).
std::size_t wavelet_operator_count(int levels = 3);
// The collect instance whose bytes are the encoded image.
inline constexpr const char* kWaveletOutput = "encoded";

// The encoder as a stream program. `levels` 1..6; `step` >= 1 is the
// quantiser step of the detail subbands (the coarsest LL band is kept exact).
// Reads the PGM once to name a bad file before anything runs. The path must
// not contain whitespace or quotes (it is an operator arg).
Result<Program> wavelet_program(const OperatorRegistry& registry, const std::string& pgm_path, int levels = 3, int step = 1);
// The same program in the DOT form (examples/streams/wavelet.dot).
std::string wavelet_dot(const std::string& pgm_path, int levels = 3, int step = 1);

// The encoder as plain loops: exactly the bytes the program's collect gathers.
Bytes wavelet_encode_sequential(const GrayImage& image, int levels = 3, int step = 1);
// Inverts an encoding: the original image when step was 1, an approximation
// (midpoint dequantisation) otherwise. Named errors for malformed input.
Result<GrayImage> wavelet_decode_sequential(const Bytes& encoded);

}  // namespace redflow::stream
