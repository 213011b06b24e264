// The stencil as a REM program: tile-step tasks that produce the tile and its
// four edges, so a neighbour reads a row or a column, not a whole tile.
#include <fmt/format.h>

#include <cstring>

#include "rem/stencil.hpp"

namespace redflow::rem::stencil {

namespace {

enum Part { kTile, kNorth, kSouth, kWest, kEast };
const char* const kPartName[] = {"u", "n", "s", "w", "e"};

std::string label_name(int part, std::size_t t, std::size_t i, std::size_t j) {
  return fmt::format("{}{}_{}_{}", kPartName[part], t, i, j);
}

float initial_value(const Params& p, std::size_t r, std::size_t c) {
  if (r == 0) return 1.0f;  // a hot top edge
  if (r == p.n - 1 || c == 0 || c == p.n - 1) return 0.0f;
  return static_cast<float>((r * 7 + c * 13) % 17) / 17.0f;
}

// Fills a tile's five labels from its cells (h x w, row-major).
void write_parts(const float* cells, std::size_t h, std::size_t w, std::span<Value> out) {
  out[kTile].resize(h * w * 4);
  std::memcpy(out[kTile].data(), cells, h * w * 4);
  out[kNorth].resize(w * 4);
  std::memcpy(out[kNorth].data(), cells, w * 4);
  out[kSouth].resize(w * 4);
  std::memcpy(out[kSouth].data(), cells + (h - 1) * w, w * 4);
  out[kWest].resize(h * 4);
  out[kEast].resize(h * 4);
  auto* west = reinterpret_cast<float*>(out[kWest].data());
  auto* east = reinterpret_cast<float*>(out[kEast].data());
  for (std::size_t r = 0; r < h; ++r) west[r] = cells[r * w], east[r] = cells[r * w + w - 1];
}

}  // namespace

Status check(const Params& p) {
  if (p.tiles == 0) return Status::InvalidArgument("stencil: --tiles must be at least 1");
  if (p.steps == 0) return Status::InvalidArgument("stencil: --steps must be at least 1");
  if (p.n < 3 || p.n % p.tiles != 0 || p.n / p.tiles < 2)
    return Status::InvalidArgument(fmt::format("stencil: --n {} must be at least 3 and a multiple of --tiles {} with tiles of at least 2 x 2", p.n, p.tiles));
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
  const std::size_t T = p.tiles, h = p.n / T, w = p.n / T;
  Program prog(fmt::format("stencil n={} tiles={} steps={}", p.n, T, p.steps));
  auto id = [&](int part, std::size_t t, std::size_t i, std::size_t j) {
    return static_cast<LabelId>(((t * T + i) * T + j) * 5 + static_cast<std::size_t>(part));
  };
  for (std::size_t t = 0; t <= p.steps; ++t)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j)
        for (int part = 0; part < 5; ++part) {
          std::size_t bytes = part == kTile ? h * w * 4 : (part == kNorth || part == kSouth) ? w * 4 : h * 4;
          LabelId l = prog.label(label_name(part, t, i, j), bytes);
          if (t == p.steps && part == kTile) prog.result(l);
        }
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) {
      std::vector<LabelId> produces;
      for (int part = 0; part < 5; ++part) produces.push_back(id(part, 0, i, j));
      prog.task(fmt::format("init {} {}", i, j), {}, produces, [p, i, j, h, w](std::span<const std::span<const std::byte>>, std::span<Value> out) {
        std::vector<float> cells(h * w);
        for (std::size_t r = 0; r < h; ++r)
          for (std::size_t c = 0; c < w; ++c) cells[r * w + c] = initial_value(p, i * h + r, j * w + c);
        write_parts(cells.data(), h, w, out);
        return Status::Ok();
      });
    }
  for (std::size_t t = 1; t <= p.steps; ++t)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) {
        // requires: own tile, and the facing edge of each neighbour that exists (in this order).
        std::vector<LabelId> required = {id(kTile, t - 1, i, j)};
        const bool north = i > 0, south = i + 1 < T, west = j > 0, east = j + 1 < T;
        if (north) required.push_back(id(kSouth, t - 1, i - 1, j));
        if (south) required.push_back(id(kNorth, t - 1, i + 1, j));
        if (west) required.push_back(id(kEast, t - 1, i, j - 1));
        if (east) required.push_back(id(kWest, t - 1, i, j + 1));
        std::vector<LabelId> produces;
        for (int part = 0; part < 5; ++part) produces.push_back(id(part, t, i, j));
        prog.task(fmt::format("step {} {} {}", t, i, j), required, produces,
                  [=](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
                    // A halo buffer (h+2) x (w+2): the tile in the middle, neighbours' edges around it.
                    const std::size_t hs = w + 2;
                    thread_local std::vector<float> halo, next;
                    halo.assign((h + 2) * hs, 0.0f);
                    next.resize(h * w);
                    const auto* tile = reinterpret_cast<const float*>(in[0].data());
                    for (std::size_t r = 0; r < h; ++r) std::memcpy(&halo[(r + 1) * hs + 1], tile + r * w, w * 4);
                    std::size_t k = 1;
                    if (north) std::memcpy(&halo[1], in[k++].data(), w * 4);
                    if (south) std::memcpy(&halo[(h + 1) * hs + 1], in[k++].data(), w * 4);
                    if (west) {
                      const auto* col = reinterpret_cast<const float*>(in[k++].data());
                      for (std::size_t r = 0; r < h; ++r) halo[(r + 1) * hs] = col[r];
                    }
                    if (east) {
                      const auto* col = reinterpret_cast<const float*>(in[k++].data());
                      for (std::size_t r = 0; r < h; ++r) halo[(r + 1) * hs + w + 1] = col[r];
                    }
                    jacobi5(&halo[hs + 1], hs, next.data(), w, h, w);
                    // The grid's outer ring is fixed: tiles on it put those cells back.
                    if (i == 0) std::memcpy(next.data(), tile, w * 4);
                    if (i + 1 == T) std::memcpy(next.data() + (h - 1) * w, tile + (h - 1) * w, w * 4);
                    for (std::size_t r = 0; r < h; ++r) {
                      if (j == 0) next[r * w] = tile[r * w];
                      if (j + 1 == T) next[r * w + w - 1] = tile[r * w + w - 1];
                    }
                    write_parts(next.data(), h, w, out);
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
