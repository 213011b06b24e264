// An actor plugin built beside the consumer: compiled against redflow's
// headers only (it links nothing), loaded by plugin_host at run time.
//   consumer.cube  output[i] = input[i]^3 for int32s
#include <cstdint>

#include "redflow/registry.hpp"

REDFLOW_PLUGIN(reg) {
  reg.add("consumer.cube", [](redflow::ActorContext& ctx) {
    auto in = ctx.input<const std::int32_t>(0);
    auto out = ctx.output<std::int32_t>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = in[i] * in[i] * in[i];
  });
}
