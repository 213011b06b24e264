// The sequential reference interpreter (interpreter.hpp).
#include "interpreter.hpp"

#include <exception>

namespace redflow::difftest {

Reference interpret(const Graph& g, const Registry& reg, const Inputs& inputs) {
  Reference ref;
  ref.data.resize(g.data().size());
  for (DataId d = 0; d < g.data().size(); ++d) {
    const DataNode& n = g.data(d);
    if (n.kind == DataKind::kConstant) {
      ref.data[d] = n.contents;
    } else if (n.kind == DataKind::kInput) {
      auto it = inputs.find(n.name);
      if (it != inputs.end()) ref.data[d].assign(it->second.begin(), it->second.end());
      ref.data[d].resize(n.bytes);
    } else {
      // Filled with a pattern, not zeros: an actor that does not write its whole output shows.
      ref.data[d].assign(n.bytes, std::byte{0xA5});
    }
  }
  std::vector<std::span<const std::byte>> ins;
  for (ActorId a : g.topological_order()) {
    const ActorNode& an = g.actor(a);
    const ActorSpec* spec = reg.find(an.function);
    if (spec == nullptr) {
      ref.failed = true;
      ref.error = "actor '" + an.name + "': unknown function '" + an.function + "'";
      return ref;
    }
    ins.clear();
    for (DataId d : an.inputs) ins.emplace_back(ref.data[d]);
    ActorContext ctx(an.name, an.args, ins, std::span<std::byte>(ref.data[an.outputs[0]]), nullptr);
    try {
      spec->function(ctx);
    } catch (const std::exception& e) {
      ctx.fail(std::string("threw: ") + e.what());
    }
    if (ctx.failure()) {
      ref.failed = true;
      ref.error = "actor '" + an.name + "': " + *ctx.failure();
      return ref;
    }
  }
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kOutput) ref.outputs[g.data(d).name] = ref.data[d];
  return ref;
}

}  // namespace redflow::difftest
