// The built-in operators (builtin_operators.hpp). Each fires on as many
// tokens as are waiting, not one, so a firing's fixed cost is shared.
#include "stream/builtin_operators.hpp"

#include "stream/apps/compute_heavy.hpp"
#include "stream/apps/wavelet.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

namespace redflow::stream {

Result<std::uint64_t> number_arg(const Args& args, const std::string& key, std::uint64_t fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  std::uint64_t v = 0;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(it->second.data(), end, v);
  if (ec != std::errc() || p != end) return Status::InvalidArgument("arg " + key + "=" + it->second + " is not a non-negative integer");
  return v;
}

Fired CollectOperator::fire(FiringContext& ctx) {
  // Straight into the result: grow it, read as many as fit.
  const std::size_t size = ctx.token_bytes(0), start = bytes_.size();
  for (;;) {
    const std::size_t at = bytes_.size(), room = std::max<std::size_t>(ctx.available(0), 1);
    bytes_.resize(at + room * size);
    const std::size_t n = ctx.read_many(0, bytes_.data() + at, room);
    bytes_.resize(at + n * size);
    if (n == 0) break;
  }
  if (sink_ && bytes_.size() > start) sink_(start, std::span<const std::byte>(bytes_).subspan(start));
  return Fired::kMore;
}

namespace {

constexpr std::size_t kBurst = 4096;  // tokens a source writes per firing, and a batch read or written at once

// Tokens are made and used where they lie in the streams (reserve / peek)
// wherever an operator can: a token then costs no copy, not a virtual call
// and an atomic store each.

// What waits on input 0 to each of the first `outputs` outputs (any token
// size), copied once: from where it lies into each output's stream.
void forward(FiringContext& ctx, std::size_t outputs) {
  std::size_t n = 0;
  while (const void* tokens = ctx.peek(0, kBurst, n)) {
    for (std::size_t o = 0; o < outputs; ++o) ctx.write_many(o, tokens, n);
    ctx.consume(0, n);
  }
}

// At most `rate` tokens a second (0: no limit), in bursts of a
// millisecond's worth: how a sensor or a slow link hands tokens over.
class Pace {
 public:
  explicit Pace(std::uint64_t rate) : rate_(rate) {}
  // How many of `want` may go now; 0 after a millisecond's sleep when none may.
  std::size_t allow(std::size_t want) {
    if (rate_ == 0) return want;
    const auto now = std::chrono::steady_clock::now();
    if (sent_ == 0) first_ = now;
    const double due = std::chrono::duration<double>(now - first_).count() * static_cast<double>(rate_) + 1;
    if (static_cast<double>(sent_) + 1 > due) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return 0;
    }
    return static_cast<std::size_t>(std::min<double>(static_cast<double>(want), due - static_cast<double>(sent_)));
  }
  void sent(std::size_t n) { sent_ += n; }

 private:
  std::uint64_t rate_, sent_ = 0;
  std::chrono::steady_clock::time_point first_{};
};

// counter n=N [start=S] [step=K] [rate=R]: the source of N 8-byte tokens S,
// S+K, ..., at most R a second when R is given (a paced source: a sensor).
class Counter final : public Operator {
 public:
  Counter(std::uint64_t n, std::uint64_t start, std::uint64_t step, std::uint64_t rate) : left_(n), next_(start), step_(step), pace_(rate) {}
  Fired fire(FiringContext& ctx) override {
    const std::size_t burst = pace_.allow(kBurst);
    if (burst == 0) return Fired::kMore;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(burst, left_));
    // Straight into the stream. In registers: a member may alias the
    // tokens, and would be reloaded or stored per token.
    const std::uint64_t step = step_;
    std::uint64_t v = next_;
    for (std::size_t left = n; left > 0;) {
      const auto room = ctx.reserve_values<std::uint64_t>(0, left);
      for (std::uint64_t& t : room) t = v, v += step;
      ctx.commit(0, room.size());
      left -= room.size();
    }
    next_ = v;
    left_ -= n;
    pace_.sent(n);
    return left_ == 0 ? Fired::kDone : Fired::kMore;
  }
  // A paced counter restored paces from its restart.
  void snapshot(StateWriter& out) const override {
    out.value(left_);
    out.value(next_);
  }
  void restore(StateReader& in) override {
    in.value(left_);
    in.value(next_);
  }

 private:
  std::uint64_t left_, next_, step_;
  Pace pace_;
};

// throttle rate=R: forwards its tokens (any size), at most R a second: a
// slow consumer, to see back-pressure hold a fast producer.
class Throttle final : public Operator {
 public:
  explicit Throttle(std::uint64_t rate) : pace_(rate) {}
  Fired fire(FiringContext& ctx) override {
    const std::size_t want = std::min(ctx.available(0), kBurst);
    if (want == 0) return Fired::kMore;
    const std::size_t n = pace_.allow(want);
    if (n == 0) return Fired::kMore;
    buffer_.resize(ctx.token_bytes(0) * n);
    const std::size_t got = ctx.read_many(0, buffer_.data(), n);
    ctx.write_many(0, buffer_.data(), got);
    pace_.sent(got);
    return Fired::kMore;
  }

 private:
  Pace pace_;
  std::string buffer_;
};

// add: a + b of 8-byte tokens, pairwise (zip).
class Add final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    // Where they lie: each pass as many as both inputs and the output's room hold in one piece.
    for (std::size_t n = std::min(ctx.available(0), ctx.available(1)); n > 0;) {
      const auto a = ctx.peek_values<std::uint64_t>(0, n);
      const auto b = ctx.peek_values<std::uint64_t>(1, a.size());  // available(1) >= n: as many are there
      const auto sum = ctx.reserve_values<std::uint64_t>(0, b.size());
      const std::size_t k = sum.size();
      for (std::size_t i = 0; i < k; ++i) sum[i] = a[i] + b[i];
      ctx.commit(0, k);
      ctx.consume(0, k);
      ctx.consume(1, k);
      n -= k;
    }
    return Fired::kMore;
  }
};

// scale k=K: each 8-byte token times K.
class Scale final : public Operator {
 public:
  explicit Scale(std::uint64_t k) : k_(k) {}
  Fired fire(FiringContext& ctx) override {
    const std::uint64_t k = k_;  // in a register, as in Counter
    for (;;) {
      const auto in = ctx.peek_values<std::uint64_t>(0, kBurst);
      if (in.empty()) break;
      const auto out = ctx.reserve_values<std::uint64_t>(0, in.size());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = in[i] * k;
      ctx.commit(0, out.size());
      ctx.consume(0, out.size());
    }
    return Fired::kMore;
  }

 private:
  std::uint64_t k_;
};

// dup outputs=N: every token to each of N outputs (any token size).
class Dup final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    forward(ctx, ctx.outputs());
    return Fired::kMore;
  }
};

// delay initial=V count=C: writes C tokens V first, then forwards its input.
// What makes a cycle start.
class Delay final : public Operator {
 public:
  Delay(std::uint64_t initial, std::uint64_t count) : initial_(initial), count_(count) {}
  void start(FiringContext& ctx) override {
    for (std::uint64_t i = 0; i < count_; ++i) ctx.write_value(0, initial_);
  }
  Fired fire(FiringContext& ctx) override {
    forward(ctx, 1);
    return Fired::kMore;
  }

 private:
  std::uint64_t initial_, count_;
};

// concat: every token of input 0, to its end, then every token of input 1
// (any size, the same on both). A reader that takes one input whole before
// the other, as a Kahn process may: fed by one producer through both (a
// dup), the second stream must hold all its tokens until the first ends, so
// a bounded stream or credit window there grows by Parks' rule.
class Concat final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    if (at_ == 0 && ctx.drained(0)) at_ = 1;
    std::size_t n = 0;
    while (const void* tokens = ctx.peek(at_, kBurst, n)) {
      ctx.write_many(0, tokens, n);
      ctx.consume(at_, n);
    }
    if (at_ == 0 && ctx.drained(0)) at_ = 1;
    return Fired::kMore;
  }
  bool ready(const FiringContext& ctx) const override { return ctx.available(at_) > 0 || (at_ == 0 && ctx.drained(0)); }
  bool finished(const FiringContext& ctx) const override { return ctx.drained(0) && ctx.drained(1); }
  void snapshot(StateWriter& out) const override { out.value(at_); }
  void restore(StateReader& in) override { in.value(at_); }

 private:
  std::size_t at_ = 0;  // the input it reads now
};

// sum: at end of stream, one token: the sum of its 8-byte input tokens.
class Sum final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override {
    std::uint64_t s = sum_;  // in a register, as in Counter
    for (;;) {
      const auto in = ctx.peek_values<std::uint64_t>(0, kBurst);
      if (in.empty()) break;
      for (const std::uint64_t v : in) s += v;
      ctx.consume(0, in.size());
    }
    sum_ = s;
    return Fired::kMore;
  }
  void finish(FiringContext& ctx) override { ctx.write_value(0, sum_); }
  void snapshot(StateWriter& out) const override { out.value(sum_); }
  void restore(StateReader& in) override { in.value(sum_); }

 private:
  std::uint64_t sum_ = 0;
};

// Every built-in saves its state (the stateless ones have none).
OperatorSpec fixed(std::size_t in, std::size_t out, std::size_t bytes) {
  return OperatorSpec{in, out, std::vector<std::size_t>(in, bytes), std::vector<std::size_t>(out, bytes), true};
}

// A factory of an operator with no args beyond those `make` reads.
template <typename Make>
OperatorFactory simple(OperatorSpec spec, Make make) {
  return OperatorFactory{[spec](const Args&) -> Result<OperatorSpec> { return spec; }, make};
}

}  // namespace

OperatorRegistry OperatorRegistry::with_builtins() {
  OperatorRegistry r;
  r.add("counter", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                     for (const char* k : {"n", "start", "step", "rate"})
                                       if (auto v = number_arg(a, k, 0); !v.ok()) return v.status();
                                     return fixed(0, 1, 8);
                                   },
                                   [](const Args& a) -> std::unique_ptr<Operator> {
                                     return std::make_unique<Counter>(*number_arg(a, "n", 1000), *number_arg(a, "start", 0), *number_arg(a, "step", 1),
                                                                     *number_arg(a, "rate", 0));
                                   }});
  r.add("add", simple(fixed(2, 1, 8), [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Add>(); }));
  r.add("scale", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                   if (auto v = number_arg(a, "k", 2); !v.ok()) return v.status();
                                   return fixed(1, 1, 8);
                                 },
                                 [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Scale>(*number_arg(a, "k", 2)); }});
  r.add("dup", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                 auto n = number_arg(a, "outputs", 2);
                                 if (!n.ok()) return n.status();
                                 if (*n == 0 || *n > 1024) return Status::InvalidArgument("dup: outputs must be 1..1024");
                                 return fixed(1, *n, 0);
                               },
                               [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Dup>(); }});
  r.add("delay", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                   for (const char* k : {"initial", "count"})
                                     if (auto v = number_arg(a, k, 0); !v.ok()) return v.status();
                                   return fixed(1, 1, 8);
                                 },
                                 [](const Args& a) -> std::unique_ptr<Operator> {
                                   return std::make_unique<Delay>(*number_arg(a, "initial", 0), *number_arg(a, "count", 1));
                                 }});
  r.add("throttle", OperatorFactory{[](const Args& a) -> Result<OperatorSpec> {
                                      auto rate = number_arg(a, "rate", 0);
                                      if (!rate.ok()) return rate.status();
                                      if (*rate == 0) return Status::InvalidArgument("throttle: rate must be at least 1 (tokens a second)");
                                      return fixed(1, 1, 0);
                                    },
                                    [](const Args& a) -> std::unique_ptr<Operator> { return std::make_unique<Throttle>(*number_arg(a, "rate", 0)); }});
  r.add("concat", simple(fixed(2, 1, 0), [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Concat>(); }));
  r.add("sum", simple(fixed(1, 1, 8), [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<Sum>(); }));
  r.add("collect", simple(fixed(1, 0, 0), [](const Args&) -> std::unique_ptr<Operator> { return std::make_unique<CollectOperator>(); }));
  // The paper's two applications (docs/stream-apps.md): every node of a cluster has them too.
  add_wavelet_operators(r);
  add_compute_heavy_operators(r);
  return r;
}

}  // namespace redflow::stream
