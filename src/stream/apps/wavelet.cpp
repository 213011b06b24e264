// The wavelet encoder (wavelet.hpp, docs/stream-apps.md): its operators and
// the program that wires them. The same encoder as plain loops, and its
// decoder, are in wavelet_sequential.cpp; both share wavelet_codec.hpp.
#include "stream/apps/wavelet.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

#include "stream/apps/plan.hpp"
#include "stream/apps/wavelet_codec.hpp"
#include "stream/builtin_operators.hpp"

namespace redflow::stream {
namespace {

using namespace wavelet_codec;

constexpr std::size_t kSourceBurst = 256;  // tokens the source writes per firing

// ---- the operators ----

// wavelet.source path=FILE levels=L: the header, then the padded image.
class WaveletSource final : public Operator {
 public:
  WaveletSource(std::string path, int levels) : path_(std::move(path)), levels_(levels) {}
  Fired fire(FiringContext& ctx) override {
    if (samples_.empty()) {  // also after a restore: the samples are read again, the header was written
      auto img = read_pgm(path_);
      if (!img.ok()) throw std::runtime_error(img.status().message());
      int wp = 0, hp = 0;
      samples_ = padded_samples(*img, levels_, wp, hp);
      if (!loaded_)
        ctx.write_value(0, to_token(BandHeader{static_cast<std::uint16_t>(wp), static_cast<std::uint16_t>(hp),
                                               static_cast<std::uint16_t>(img->width), static_cast<std::uint16_t>(img->height)}));
      loaded_ = true;
    }
    Samples t;
    for (std::size_t i = 0; i < kSourceBurst && next_ < samples_.size(); ++i, next_ += kPerToken) {
      std::memcpy(t.v, &samples_[next_], kToken);
      ctx.write_value(0, t);
    }
    return next_ >= samples_.size() ? Fired::kDone : Fired::kMore;
  }
  // Where it is in the image; the image is read again from its file.
  void snapshot(StateWriter& out) const override {
    out.value(loaded_);
    out.value(next_);
  }
  void restore(StateReader& in) override {
    in.value(loaded_);
    in.value(next_);
  }

 private:
  std::string path_;
  int levels_;
  bool loaded_ = false;
  std::vector<std::int16_t> samples_;
  std::size_t next_ = 0;
};

// wavelet.hlift: the horizontal pass. Adjacent samples of a row pair up;
// rows have an even length, so pairing the stream's samples two by two is
// pairing within rows. Two tokens in, one low (s) and one high (d) out.
class HLift final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    Samples t;
    while (ctx.read(0, t)) {
      if (!header_) {
        BandHeader h = to_header(t);
        h.width /= 2;
        ctx.write_value(0, to_token(h));
        ctx.write_value(1, to_token(h));
        header_ = true;
      } else if (!half_) {
        first_ = t;
        half_ = true;
      } else {
        Samples s, d;
        for (int k = 0; k < 2; ++k) {
          lift(first_.v[2 * k], first_.v[2 * k + 1], s.v[k], d.v[k]);
          lift(t.v[2 * k], t.v[2 * k + 1], s.v[2 + k], d.v[2 + k]);
        }
        ctx.write_value(0, s);
        ctx.write_value(1, d);
        half_ = false;
      }
    }
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override {
    out.value(header_);
    out.value(half_);
    out.value(first_);
  }
  void restore(StateReader& in) override {
    in.value(header_);
    in.value(half_);
    in.value(first_);
  }

 private:
  bool header_ = false, half_ = false;
  Samples first_{};
};

// wavelet.vlift: the vertical pass. Holds one (even) row, then lifts it with
// the next (odd) row token by token: a line buffer, the only state.
class VLift final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    Samples t;
    while (ctx.read(0, t)) {
      if (!header_) {
        BandHeader h = to_header(t);
        if (h.width == 0 || h.width % kPerToken != 0) throw std::runtime_error(fmt::format("row of {} samples is not whole tokens", h.width));
        row_.resize(h.width / kPerToken);
        h.height /= 2;
        ctx.write_value(0, to_token(h));
        ctx.write_value(1, to_token(h));
        header_ = true;
        continue;
      }
      if (!odd_) {
        row_[k_] = t;
      } else {
        Samples s, d;
        for (int j = 0; j < kPerToken; ++j) lift(row_[k_].v[j], t.v[j], s.v[j], d.v[j]);
        ctx.write_value(0, s);
        ctx.write_value(1, d);
      }
      if (++k_ == row_.size()) k_ = 0, odd_ = !odd_;
    }
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override {
    out.value(header_);
    out.value(odd_);
    out.values(row_);
    out.value(k_);
  }
  void restore(StateReader& in) override {
    in.value(header_);
    in.value(odd_);
    in.values(row_);
    in.value(k_);
  }

 private:
  bool header_ = false, odd_ = false;
  std::vector<Samples> row_;
  std::size_t k_ = 0;
};

// wavelet.quant step=Q
class Quant final : public Operator {
 public:
  explicit Quant(int step) : step_(step) {}
  Fired fire(FiringContext& ctx) override {
    Samples t;
    while (ctx.read(0, t)) {
      if (header_)
        for (auto& v : t.v) v = quantise(v, step_);
      header_ = true;
      ctx.write_value(0, t);
    }
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override { out.value(header_); }
  void restore(StateReader& in) override { in.value(header_); }

 private:
  int step_;
  bool header_ = false;
};

// wavelet.rle: zero-run coding (PairCoder), each band row on its own so the
// packer can interleave whole rows: the band header passes through first,
// then per row a count token (how many coded tokens follow) and the row's
// coded tokens. A row's trailing zeros end as a (run - 1, 0) pair, so every
// pair stands for run + 1 samples and the decoder needs no end marker; the
// row's last token is padded with zero bytes.
class Rle final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    Samples t;
    auto emit = [&](const char* token) {
      Samples c;
      std::memcpy(&c, token, kToken);
      row_.push_back(c);
    };
    while (ctx.read(0, t)) {
      if (!header_) {
        width_ = to_header(t).width;
        if (width_ == 0 || width_ % kPerToken != 0) throw std::runtime_error(fmt::format("wavelet.rle: band rows of {} samples are not whole tokens", width_));
        ctx.write_value(0, t);
        header_ = true;
        continue;
      }
      for (int v : t.v) {
        if (v == 0) {
          ++run_;
          continue;
        }
        coder_.pair(run_, v, emit);
        run_ = 0;
      }
      if ((col_ += kPerToken) < width_) continue;
      if (run_ > 0) coder_.pair(run_ - 1, 0, emit);
      coder_.flush(emit);
      ctx.write_value(0, count_token(row_.size()));
      for (const Samples& c : row_) ctx.write_value(0, c);
      row_.clear();
      run_ = 0;
      col_ = 0;
    }
    return Fired::kMore;
  }
  void finish(FiringContext&) override {
    if (col_ != 0) throw std::runtime_error(fmt::format("wavelet.rle: the band ended {} samples into a row of {}", col_, width_));
  }
  void snapshot(StateWriter& out) const override {
    out.value(header_);
    out.value(width_);
    out.value(col_);
    out.value(run_);
    coder_.save(out);
    out.values(row_);
  }
  void restore(StateReader& in) override {
    in.value(header_);
    in.value(width_);
    in.value(col_);
    in.value(run_);
    coder_.load(in);
    in.values(row_);
  }

 private:
  bool header_ = false;
  std::uint32_t width_ = 0, col_ = 0, run_ = 0;
  PairCoder coder_;
  std::vector<Samples> row_;  // the coded tokens of the row being read
};

// wavelet.pack levels=L step=Q: writes the file header, then the bands
// interleaved by rows (docs/stream-apps.md, "Packer"): for each row of the
// coarsest band, in band order, the rows of every band that cover the same
// image rows. So the file is written while the image still streams in, and
// a band waits for at most one group of rows. It reads its inputs in that
// fixed order, so the output never depends on which band was ready first.
// Each rle row comes as a count token and the coded tokens; the file keeps
// the coded tokens only (the decoder knows each row's width).
class Pack final : public Operator {
 public:
  Pack(int levels, int step) : levels_(levels), step_(step), rows_(3 * static_cast<std::size_t>(levels) + 1, 0), widths_(rows_.size(), 0) {}
  bool ready(const FiringContext& ctx) const override {
    if (!done_) return ctx.available(cur_) > 0 || ctx.drained(cur_);
    for (std::size_t i = 0; i < ctx.inputs(); ++i)
      if (ctx.available(i) > 0) return true;  // tokens past the last row: fire() names them
    return false;
  }
  bool finished(const FiringContext& ctx) const override {
    if (!done_) return false;
    for (std::size_t i = 0; i < ctx.inputs(); ++i)
      if (!ctx.drained(i)) return false;
    return true;
  }
  Fired fire(FiringContext& ctx) override {
    if (ctx.inputs() != rows_.size()) throw std::runtime_error(fmt::format("wavelet.pack: {} inputs for {} bands", ctx.inputs(), rows_.size()));
    Samples t;
    while (!done_) {
      if (!ctx.read(cur_, t)) {
        if (ctx.drained(cur_)) throw std::runtime_error(fmt::format("wavelet.pack: band stream {} ended at row group {} of {}", cur_, group_, groups_));
        return Fired::kMore;
      }
      if (rows_[cur_] == 0) {  // the band's header, on its first turn
        const BandHeader h = to_header(t);
        if (cur_ == 0) {
          const auto fh = file_header(levels_, step_, h.image_width, h.image_height);
          ctx.write(0, fh.data());
          ctx.write(0, fh.data() + kToken);
          groups_ = h.height;
        }
        if (h.height == 0 || groups_ == 0 || h.height % groups_ != 0 || h.width == 0)
          throw std::runtime_error(fmt::format("wavelet.pack: band {} is {}x{}, not rows of the coarsest band's {}", cur_, h.width, h.height, groups_));
        rows_[cur_] = h.height / groups_;
        widths_[cur_] = h.width;
        rows_left_ = rows_[cur_];
        continue;
      }
      if (tokens_left_ == 0) {  // a row's count token
        tokens_left_ = to_count(t);
        // A sample codes to at most two 5-byte varints, and the row's last token is padded.
        if (tokens_left_ == 0 || tokens_left_ > 10 * std::uint64_t{widths_[cur_]} / kToken + 1)
          throw std::runtime_error(fmt::format("wavelet.pack: band {} row of {} samples claims {} coded tokens", cur_, widths_[cur_], tokens_left_));
        continue;
      }
      ctx.write_value(0, t);
      if (--tokens_left_ > 0 || --rows_left_ > 0) continue;
      if (++cur_ == rows_.size()) {
        cur_ = 0;
        done_ = ++group_ == groups_;
      }
      rows_left_ = rows_[cur_];  // 0 while its header is still to come
    }
    for (std::size_t i = 0; i < ctx.inputs(); ++i)
      if (ctx.available(i) > 0) throw std::runtime_error(fmt::format("wavelet.pack: band stream {} has tokens after its last row", i));
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override {
    out.value(cur_);
    out.value(group_);
    out.value(groups_);
    out.value(rows_left_);
    out.value(tokens_left_);
    out.value(done_);
    out.values(rows_);
    out.values(widths_);
  }
  void restore(StateReader& in) override {
    in.value(cur_);
    in.value(group_);
    in.value(groups_);
    in.value(rows_left_);
    in.value(tokens_left_);
    in.value(done_);
    in.values(rows_);
    in.values(widths_);
    if (rows_.size() != 3 * static_cast<std::size_t>(levels_) + 1 || widths_.size() != rows_.size() || cur_ >= rows_.size())
      throw std::runtime_error("wavelet.pack: a saved state for another number of levels");
  }

 private:
  int levels_, step_;
  std::size_t cur_ = 0;                  // the input being read
  std::uint32_t group_ = 0, groups_ = 0; // row groups: the coarsest band's rows
  std::uint32_t rows_left_ = 0;          // rows of input cur_ still to copy in this group
  std::uint64_t tokens_left_ = 0;        // coded tokens of the current row still to copy (0: its count is next)
  bool done_ = false;
  std::vector<std::uint32_t> rows_, widths_;  // per input: rows per group (0: header not read yet), samples per row
};

Result<int> int_arg(const Args& args, const std::string& key, int fallback, int lo, int hi) {
  auto v = number_arg(args, key, static_cast<std::uint64_t>(fallback));
  if (!v.ok()) return v.status();
  if (*v < static_cast<std::uint64_t>(lo) || *v > static_cast<std::uint64_t>(hi))
    return Status::InvalidArgument(fmt::format("arg {}={} is out of range {}..{}", key, *v, lo, hi));
  return static_cast<int>(*v);
}

OperatorSpec eight_bytes(std::size_t in, std::size_t out) {
  return OperatorSpec{in, out, std::vector<std::size_t>(in, kToken), std::vector<std::size_t>(out, kToken), true};  // each saves its state
}

template <typename Op>
OperatorFactory plain(std::size_t in, std::size_t out) {
  return OperatorFactory{[in, out](const Args&) -> Result<OperatorSpec> { return eight_bytes(in, out); },
                         [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Op>(); }};
}

// One band: its name in instance names, and where the transform emits it.
struct BandSource {
  std::string band, from;
  std::size_t port;
};

// The bands in the order the packer takes their rows in each row group: the
// coarsest LL, then the detail bands from coarse to fine (LH, HL, HH of each
// level).
std::vector<BandSource> band_order(int levels) {
  std::vector<BandSource> bands{{fmt::format("ll{}", levels), fmt::format("cols{}l", levels), 0}};
  for (int l = levels; l >= 1; --l) {
    bands.push_back({fmt::format("lh{}", l), fmt::format("cols{}l", l), 1});
    bands.push_back({fmt::format("hl{}", l), fmt::format("cols{}h", l), 0});
    bands.push_back({fmt::format("hh{}", l), fmt::format("cols{}h", l), 1});
  }
  return bands;
}

apps::ProgramPlan wavelet_plan(const std::string& path, int levels, int step) {
  apps::ProgramPlan p;
  p.node("source", "wavelet.source", {{"path", path}, {"levels", std::to_string(levels)}});
  std::string prev = "source";
  for (int l = 1; l <= levels; ++l) {
    const std::string rows = fmt::format("rows{}", l), cl = fmt::format("cols{}l", l), ch = fmt::format("cols{}h", l);
    p.node(rows, "wavelet.hlift");
    p.node(cl, "wavelet.vlift");
    p.node(ch, "wavelet.vlift");
    p.edge(prev, 0, rows, 0, kToken);
    p.edge(rows, 0, cl, 0, kToken);
    p.edge(rows, 1, ch, 0, kToken);
    prev = cl;
  }
  const auto bands = band_order(levels);
  for (std::size_t i = 0; i < bands.size(); ++i) {
    const auto& b = bands[i];
    // The LL band is kept exact: it is small and every pixel depends on it.
    p.node("q_" + b.band, "wavelet.quant", {{"step", std::to_string(i == 0 ? 1 : step)}});
    p.node("rle_" + b.band, "wavelet.rle");
    p.edge(b.from, b.port, "q_" + b.band, 0, kToken);
    p.edge("q_" + b.band, 0, "rle_" + b.band, 0, kToken);
    p.edge("rle_" + b.band, 0, "pack", i, kToken);
  }
  p.node("pack", "wavelet.pack", {{"levels", std::to_string(levels)}, {"step", std::to_string(step)}});
  p.node(kWaveletOutput, "collect");
  p.edge("pack", 0, kWaveletOutput, 0, kToken);
  return p;
}

}  // namespace

void add_wavelet_operators(OperatorRegistry& reg) {
  reg.add("wavelet.source", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                              auto it = a.find("path");
                                              if (it == a.end() || it->second.empty()) return Status::InvalidArgument("wavelet.source needs path=FILE.pgm");
                                              if (auto l = int_arg(a, "levels", 3, 1, kMaxLevels); !l.ok()) return l.status();
                                              return eight_bytes(0, 1);
                                            },
                                            [](const Args& a) -> std::unique_ptr<Operator> {
                                              return std::make_unique<WaveletSource>(a.at("path"), *int_arg(a, "levels", 3, 1, kMaxLevels));
                                            }});
  reg.add("wavelet.hlift", plain<HLift>(1, 2));
  reg.add("wavelet.vlift", plain<VLift>(1, 2));
  reg.add("wavelet.rle", plain<Rle>(1, 1));
  reg.add("wavelet.quant", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                             if (auto s = int_arg(a, "step", 1, 1, kMaxStep); !s.ok()) return s.status();
                                             return eight_bytes(1, 1);
                                           },
                                           [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Quant>(*int_arg(a, "step", 1, 1, kMaxStep)); }});
  reg.add("wavelet.pack", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                            auto l = int_arg(a, "levels", 3, 1, kMaxLevels);
                                            if (!l.ok()) return l.status();
                                            if (auto s = int_arg(a, "step", 1, 1, kMaxStep); !s.ok()) return s.status();
                                            return eight_bytes(3 * static_cast<std::size_t>(*l) + 1, 1);
                                          },
                                          [](const Args& a) -> std::unique_ptr<Operator> {
                                            return std::make_unique<Pack>(*int_arg(a, "levels", 3, 1, kMaxLevels), *int_arg(a, "step", 1, 1, kMaxStep));
                                          }});
}

std::size_t wavelet_operator_count(int levels) { return 9 * static_cast<std::size_t>(levels) + 5; }

Result<Program> wavelet_program(const OperatorRegistry& registry, const std::string& pgm_path, int levels, int step) {
  if (levels < 1 || levels > kMaxLevels) return Status::InvalidArgument(fmt::format("wavelet: levels {} is not 1..{}", levels, kMaxLevels));
  if (step < 1 || step > kMaxStep) return Status::InvalidArgument(fmt::format("wavelet: step {} is not 1..{}", step, kMaxStep));
  for (char c : pgm_path)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\\')
      return Status::InvalidArgument(fmt::format("wavelet: PGM path '{}' has whitespace, a quote or a backslash (it is an operator arg)", pgm_path));
  if (auto img = read_pgm(pgm_path); !img.ok()) return img.status();
  return wavelet_plan(pgm_path, levels, step).build(registry);
}

std::string wavelet_dot(const std::string& pgm_path, int levels, int step) {
  return wavelet_plan(pgm_path, levels, step)
      .dot("wavelet", fmt::format("The wavelet image encoder (docs/stream-apps.md), as wavelet_dot(\"{}\", {}, {}) writes it:\n"
                                  "{} light operators, 8-byte tokens. Make the image first: scripts/camera-pgm {}",
                                  pgm_path, levels, step, wavelet_operator_count(levels), pgm_path));
}

}  // namespace redflow::stream
