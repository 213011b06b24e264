// FFT: the leaf-transform actors (fft.cols, fft.rows), the FFTW plan cache,
// the graph generator, the FFTW baseline and the test reference. See fft.hpp.
#include "apps/fft.hpp"

#include <fftw3.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <utility>

#include "apps/actor_util.hpp"

namespace redflow::apps {
namespace {

using cd = std::complex<double>;

// ---------------------------------------------------------------- FFTW plans
//
// FFTW's planner is not thread-safe and allocates; fftw_execute_dft is
// thread-safe and, for the contiguous in-place plans used here, works in the
// arrays it is given. So every plan an actor needs is made once, under one
// mutex, when the graph is validated (the actors' shape checks call
// prepare_leaf), and actors only look plans up. An actor that finds no plan
// (it was called without validation) makes it then, on that rare path.

struct Planner {
  std::mutex mu;
  std::map<std::pair<std::size_t, std::size_t>, fftw_plan> leaf;  // (length, howmany) -> in-place contiguous plan
  FftPlanning planning = FftPlanning::kEstimate;
  bool threads_ready = false;
};

Planner& planner() {
  static Planner* p = new Planner;  // never destroyed: plans may be used until exit
  return *p;
}

unsigned planner_flags(const Planner& p) { return p.planning == FftPlanning::kMeasure ? FFTW_MEASURE : FFTW_ESTIMATE; }

// Call with p.mu held. FFTW wants fftw_init_threads before any other call.
void ensure_threads(Planner& p) {
  if (!p.threads_ready) {
    fftw_init_threads();
    p.threads_ready = true;
  }
  fftw_plan_with_nthreads(1);
}

// Leaf transforms work on a stack buffer of at most kBufPoints points:
// `batch` lines of `len` points each, transformed together.
constexpr std::size_t kBufPoints = 8192;  // 128 KiB

// Rows ahead to prefetch in the strided gathers and scatters (measured: 8 to
// 32 all give the same ~30 % on a 2048 x 256 panel).
constexpr std::size_t kPrefetchRows = 8;

std::size_t batch_lines(std::size_t len, std::size_t lines) {
  return std::max<std::size_t>(1, std::min(lines, kBufPoints / len));
}

fftw_plan leaf_plan(std::size_t len, std::size_t howmany) {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.leaf.find({len, howmany});
  if (it != p.leaf.end()) return it->second;
  ensure_threads(p);
  fftw_complex* buf = fftw_alloc_complex(len * howmany);
  const int n = static_cast<int>(len);
  fftw_plan plan = fftw_plan_many_dft(1, &n, static_cast<int>(howmany), buf, nullptr, 1, n, buf, nullptr, 1, n,
                                      FFTW_FORWARD, planner_flags(p));
  fftw_free(buf);
  p.leaf.emplace(std::make_pair(len, howmany), plan);
  return plan;
}

// Plans for `lines` lines of `len` points cut into batches.
void prepare_leaf(std::size_t len, std::size_t lines) {
  if (len == 0 || len > kBufPoints || lines == 0) return;
  const std::size_t b = batch_lines(len, lines);
  leaf_plan(len, b);
  if (lines % b != 0) leaf_plan(len, lines % b);
}

void run_leaf(std::size_t len, std::size_t howmany, cd* buf) {
  fftw_execute_dft(leaf_plan(len, howmany), reinterpret_cast<fftw_complex*>(buf), reinterpret_cast<fftw_complex*>(buf));
}

// (a * b) without the C99 NaN/inf recovery that std::complex's operator* calls out to.
inline cd mul(cd a, cd b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// ---------------------------------------------------------------- fft.cols
//
// Input 0: a column panel, `len` rows x W columns of x (W from the size);
// or, with arg cols=C, inputs 0..k-1 are consecutive row bands of the whole
// len x C matrix x and the actor reads its W columns [first, first + W) out
// of them itself (W from the output size): the driver then packs nothing.
// Last input: the twiddle tables T (see twiddle_tables).
// Output:  `len` x W: the DFT down every column, entry (k1, w) multiplied by
//          w_N^((first + w) * k1), N = 2^logn.

constexpr std::size_t kMaxBands = 1024;

struct ColsShape {
  std::size_t len = 0, width = 0, first = 0, logn = 0;
  std::size_t cols = 0;       // band form: columns of x; 0: panel form
  std::size_t band_rows = 0;  // band form: rows per band
};

std::size_t table_points(std::size_t logn) { return (std::size_t{1} << ((logn + 1) / 2)) + (std::size_t{1} << (logn / 2)); }

// The band form's inputs (all but the last): equal row bands covering len rows of C columns.
std::string bands_shape(std::span<const std::size_t> bands, std::uint64_t cols, std::size_t len, std::size_t* band_rows) {
  if (bands.size() > kMaxBands) return "expects at most " + std::to_string(kMaxBands) + " row bands, got " + std::to_string(bands.size());
  const std::size_t row = cols * 16;
  if (row / 16 != cols || bands[0] == 0 || bands[0] % row != 0)
    return "input 0 has " + std::to_string(bands[0]) + " bytes, not whole rows of cols=" + std::to_string(cols) +
           " complex doubles";
  for (std::size_t p = 1; p < bands.size(); ++p)
    if (bands[p] != bands[0])
      return "input " + std::to_string(p) + " has " + std::to_string(bands[p]) + " bytes, input 0 " +
             std::to_string(bands[0]) + " (row bands must be equal)";
  const std::size_t r = bands[0] / row;
  if (r * bands.size() != len)
    return std::to_string(bands.size()) + " bands of " + std::to_string(r) + " rows are not len=" + std::to_string(len) + " rows";
  *band_rows = r;
  return "";
}

std::string cols_shape(std::span<const std::size_t> in, std::size_t out, std::string_view args, ColsShape* s) {
  std::uint64_t len = 0, first = 0, logn = 0, cols = 0;
  const bool banded = ActorContext::find_arg(args, "cols").has_value();
  if (banded) {
    if (auto e = detail::arg_positive(args, "cols", &cols); !e.empty()) return e;
    if (in.size() < 2) return "expects row bands and the twiddle tables (at least 2 inputs), got " + std::to_string(in.size());
  } else if (auto e = detail::expect_inputs(in.size(), 2); !e.empty()) {
    return e;
  }
  if (auto e = detail::arg_positive(args, "len", &len); !e.empty()) return e;
  if (auto e = detail::arg_u64(args, "first", &first); !e.empty()) return e;
  if (auto e = detail::arg_u64(args, "logn", &logn); !e.empty()) return e;
  if (logn > 40) return "arg 'logn' must be at most 40, got " + std::to_string(logn);
  if (!detail::is_power_of_two(len) || len > kBufPoints)
    return "arg 'len' must be a power of two up to " + std::to_string(kBufPoints) + ", got " + std::to_string(len);
  std::size_t band_rows = 0;
  if (banded) {
    if (auto e = bands_shape(in.first(in.size() - 1), cols, len, &band_rows); !e.empty()) return e;
    if (out == 0 || out % (len * 16) != 0)
      return "output has " + std::to_string(out) + " bytes, not len=" + std::to_string(len) + " rows of complex doubles";
    if (first > cols || out / (len * 16) > cols - first)
      return "columns [" + std::to_string(first) + ", " + std::to_string(first + out / (len * 16)) +
             ") lie beyond the input's cols=" + std::to_string(cols);
  } else {
    if (in[0] % (len * 16) != 0 || in[0] == 0)
      return "input 0 has " + std::to_string(in[0]) + " bytes, not a panel of len=" + std::to_string(len) +
             " rows of complex doubles";
    if (out != in[0]) return "output has " + std::to_string(out) + " bytes, input 0 " + std::to_string(in[0]) + " (they must be equal)";
  }
  const std::size_t width = out / (len * 16);
  const std::size_t n = std::size_t{1} << logn;
  if (len > n || first + width > n / len)
    return "columns [" + std::to_string(first) + ", " + std::to_string(first + width) + ") of " + std::to_string(len) +
           "-point columns do not fit a " + std::to_string(n) + "-point transform (logn=" + std::to_string(logn) + ")";
  if (in.back() != table_points(logn) * 16)
    return "input " + std::to_string(in.size() - 1) + " (twiddle tables) has " + std::to_string(in.back()) + " bytes, expected " +
           std::to_string(table_points(logn) * 16) + " for logn=" + std::to_string(logn);
  *s = {len, width, first, logn, cols, band_rows};
  return "";
}

std::string check_cols(const ActorShape& shape) {
  ColsShape s;
  if (auto e = cols_shape(shape.input_bytes, shape.output_bytes, shape.args, &s); !e.empty()) return e;
  prepare_leaf(s.len, s.width);
  return "";
}

void run_cols(ActorContext& ctx) {
  const std::size_t k = ctx.num_inputs();
  if (k > kMaxBands + 1) {
    ctx.fail("more than " + std::to_string(kMaxBands) + " row bands");
    return;
  }
  std::size_t in[kMaxBands + 1];
  for (std::size_t p = 0; p < k; ++p) in[p] = ctx.input_bytes(p).size();
  ColsShape s;
  if (auto e = cols_shape({in, k}, ctx.output_bytes().size(), ctx.args(), &s); !e.empty()) {
    ctx.fail(e);
    return;
  }
  // Where each of the len rows of this actor's columns starts: in the panel,
  // or in the row bands of x (each row then `cols` points wide).
  const cd* row[kBufPoints];
  for (std::size_t n1 = 0; n1 < s.len; ++n1)
    row[n1] = s.cols == 0 ? ctx.input<cd>(0).data() + n1 * s.width
                          : ctx.input<cd>(n1 / s.band_rows).data() + (n1 % s.band_rows) * s.cols + s.first;
  const cd* tlo = ctx.input<cd>(k - 1).data();
  const unsigned hbits = static_cast<unsigned>((s.logn + 1) / 2);
  const cd* thi = tlo + (std::size_t{1} << hbits);
  const std::size_t mask = (std::size_t{1} << hbits) - 1;
  cd* out = ctx.output<cd>().data();
  const std::size_t len = s.len, W = s.width, b = batch_lines(len, W);
  ctx.parallel_chunks(0, (W + b - 1) / b, [&](std::size_t lo, std::size_t hi) {
    alignas(64) cd buf[kBufPoints];
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t w0 = t * b, bb = std::min(b, W - w0);
      // Rows are W (or cols) points apart (4 KiB or more for 2^22): every
      // access is a new page, where the hardware prefetchers stop, so
      // prefetch a few rows ahead.
      for (std::size_t n1 = 0; n1 < len; ++n1) {
        __builtin_prefetch(row[std::min(n1 + kPrefetchRows, len - 1)] + w0);
        for (std::size_t c = 0; c < bb; ++c) buf[c * len + n1] = row[n1][w0 + c];
      }
      run_leaf(len, bb, buf);
      for (std::size_t k1 = 0; k1 < len; ++k1) {
        __builtin_prefetch(out + std::min(k1 + kPrefetchRows, len - 1) * W + w0, 1);
        for (std::size_t c = 0; c < bb; ++c) {
          const std::size_t e = (s.first + w0 + c) * k1;  // < N: no reduction needed
          out[k1 * W + w0 + c] = mul(buf[c * len + k1], mul(tlo[e & mask], thi[e >> hbits]));
        }
      }
    }
  });
}

// ---------------------------------------------------------------- fft.rows
//
// Inputs q = 0..Q-1: R rows x W_q columns (consecutive column ranges of the
// same R rows; sum of W_q = len). Output: len x R, the DFT of every row,
// transposed: out[k2 * R + j] = DFT(row j)[k2].

constexpr std::size_t kMaxRowInputs = 1024;

std::string rows_shape(std::span<const std::size_t> in, std::size_t out, std::string_view args, std::size_t* len,
                       std::size_t* rows) {
  std::uint64_t l = 0;
  if (auto e = detail::arg_positive(args, "len", &l); !e.empty()) return e;
  if (!detail::is_power_of_two(l) || l > kBufPoints)
    return "arg 'len' must be a power of two up to " + std::to_string(kBufPoints) + ", got " + std::to_string(l);
  if (in.empty() || in.size() > kMaxRowInputs)
    return "expects 1 to " + std::to_string(kMaxRowInputs) + " inputs, got " + std::to_string(in.size());
  if (out == 0 || out % (l * 16) != 0)
    return "output has " + std::to_string(out) + " bytes, not len=" + std::to_string(l) + " rows of complex doubles";
  const std::size_t r = out / (l * 16);
  std::size_t sum = 0;
  for (std::size_t p = 0; p < in.size(); ++p) {
    if (in[p] == 0 || in[p] % (r * 16) != 0)
      return "input " + std::to_string(p) + " has " + std::to_string(in[p]) + " bytes, not " + std::to_string(r) +
             " rows of complex doubles";
    sum += in[p] / (r * 16);
  }
  if (sum != l) return "inputs hold rows of " + std::to_string(sum) + " points in total, expected len=" + std::to_string(l);
  *len = l;
  *rows = r;
  return "";
}

std::string check_rows(const ActorShape& shape) {
  std::size_t len = 0, rows = 0;
  if (auto e = rows_shape(shape.input_bytes, shape.output_bytes, shape.args, &len, &rows); !e.empty()) return e;
  prepare_leaf(len, rows);
  return "";
}

void run_rows(ActorContext& ctx) {
  const std::size_t q = ctx.num_inputs();
  std::size_t sizes[kMaxRowInputs];
  if (q > kMaxRowInputs) {
    ctx.fail("more than " + std::to_string(kMaxRowInputs) + " inputs");
    return;
  }
  for (std::size_t p = 0; p < q; ++p) sizes[p] = ctx.input_bytes(p).size();
  std::size_t len = 0, R = 0;
  if (auto e = rows_shape({sizes, q}, ctx.output_bytes().size(), ctx.args(), &len, &R); !e.empty()) {
    ctx.fail(e);
    return;
  }
  cd* out = ctx.output<cd>().data();
  const std::size_t b = batch_lines(len, R);
  ctx.parallel_chunks(0, (R + b - 1) / b, [&](std::size_t lo, std::size_t hi) {
    alignas(64) cd buf[kBufPoints];
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t j0 = t * b, bb = std::min(b, R - j0);
      for (std::size_t c = 0; c < bb; ++c) {
        cd* dst = buf + c * len;
        for (std::size_t p = 0; p < q; ++p) {
          const std::size_t w = sizes[p] / (R * 16);
          std::memcpy(static_cast<void*>(dst), ctx.input<cd>(p).data() + (j0 + c) * w, w * 16);
          dst += w;
        }
      }
      run_leaf(len, bb, buf);
      for (std::size_t k2 = 0; k2 < len; ++k2) {
        __builtin_prefetch(out + std::min(k2 + kPrefetchRows, len - 1) * R + j0, 1);
        for (std::size_t c = 0; c < bb; ++c) out[k2 * R + j0 + c] = buf[c * len + k2];
      }
    }
  });
}

// ---------------------------------------------------------------- graph

// T = [w_N^j for j < 2^ceil(L/2)] ++ [w_N^(j * 2^ceil(L/2)) for j < 2^floor(L/2)],
// so that w_N^e = T_lo[e mod 2^h] * T_hi[e >> h] for every e < N.
std::vector<std::byte> twiddle_tables(unsigned logn) {
  const unsigned h = (logn + 1) / 2;
  const std::size_t lo = std::size_t{1} << h, hi = std::size_t{1} << (logn / 2);
  std::vector<cd> t(lo + hi);
  const long double n = std::ldexp(1.0L, static_cast<int>(logn));
  auto w = [&](std::size_t e) {
    const long double a = -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(e) / n;
    return cd(static_cast<double>(std::cos(a)), static_cast<double>(std::sin(a)));
  };
  for (std::size_t j = 0; j < lo; ++j) t[j] = w(j);
  for (std::size_t j = 0; j < hi; ++j) t[lo + j] = w(j << h);
  std::vector<std::byte> bytes(t.size() * sizeof(cd));
  std::memcpy(bytes.data(), t.data(), bytes.size());
  return bytes;
}

std::size_t floor_pow2(std::size_t v) {
  std::size_t p = 1;
  while (p * 2 <= v && p * 2 != 0) p *= 2;
  return p;
}

}  // namespace

void set_fft_planning(FftPlanning planning) {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  p.planning = planning;
}

bool import_fft_wisdom(const std::string& path) {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  ensure_threads(p);  // threaded solvers must be registered before wisdom naming them is read
  return fftw_import_wisdom_from_filename(path.c_str()) != 0;
}

bool export_fft_wisdom(const std::string& path) {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  return fftw_export_wisdom_to_filename(path.c_str()) != 0;
}

Result<Graph> fft_graph(const FftParams& params) {
  const std::size_t N = params.n;
  if (!detail::is_power_of_two(N))
    return Status::InvalidArgument("--n must be a power of two for fft (the number of points), got " + std::to_string(N));
  const unsigned L = detail::log2_exact(N), h = (L + 1) / 2;
  const std::size_t N1 = std::size_t{1} << (L - h), N2 = std::size_t{1} << h;
  const std::size_t slot_points = params.target.slot_bytes / 16;
  if (N2 > slot_points || N2 > kBufPoints)
    return Status::InvalidArgument("--n " + std::to_string(N) + ": rows of " + std::to_string(N2) +
                                   " points do not fit a slot of " + std::to_string(params.target.slot_bytes) +
                                   " bytes (raise --slot-bytes; at most 2^26 points are supported)");
  std::size_t B;
  if (params.block != 0) {
    B = params.block;
    if (!detail::is_power_of_two(B) || B < N2 || B > N || B > slot_points)
      return Status::InvalidArgument("--block " + std::to_string(B) + ": for fft of " + std::to_string(N) +
                                     " points it must be a power of two from " + std::to_string(N2) + " to " +
                                     std::to_string(std::min(N, floor_pow2(slot_points))) +
                                     " (points per panel; a panel must fit a slot)");
  } else {
    // A slot per panel at most, and about 4 panels per tile so that tiles overlap one another's stages;
    // but few enough panels (N / B) that a column actor's inputs and output fit the tile's slots.
    B = floor_pow2(std::max<std::size_t>(1, std::min(slot_points, N / (4 * std::max(1u, params.target.tiles)))));
    const std::size_t max_panels = params.target.slots > 2 ? params.target.slots - 2 : 1;
    while (B < N && N / B > max_panels) B *= 2;
    B = std::min(std::max(B, N2), N);
    if (B > slot_points)
      return Status::InvalidArgument("--n " + std::to_string(N) + ": panels of a slot (" + std::to_string(params.target.slot_bytes) +
                                     " bytes) would be more than slots - 2 = " + std::to_string(max_panels) +
                                     " (raise --slot-bytes or --slots)");
  }
  const std::size_t W = B / N1, Q = N2 / W;  // columns per panel, panels
  const std::size_t R = B / N2, G = N1 / R;  // rows per group, groups
  // A column actor holds X's Q row bands, the twiddles and its panel; a row
  // actor its Q pieces and its output.
  if (Q > 1 && Q + 2 > params.target.slots)
    return Status::InvalidArgument("--n " + std::to_string(N) + ": a column actor would read " + std::to_string(Q) +
                                   " row bands and the twiddle tables, more than slots - 1 = " +
                                   std::to_string(params.target.slots - 1) + " (raise --block, --slot-bytes or --slots)");

  Graph g("fft");
  const DataId X = g.input("X", N * 16), Y = g.output("Y", N * 16);
  const DataId T = g.constant("T", twiddle_tables(L));
  const double pts = static_cast<double>(B);
  // A column actor's inputs: X's G row bands of R rows (zero-copy splits),
  // out of which it reads its W columns, so nobody packs panels on the
  // driver; or X itself when it is the one panel. Then the twiddles.
  std::vector<DataId> col_inputs;
  for (std::size_t r = 0; Q > 1 && r < G; ++r) {
    col_inputs.push_back(g.inner("X" + std::to_string(r), B * 16));
    g.actor("splitX" + std::to_string(r), "rf.split", {X}, col_inputs.back()).args("offset=" + std::to_string(r * B * 16));
  }
  if (Q == 1) col_inputs.push_back(X);
  col_inputs.push_back(T);
  std::vector<std::vector<DataId>> pieces(G, std::vector<DataId>(Q));  // pieces[r][q] = rows r of F_q
  for (std::size_t q = 0; q < Q; ++q) {
    const std::string qs = std::to_string(q);
    const DataId F = g.inner("F" + qs, B * 16);
    std::string args = "len=" + std::to_string(N1) + ",first=" + std::to_string(q * W) + ",logn=" + std::to_string(L);
    if (Q > 1) args += ",cols=" + std::to_string(N2);
    g.actor("colfft" + qs, "fft.cols", col_inputs, F).args(args).work(pts * (0.5 * (L - h) + 6));
    for (std::size_t r = 0; r < G; ++r) {
      if (G == 1) {
        pieces[r][q] = F;
        continue;
      }
      const std::string qr = qs + "_" + std::to_string(r);
      pieces[r][q] = g.inner("F" + qr, R * W * 16);
      g.actor("split" + qr, "rf.split", {F}, pieces[r][q]).args("offset=" + std::to_string(r * R * W * 16));
    }
  }
  if (G == 1) {
    g.actor("rowfft0", "fft.rows", pieces[0], Y).args("len=" + std::to_string(N2)).work(pts * (0.5 * h + 3));
    return g;
  }
  // Z_r = row group r's DFTs, N2 rows (k2) x R columns: column block r of Y.
  // Y's band b (rows k2 of N2 / G) is band b of every Z_r side by side, put
  // there on the tiles (mat.hcat.tile) and collected in place.
  const std::size_t band_rows = N2 / G, band_bytes = band_rows * R * 16;
  std::vector<std::vector<DataId>> z_bands(G, std::vector<DataId>(G));  // z_bands[b][r] = rows b of Z_r
  for (std::size_t r = 0; r < G; ++r) {
    const std::string rs = std::to_string(r);
    const DataId Z = g.inner("Z" + rs, B * 16);
    g.actor("rowfft" + rs, "fft.rows", pieces[r], Z).args("len=" + std::to_string(N2)).work(pts * (0.5 * h + 3));
    for (std::size_t b = 0; b < G; ++b) {
      z_bands[b][r] = g.inner("Z" + rs + "_" + std::to_string(b), band_bytes);
      g.actor("splitZ" + rs + "_" + std::to_string(b), "rf.split", {Z}, z_bands[b][r]).args("offset=" + std::to_string(b * band_bytes));
    }
  }
  std::vector<DataId> y_bands(G);
  for (std::size_t b = 0; b < G; ++b) {
    y_bands[b] = g.inner("Y" + std::to_string(b), B * 16);
    g.actor("join" + std::to_string(b), "mat.hcat.tile", z_bands[b], y_bands[b])
        .args("rows=" + std::to_string(band_rows) + ",elem=16")
        .work(pts * 2);
  }
  g.actor("collect", "rf.collect", y_bands, Y);
  return g;
}

struct FftDirect::Impl {
  fftw_plan plan = nullptr;
  fftw_complex* in = nullptr;
  fftw_complex* out = nullptr;
};

FftDirect::FftDirect(std::size_t n, unsigned threads) : impl_(std::make_unique<Impl>()) {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  ensure_threads(p);
  fftw_plan_with_nthreads(static_cast<int>(std::max(1u, threads)));
  impl_->in = fftw_alloc_complex(std::max<std::size_t>(n, 1));
  impl_->out = fftw_alloc_complex(std::max<std::size_t>(n, 1));
  impl_->plan = fftw_plan_dft_1d(static_cast<int>(n), impl_->in, impl_->out, FFTW_FORWARD, planner_flags(p));
  fftw_plan_with_nthreads(1);
  // Planning with FFTW_MEASURE overwrote the arrays.
  std::memset(static_cast<void*>(impl_->in), 0, n * 16);
}

FftDirect::~FftDirect() {
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  if (impl_->plan != nullptr) fftw_destroy_plan(impl_->plan);
  fftw_free(impl_->in);
  fftw_free(impl_->out);
}

cd* FftDirect::input() { return reinterpret_cast<cd*>(impl_->in); }
const cd* FftDirect::output() const { return reinterpret_cast<const cd*>(impl_->out); }
void FftDirect::run() { fftw_execute(impl_->plan); }

std::vector<cd> fft_reference(const std::vector<cd>& in) {
  std::vector<cd> out(in.size());
  if (in.empty()) return out;
  Planner& p = planner();
  std::lock_guard<std::mutex> lock(p.mu);
  ensure_threads(p);
  fftw_complex* a = fftw_alloc_complex(in.size());
  fftw_complex* b = fftw_alloc_complex(in.size());
  fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(in.size()), a, b, FFTW_FORWARD, FFTW_ESTIMATE);
  std::memcpy(static_cast<void*>(a), in.data(), in.size() * 16);
  fftw_execute(plan);
  std::memcpy(static_cast<void*>(out.data()), b, in.size() * 16);
  fftw_destroy_plan(plan);
  fftw_free(a);
  fftw_free(b);
  return out;
}

double relative_error(const cd* a, const cd* b, std::size_t n) {
  long double diff = 0, ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diff += std::norm(a[i] - b[i]);
    ref += std::norm(b[i]);
  }
  if (ref == 0) return diff == 0 ? 0.0 : 1.0;
  return static_cast<double>(std::sqrt(diff / ref));
}

void register_fft_actors(Registry& reg) {
  reg.add("fft.cols", ActorSpec{run_cols, check_cols, false,
                                "DFT down the columns of a panel, times twiddles (args: len=N1,first=C,logn=L)"});
  reg.add("fft.rows", ActorSpec{run_rows, check_rows, false,
                                "DFT along rows given as column ranges, written transposed (args: len=N2)"});
}

}  // namespace redflow::apps
