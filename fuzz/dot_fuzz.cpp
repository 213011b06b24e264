// libFuzzer target: the extended DOT reader (Graph::from_dot_string), and on
// whatever it accepts, everything that reads a graph next: structural and
// registry validation (with the built-ins' argument parsing), the redundancy
// transformation, HEFT, and the DOT writer, whose output must read back as
// the same graph. Any crash, hang, sanitizer report or failed check here is
// a bug; an error Status for bad input is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/dot_input.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "redflow/runtime.hpp"
#include "redflow/schedule.hpp"
#include "schedule/heft.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "dot_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// DOT cannot express a string ending in a backslash, nor keep a backslash
// before a newline (docs/dot.md, "Limitations"); such graphs need not
// survive the round trip. Neither need strings whose escaped form would
// pass the reader's token limit.
bool expressible(const std::string& s) {
  return !(s.size() > redflow::dot::kMaxDotTokenBytes / 2 || s.ends_with('\\') || s.find("\\\n") != std::string::npos || s.find("\\\r") != std::string::npos);
}

bool round_trips(const redflow::Graph& g) {
  auto all_expressible = [](const auto& nodes) {
    for (const auto& n : nodes) {
      if (!expressible(n.name)) return false;
      for (const auto& [k, v] : n.extra)
        if (!expressible(k) || !expressible(v)) return false;
    }
    return true;
  };
  if (!expressible(g.name()) || !all_expressible(g.data()) || !all_expressible(g.actors())) return false;
  for (const auto& a : g.actors())
    if (!expressible(a.function) || !expressible(a.args)) return false;
  for (const auto& d : g.data())
    if (!expressible(d.file)) return false;
  return true;
}

void check_same(const redflow::Graph& a, const redflow::Graph& b, const std::string& dot) {
  bool same = a.name() == b.name() && a.data().size() == b.data().size() && a.actors().size() == b.actors().size();
  for (std::size_t d = 0; same && d < a.data().size(); ++d) {
    const auto &x = a.data()[d], &y = b.data()[d];
    same = x.name == y.name && x.kind == y.kind && x.bytes == y.bytes && x.file == y.file && x.extra == y.extra;
  }
  for (std::size_t i = 0; same && i < a.actors().size(); ++i) {
    const auto &x = a.actors()[i], &y = b.actors()[i];
    same = x.name == y.name && x.function == y.function && x.args == y.args && x.work == y.work &&
           x.redundancy == y.redundancy && x.inputs == y.inputs && x.outputs == y.outputs && x.extra == y.extra;
  }
  if (!same) fail("to_dot() read back as a different graph", dot);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const redflow::Registry registry = redflow::Registry::with_builtins();
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Constants name files relative to the base directory; one that does not
  // exist keeps the fuzzer from reading the machine's files.
  redflow::Result<redflow::Graph> g = redflow::Graph::from_dot_string(text, "/nonexistent-redflow-fuzz-dir");
  // cgraph keeps its lexer's state in globals: no input may disturb the
  // parse after it (a trailing "x", a lone '"' or "/*" once did).
  redflow::Result<redflow::Graph> canary = redflow::Graph::from_dot_string("digraph canary { c [kind=input, bytes=1]; }");
  if (!canary.ok() || canary->name() != "canary" || canary->data().size() != 1)
    fail(("a valid graph does not parse after this input: " + canary.status().ToString()).c_str(), text);
  if (!g.ok()) {
    if (g.status().message().empty()) fail("an error without a message", text);
    return 0;
  }
  if (round_trips(*g)) {
    const std::string dot = g->to_dot();
    redflow::Result<redflow::Graph> again = redflow::Graph::from_dot_string(dot, "/nonexistent-redflow-fuzz-dir");
    if (!again.ok()) fail(("to_dot() output does not parse: " + again.status().ToString()).c_str(), dot);
    check_same(*g, *again, dot);
  }
  if (!g->validate_structure().ok()) return 0;
  redflow::RuntimeOptions options;
  options.tiles = 3;
  options.driver_bytes = std::size_t{1} << 30;
  if (!redflow::validate(*g, registry, options).ok()) return 0;
  redflow::MachineModel machine;
  machine.tiles = 3;
  redflow::heft_schedule(*g, machine, registry);
  for (redflow::Redundancy r : {redflow::Redundancy::kDoubleSame, redflow::Redundancy::kTripleDiff}) {
    redflow::Result<redflow::Graph> red = redflow::apply_redundancy(*g, r, machine, registry);
    if (red.ok()) {
      if (!red->validate_structure().ok()) fail("the redundancy transformation made an invalid graph", text);
      redflow::heft_schedule(*red, machine, registry);
    }
  }
  return 0;
}
