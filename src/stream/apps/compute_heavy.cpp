// The Compute Heavy Application (compute_heavy.hpp, docs/stream-apps.md):
// its operators, the program wiring them, and the same computation as plain
// loops. Both share the block generator and the kernel below.
#include "stream/apps/compute_heavy.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "stream/apps/plan.hpp"
#include "stream/builtin_operators.hpp"

namespace redflow::stream {
namespace {

constexpr std::size_t kWords = kChaToken / 8;
constexpr int kMaxWays = 64;               // branches, stages
constexpr std::uint64_t kMaxWork = 1000000000;  // rounds per token
constexpr std::size_t kBlockBurst = 64;    // blocks the source writes per firing

using Block = std::array<std::uint64_t, kWords>;
static_assert(sizeof(Block) == kChaToken);

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Block make_block(std::uint64_t i) {
  Block b;
  for (std::size_t j = 0; j < kWords; ++j) b[j] = splitmix64(i * kWords + j);
  return b;
}

std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// `work` rounds over the block's words, each word mixed with its neighbour
// and a round key: a few integer operations per word and round, no floating
// point, so every machine and every interleaving gives the same bits.
void mix(Block& b, std::uint64_t work, std::uint64_t seed) {
  std::uint64_t key = splitmix64(seed);
  for (std::uint64_t r = 0; r < work; ++r) {
    for (std::size_t j = 0; j < kWords; ++j) b[j] = rotl(b[j] ^ (b[(j + 1) % kWords] + key), 23) * 0xBF58476D1CE4E5B9ull;
    key += 0x9E3779B97F4A7C15ull;
  }
}

// Each stage gets its own seed, so the stages and branches differ.
std::uint64_t stage_seed(int branch, int stage) { return static_cast<std::uint64_t>(branch) * kMaxWays + stage + 1; }

// cha.source blocks=N
class BlockSource final : public Operator {
 public:
  explicit BlockSource(std::uint64_t blocks) : blocks_(blocks) {}
  Fired fire(FiringContext& ctx) override {
    for (std::size_t k = 0; k < kBlockBurst && next_ < blocks_; ++k, ++next_) ctx.write_value(0, make_block(next_));
    return next_ >= blocks_ ? Fired::kDone : Fired::kMore;
  }
  void snapshot(StateWriter& out) const override { out.value(next_); }
  void restore(StateReader& in) override { in.value(next_); }

 private:
  std::uint64_t blocks_, next_ = 0;
};

// cha.split outputs=B: deals blocks round-robin.
class Split final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    Block b;
    while (ctx.read(0, b)) {
      ctx.write_value(next_, b);
      next_ = (next_ + 1) % ctx.outputs();
    }
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override { out.value(next_); }
  void restore(StateReader& in) override { in.value(next_); }

 private:
  std::size_t next_ = 0;
};

// cha.mix work=K seed=S
class Mix final : public Operator {
 public:
  Mix(std::uint64_t work, std::uint64_t seed) : work_(work), seed_(seed) {}
  Fired fire(FiringContext& ctx) override {
    // One block a firing: a firing is long already, and returning lets the
    // pool hand the worker to another operator.
    Block b;
    if (ctx.read(0, b)) {
      mix(b, work_, seed_);
      ctx.write_value(0, b);
    }
    return Fired::kMore;
  }

 private:
  std::uint64_t work_, seed_;
};

// cha.merge inputs=B: takes block i from input i mod B, the inverse of
// split, so the order is the source's whatever branch runs ahead. Its own
// firing rule: only the input whose turn it is matters.
class Merge final : public Operator {
 public:
  bool ready(const FiringContext& ctx) const override { return ctx.available(next_) > 0 || ctx.drained(next_); }
  // The input whose turn it is ended: the source's blocks are all through
  // (split dealt them in this order), so the merged stream ends too.
  bool finished(const FiringContext& ctx) const override { return ctx.drained(next_); }
  Fired fire(FiringContext& ctx) override {
    Block b;
    while (ctx.read(next_, b)) {
      ctx.write_value(0, b);
      next_ = (next_ + 1) % ctx.inputs();
    }
    return Fired::kMore;
  }
  void snapshot(StateWriter& out) const override { out.value(next_); }
  void restore(StateReader& in) override { in.value(next_); }

 private:
  std::size_t next_ = 0;
};

Result<std::uint64_t> ranged(const Args& a, const std::string& key, std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi) {
  auto v = number_arg(a, key, fallback);
  if (!v.ok()) return v.status();
  if (*v < lo || *v > hi) return Status::InvalidArgument(fmt::format("arg {}={} is out of range {}..{}", key, *v, lo, hi));
  return *v;
}

OperatorSpec blocks(std::size_t in, std::size_t out) {
  return OperatorSpec{in, out, std::vector<std::size_t>(in, kChaToken), std::vector<std::size_t>(out, kChaToken), true};  // each saves its state
}

apps::ProgramPlan cha_plan(std::uint64_t n, std::uint64_t work, int branches, int stages) {
  apps::ProgramPlan p;
  p.node("source", "cha.source", {{"blocks", std::to_string(n)}});
  p.node("split", "cha.split", {{"outputs", std::to_string(branches)}});
  p.edge("source", 0, "split", 0, kChaToken);
  for (int b = 0; b < branches; ++b) {
    std::string prev = "split";
    std::size_t port = static_cast<std::size_t>(b);
    for (int s = 0; s < stages; ++s) {
      const std::string name = fmt::format("b{}s{}", b, s);
      p.node(name, "cha.mix", {{"work", std::to_string(work)}, {"seed", std::to_string(stage_seed(b, s))}});
      p.edge(prev, port, name, 0, kChaToken);
      prev = name, port = 0;
    }
    p.edge(prev, port, "merge", static_cast<std::size_t>(b), kChaToken);
  }
  p.node("merge", "cha.merge", {{"inputs", std::to_string(branches)}});
  p.node(kChaOutput, "collect");
  p.edge("merge", 0, kChaOutput, 0, kChaToken);
  return p;
}

Status check_shape(std::uint64_t work, int branches, int stages) {
  if (branches < 1 || branches > kMaxWays || stages < 1 || stages > kMaxWays)
    return Status::InvalidArgument(fmt::format("cha: {} branches of {} stages (each 1..{})", branches, stages, kMaxWays));
  if (work > kMaxWork) return Status::InvalidArgument(fmt::format("cha: work {} is over {}", work, kMaxWork));
  return Status::Ok();
}

}  // namespace

void add_compute_heavy_operators(OperatorRegistry& reg) {
  reg.add("cha.source", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                          if (auto v = number_arg(a, "blocks", 1000); !v.ok()) return v.status();
                                          return blocks(0, 1);
                                        },
                                        [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<BlockSource>(*number_arg(a, "blocks", 1000)); }});
  reg.add("cha.split", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                         auto n = ranged(a, "outputs", kChaBranches, 1, kMaxWays);
                                         if (!n.ok()) return n.status();
                                         return blocks(1, *n);
                                       },
                                       [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Split>(); }});
  reg.add("cha.mix", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                       if (auto w = ranged(a, "work", 1000, 0, kMaxWork); !w.ok()) return w.status();
                                       if (auto s = number_arg(a, "seed", 0); !s.ok()) return s.status();
                                       return blocks(1, 1);
                                     },
                                     [](const Args& a) -> std::unique_ptr<Operator> {
                                       return std::make_unique<Mix>(*ranged(a, "work", 1000, 0, kMaxWork), *number_arg(a, "seed", 0));
                                     }});
  reg.add("cha.merge", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                         auto n = ranged(a, "inputs", kChaBranches, 1, kMaxWays);
                                         if (!n.ok()) return n.status();
                                         return blocks(*n, 1);
                                       },
                                       [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Merge>(); }});
}

std::size_t cha_operator_count(int branches, int stages) { return static_cast<std::size_t>(branches) * stages + 4; }

Result<Program> cha_program(const OperatorRegistry& registry, std::uint64_t n, std::uint64_t work, int branches, int stages) {
  REDFLOW_RETURN_IF_ERROR(check_shape(work, branches, stages));
  return cha_plan(n, work, branches, stages).build(registry);
}

std::string cha_dot(std::uint64_t n, std::uint64_t work, int branches, int stages) {
  return cha_plan(n, work, branches, stages)
      .dot("compute_heavy", fmt::format("The Compute Heavy Application (docs/stream-apps.md), as cha_dot({}, {}) writes it:\n"
                                        "{} operators, 64-byte tokens; {} branches of {} mixing stages.",
                                        n, work, cha_operator_count(branches, stages), branches, stages));
}

Bytes cha_sequential(std::uint64_t n, std::uint64_t work, int branches, int stages) {
  Bytes out;
  out.reserve(n * kChaToken);
  for (std::uint64_t i = 0; i < n; ++i) {
    Block b = make_block(i);
    const int branch = static_cast<int>(i % static_cast<std::uint64_t>(branches));
    for (int s = 0; s < stages; ++s) mix(b, work, stage_seed(branch, s));
    const auto* at = reinterpret_cast<const std::byte*>(b.data());
    out.insert(out.end(), at, at + kChaToken);
  }
  return out;
}

}  // namespace redflow::stream
