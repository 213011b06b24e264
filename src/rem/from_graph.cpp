// Any redflow graph as a REM program, so every graph can also run with no
// driver: data node -> label, actor -> task, input -> input label, constant ->
// a task without requirements that writes it, output -> result label.
#include <fmt/format.h>

#include "redflow/rem.hpp"
#include "runtime/tile.hpp"

namespace redflow::rem {

Result<Program> from_graph(const Graph& graph, const Registry& registry) {
  // The same checks Runtime::load makes (structure, functions, shape checks),
  // so a graph refused there is refused here with the same message.
  RuntimeOptions one_tile;
  one_tile.tiles = 1;
  REDFLOW_RETURN_IF_ERROR(validate(graph, registry, one_tile));
  Program p(graph.name());
  std::string identity = graph.to_dot();
  for (DataId d = 0; d < graph.data().size(); ++d) {
    const DataNode& n = graph.data(d);
    LabelId l = n.kind == DataKind::kInput ? p.input(n.name, n.bytes) : p.label(n.name, n.bytes);
    if (l != d) return Status::Internal("label ids must follow data node ids");
    if (n.kind == DataKind::kOutput) p.result(l);
    if (n.kind == DataKind::kConstant) {
      // The constant's bytes are part of the program: hash them into its identity.
      identity += fmt::format("\nconstant {} {}", n.name, n.contents.size());
      identity.append(reinterpret_cast<const char*>(n.contents.data()), n.contents.size());
      auto contents = std::make_shared<const Value>(n.contents);
      p.task("constant " + n.name, {}, {l}, [contents](std::span<const std::span<const std::byte>>, std::span<Value> out) {
        out[0] = *contents;
        return Status::Ok();
      });
    }
  }
  for (ActorId a = 0; a < graph.actors().size(); ++a) {
    const ActorNode& an = graph.actor(a);
    const ActorSpec* spec = registry.find(an.function);
    // Copies, not references: the program outlives neither the graph nor the registry it came from otherwise.
    auto fn = spec->function;
    std::string name = an.name, args = an.args;
    std::vector<LabelId> required(an.inputs.begin(), an.inputs.end());
    p.task(an.name, required, {an.outputs[0]},
           [fn, name, args](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
             ActorContext ctx(name, args, in, std::span<std::byte>(out[0]), nullptr);
             runtime::invoke_actor(fn, ctx);  // an exception or a port it lacks fails the task, as on a tile
             if (ctx.failure()) return Status::Internal("actor '" + name + "': " + *ctx.failure());
             return Status::Ok();
           });
  }
  p.set_identity(std::move(identity));
  REDFLOW_RETURN_IF_ERROR(p.validate());
  return p;
}

}  // namespace redflow::rem
