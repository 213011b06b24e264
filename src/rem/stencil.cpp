// The stencil as a REM program: tasks that advance a tile by `depth` steps
// and produce the tile and strips `depth` cells deep along its sides and
// corners, so a neighbour reads a few rows or columns, not a whole tile.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "rem/stencil.hpp"

namespace redflow::rem::stencil {

namespace {

// A tile's parts: the tile, its four side strips and (deeper than one step)
// its four corners, each `depth` cells deep.
enum Part { kTile, kNorth, kSouth, kWest, kEast, kNorthWest, kNorthEast, kSouthWest, kSouthEast };
const char* const kPartName[] = {"u", "n", "s", "w", "e", "nw", "ne", "sw", "se"};

std::string label_name(int part, std::size_t t, std::size_t i, std::size_t j) {
  return fmt::format("{}{}_{}_{}", kPartName[part], t, i, j);
}

// Where a part lies in its tile (h x w cells, strips k deep).
struct Rect {
  std::size_t r0, c0, rows, cols;
};
Rect part_rect(int part, std::size_t h, std::size_t w, std::size_t k) {
  switch (part) {
    case kNorth: return {0, 0, k, w};
    case kSouth: return {h - k, 0, k, w};
    case kWest: return {0, 0, h, k};
    case kEast: return {0, w - k, h, k};
    case kNorthWest: return {0, 0, k, k};
    case kNorthEast: return {0, w - k, k, k};
    case kSouthWest: return {h - k, 0, k, k};
    case kSouthEast: return {h - k, w - k, k, k};
    default: return {0, 0, h, w};
  }
}

// What a tile-step task reads of a neighbour at (di, dj): the neighbour's part
// that faces this tile, placed at (r, c) of the halo buffer in units of
// (k, h or w): 0 is the top/left k cells, 1 the tile, 2 after it.
struct Facing {
  int di, dj, part, row_slot, col_slot;
};
constexpr Facing kFacing[] = {
    {-1, 0, kSouth, 0, 1},      {1, 0, kNorth, 2, 1},      {0, -1, kEast, 1, 0},      {0, 1, kWest, 1, 2},
    {-1, -1, kSouthEast, 0, 0}, {-1, 1, kSouthWest, 0, 2}, {1, -1, kNorthEast, 2, 0}, {1, 1, kNorthWest, 2, 2},
};

float initial_value(const Params& p, std::size_t r, std::size_t c) {
  if (r == 0) return 1.0f;  // a hot top edge
  if (r == p.n - 1 || c == 0 || c == p.n - 1) return 0.0f;
  return static_cast<float>((r * 7 + c * 13) % 17) / 17.0f;
}

// Fills a tile's `parts` labels from its cells (h x w, row-major).
void write_parts(const float* cells, std::size_t h, std::size_t w, std::size_t k, std::span<Value> out) {
  for (std::size_t part = 0; part < out.size(); ++part) {
    const Rect r = part_rect(static_cast<int>(part), h, w, k);
    out[part].resize(r.rows * r.cols * 4);
    auto* dst = reinterpret_cast<float*>(out[part].data());
    for (std::size_t row = 0; row < r.rows; ++row) std::memcpy(dst + row * r.cols, cells + (r.r0 + row) * w + r.c0, r.cols * 4);
  }
}

}  // namespace

Status check(const Params& p) {
  if (p.tiles == 0) return Status::InvalidArgument("stencil: --tiles must be at least 1");
  if (p.steps == 0) return Status::InvalidArgument("stencil: --steps must be at least 1");
  if (p.n < 3 || p.n % p.tiles != 0 || p.n / p.tiles < 2)
    return Status::InvalidArgument(fmt::format("stencil: --n {} must be at least 3 and a multiple of --tiles {} with tiles of at least 2 x 2", p.n, p.tiles));
  if (p.depth == 0 || p.depth > p.n / p.tiles)
    return Status::InvalidArgument(fmt::format("stencil: --depth {} must be at least 1 and at most a tile's side ({})", p.depth, p.n / p.tiles));
  return Status::Ok();
}

double flops(const Params& p) { return 5.0 * static_cast<double>((p.n - 2) * (p.n - 2)) * static_cast<double>(p.steps); }

std::vector<float> initial_grid(const Params& p) {
  std::vector<float> g(p.n * p.n);
  for (std::size_t r = 0; r < p.n; ++r)
    for (std::size_t c = 0; c < p.n; ++c) g[r * p.n + c] = initial_value(p, r, c);
  return g;
}

Result<Program> program(const Params& p) {
  REDFLOW_RETURN_IF_ERROR(check(p));
  const std::size_t T = p.tiles, h = p.n / T, w = p.n / T, k = std::min(p.depth, p.steps);
  const std::size_t parts = k == 1 ? 5 : 9;  // one step deep needs no corners
  // The steps at which tiles are stored: 0, k, 2k, ..., steps.
  std::vector<std::size_t> times = {0};
  while (times.back() < p.steps) times.push_back(std::min(times.back() + k, p.steps));
  Program prog(k == 1 ? fmt::format("stencil n={} tiles={} steps={}", p.n, T, p.steps)
                      : fmt::format("stencil n={} tiles={} steps={} depth={}", p.n, T, p.steps, k));
  auto id = [&](std::size_t part, std::size_t level, std::size_t i, std::size_t j) {
    return static_cast<LabelId>(((level * T + i) * T + j) * parts + part);
  };
  for (std::size_t level = 0; level < times.size(); ++level)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j)
        for (std::size_t part = 0; part < parts; ++part) {
          const Rect r = part_rect(static_cast<int>(part), h, w, k);
          LabelId l = prog.label(label_name(static_cast<int>(part), times[level], i, j), r.rows * r.cols * 4);
          if (level + 1 == times.size() && part == kTile) prog.result(l);
        }
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) {
      std::vector<LabelId> produces;
      for (std::size_t part = 0; part < parts; ++part) produces.push_back(id(part, 0, i, j));
      prog.task(fmt::format("init {} {}", i, j), {}, produces, [p, i, j, h, w, k](std::span<const std::span<const std::byte>>, std::span<Value> out) {
        std::vector<float> cells(h * w);
        for (std::size_t r = 0; r < h; ++r)
          for (std::size_t c = 0; c < w; ++c) cells[r * w + c] = initial_value(p, i * h + r, j * w + c);
        write_parts(cells.data(), h, w, k, out);
        return Status::Ok();
      });
    }
  const std::size_t H = h + 2 * k, W = w + 2 * k;  // the halo buffer: the tile with k cells around it
  for (std::size_t level = 1; level < times.size(); ++level)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) {
        // requires: own tile, then the facing part of each neighbour that exists (kFacing's order).
        std::vector<LabelId> required = {id(kTile, level - 1, i, j)};
        std::vector<Facing> facing;
        for (const Facing& f : kFacing) {
          if (f.part >= static_cast<int>(parts)) continue;
          const auto ni = static_cast<std::ptrdiff_t>(i) + f.di, nj = static_cast<std::ptrdiff_t>(j) + f.dj;
          if (ni < 0 || nj < 0 || ni >= static_cast<std::ptrdiff_t>(T) || nj >= static_cast<std::ptrdiff_t>(T)) continue;
          required.push_back(id(static_cast<std::size_t>(f.part), level - 1, static_cast<std::size_t>(ni), static_cast<std::size_t>(nj)));
          facing.push_back(f);
        }
        std::vector<LabelId> produces;
        for (std::size_t part = 0; part < parts; ++part) produces.push_back(id(part, level, i, j));
        const std::size_t steps = times[level] - times[level - 1];
        prog.task(fmt::format("step {} {} {}", times[level], i, j), required, produces,
                  [=](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
                    thread_local std::vector<float> a, b, next;
                    a.assign(H * W, 0.0f);
                    auto place = [&](const std::byte* bytes, std::size_t r0, std::size_t c0, std::size_t rows, std::size_t cols) {
                      const auto* src = reinterpret_cast<const float*>(bytes);
                      for (std::size_t r = 0; r < rows; ++r) std::memcpy(&a[(r0 + r) * W + c0], src + r * cols, cols * 4);
                    };
                    place(in[0].data(), k, k, h, w);
                    const std::size_t origin[] = {0, k, k + h}, origin_c[] = {0, k, k + w};
                    for (std::size_t f = 0; f < facing.size(); ++f) {
                      const Rect r = part_rect(facing[f].part, h, w, k);
                      place(in[f + 1].data(), origin[facing[f].row_slot], origin_c[facing[f].col_slot], r.rows, r.cols);
                    }
                    // Each step computes one ring less of the halo (the cells whose
                    // neighbours are still exact); the grid's fixed outer ring is
                    // never computed, so it keeps its values in both buffers.
                    b = a;
                    float* src = a.data();
                    float* dst = b.data();
                    for (std::size_t s = 1; s <= steps; ++s) {
                      const std::size_t r0 = i == 0 ? k + 1 : s, r1 = i + 1 == T ? k + h - 1 : H - s;
                      const std::size_t c0 = j == 0 ? k + 1 : s, c1 = j + 1 == T ? k + w - 1 : W - s;
                      if (r1 > r0 && c1 > c0) jacobi5(src + r0 * W + c0, W, dst + r0 * W + c0, W, r1 - r0, c1 - c0);
                      std::swap(src, dst);
                    }
                    next.resize(h * w);
                    for (std::size_t r = 0; r < h; ++r) std::memcpy(&next[r * w], src + (k + r) * W + k, w * 4);
                    write_parts(next.data(), h, w, k, out);
                    return Status::Ok();
                  });
      }
  REDFLOW_RETURN_IF_ERROR(prog.validate());
  return prog;
}

Result<std::vector<float>> gather(const Params& p, const std::map<std::string, Value>& results) {
  REDFLOW_RETURN_IF_ERROR(check(p));
  const std::size_t T = p.tiles, h = p.n / T, w = p.n / T;
  std::vector<float> g(p.n * p.n);
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) {
      auto it = results.find(label_name(kTile, p.steps, i, j));
      if (it == results.end() || it->second.size() != h * w * 4)
        return Status::NotFound("stencil result tile " + label_name(kTile, p.steps, i, j) + " is missing or has the wrong size");
      const auto* cells = reinterpret_cast<const float*>(it->second.data());
      for (std::size_t r = 0; r < h; ++r) std::memcpy(&g[(i * h + r) * p.n + j * w], cells + r * w, w * 4);
    }
  return g;
}

}  // namespace redflow::rem::stencil
