// dt.mix and dt.fail_if (actors.hpp).
#include "actors.hpp"

#include <cstdint>
#include <string>

namespace redflow::difftest {
namespace {

// out[i] = salt + sum over ports p >= first of (p + 1) * in_p[i mod |in_p|].
void mix_from(ActorContext& ctx, std::size_t first) {
  auto out = ctx.output<std::uint8_t>();
  const auto salt = static_cast<std::uint8_t>(ActorContext::find_arg_u64(ctx.args(), "salt").value_or(0));
  ctx.parallel_for(0, out.size(), [&](std::size_t i) {
    std::uint8_t v = salt;
    for (std::size_t p = first; p < ctx.num_inputs(); ++p) {
      auto in = ctx.input<std::uint8_t>(p);
      if (!in.empty()) v = static_cast<std::uint8_t>(v + (p + 1) * in[i % in.size()]);
    }
    out[i] = v;
  });
}

void run_mix(ActorContext& ctx) { mix_from(ctx, 0); }

void run_fail_if(ActorContext& ctx) {
  if (ctx.num_inputs() < 1 || ctx.input_bytes(0).size() < 1) {
    ctx.fail("needs the FAIL flag on input 0");
    return;
  }
  if (ctx.input<std::uint8_t>(0)[0] != 0) {
    ctx.fail("failing on purpose: the FAIL input asks for it");
    return;
  }
  mix_from(ctx, 1);
}

std::string check_fail_if(const ActorShape& s) {
  if (s.input_bytes.empty() || s.input_bytes[0] != 4) return "input 0 must be the 4-byte FAIL flag";
  return "";
}

}  // namespace

void register_difftest_actors(Registry& reg) {
  reg.add("dt.mix", ActorSpec{run_mix, nullptr, false, "differential tester: byte mix of any inputs into any output size (args: salt=N)"});
  reg.add("dt.fail_if", ActorSpec{run_fail_if, check_fail_if, false,
                                  "differential tester: fails when input 0 (FAIL) is non-zero, else dt.mix of the other inputs"});
}

}  // namespace redflow::difftest

#ifdef REDFLOW_DIFFTEST_PLUGIN
REDFLOW_PLUGIN(reg) { redflow::difftest::register_difftest_actors(reg); }
#endif
