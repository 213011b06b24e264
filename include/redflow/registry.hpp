// Registry: the actor functions a graph may name, by name. Functions come with
// the binary (built-ins, Registry::add) or from a plugin shared library that
// exports REDFLOW_PLUGIN's entry point. A shape check lets a function refuse,
// at load time and naming the actor, inputs it cannot handle.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "redflow/actor_context.hpp"
#include "redflow/status.hpp"

namespace redflow {

using ActorFunction = std::function<void(ActorContext&)>;

// What a shape check sees: byte sizes of the inputs (by port) and output, and the args.
struct ActorShape {
  std::span<const std::size_t> input_bytes;
  std::size_t output_bytes;
  std::string_view args;
};
// Returns an error message, or an empty string when the shape is acceptable.
using ShapeCheck = std::function<std::string(const ActorShape&)>;

// How a special actor's output shares bytes with its inputs, so that the
// driver sets pointers instead of copying (section 4.7 of Kühbacher et al.).
enum class ActorAlias : std::uint8_t {
  kNone,
  kInputRange,     // output = input 0's bytes [offset, offset + output size), args "offset=BYTES" (rf.split)
  kConcatenation,  // output = the inputs in port order (rf.collect)
  kVote,           // output = the value at least two inputs agree on, voted by checksum (rf.compare)
};

struct ActorSpec {
  ActorFunction function;
  ShapeCheck check;          // optional
  bool on_driver = false;    // special actors (split, collect, reorder) always run on the driver
  std::string summary;       // one line for `redflow actors`
  ActorAlias alias = ActorAlias::kNone;  // lets the driver run it without copying; function stays the reference
};

// Shape checks for the common cases, one line at registration:
//   reg.add("my.scale", scale, redflow::shape::elementwise<std::int32_t>(1));
namespace shape {

// Exactly `n` inputs; sizes unchecked.
inline ShapeCheck inputs(std::size_t n) {
  return [n](const ActorShape& s) -> std::string {
    if (s.input_bytes.size() == n) return "";
    return "expects " + std::to_string(n) + " input(s) (ports 0.." + std::to_string(n == 0 ? 0 : n - 1) + "), the graph gives " +
           std::to_string(s.input_bytes.size());
  };
}

// Exactly `n` inputs and an output, all of the same size, a whole number of
// T: the rule of element-wise actors (out[i] = f(in0[i], in1[i], ...)).
template <typename T>
ShapeCheck elementwise(std::size_t n) {
  return [n, arity = inputs(n)](const ActorShape& s) -> std::string {
    if (std::string problem = arity(s); !problem.empty()) return problem;
    if (s.output_bytes % sizeof(T) != 0)
      return "output of " + std::to_string(s.output_bytes) + " bytes is not a whole number of " + std::to_string(sizeof(T)) + "-byte elements";
    for (std::size_t p = 0; p < s.input_bytes.size(); ++p)
      if (s.input_bytes[p] != s.output_bytes)
        return "input " + std::to_string(p) + " has " + std::to_string(s.input_bytes[p]) + " bytes, the output " +
               std::to_string(s.output_bytes) + " (element-wise: every input and the output have the same size)";
    return "";
  };
}

}  // namespace shape

class Registry {
 public:
  // rf.split, rf.collect, rf.reorder, i32.add, i32.mul, i32.matmul, i32.sort (docs/actors.md).
  static Registry with_builtins();

  // Registers `name`. A name is registered once: adding one that is already
  // there is refused (the first function stays) and remembered in status(),
  // which Runtime::load(), Runtime::check() and load_plugin() then return,
  // naming it. Returns *this so adds chain.
  Registry& add(std::string name, ActorFunction function);
  Registry& add(std::string name, ActorSpec spec);
  // A function with its shape check, e.g. shape::elementwise<std::int32_t>(1):
  // graphs that give it the wrong number or sizes of inputs are refused at
  // load (and by `redflow graph`), naming the actor, instead of crashing it.
  Registry& add(std::string name, ActorFunction function, ShapeCheck check) {
    ActorSpec spec;
    spec.function = std::move(function);
    spec.check = std::move(check);
    return add(std::move(name), std::move(spec));
  }
  const ActorSpec* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // Ok, or the first refused add: "actor function 'x' is registered twice".
  const Status& status() const { return status_; }

  // dlopen()s `path` and calls its `redflow_register_actors` entry point.
  Status load_plugin(const std::string& path);

 private:
  std::map<std::string, ActorSpec, std::less<>> specs_;
  Status status_;
};

}  // namespace redflow

// Entry point of an actor plugin (.so): define it once in the plugin.
//   REDFLOW_PLUGIN(reg) { reg.add("my.scale", scale); }
#define REDFLOW_PLUGIN(reg_name)                                                     \
  static void redflow_plugin_body(::redflow::Registry& reg_name);                    \
  extern "C" int redflow_register_actors(::redflow::Registry* registry) {            \
    redflow_plugin_body(*registry);                                                  \
    return 0;                                                                        \
  }                                                                                  \
  static void redflow_plugin_body(::redflow::Registry& reg_name)
