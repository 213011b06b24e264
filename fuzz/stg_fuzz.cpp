// libFuzzer target: the STG task-graph reader (schedule::parse_stg), and HEFT
// on every problem it accepts: the schedule must place every task once,
// after its predecessors, on an existing processor.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "schedule/heft.hpp"
#include "schedule/stg.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "stg_fuzz: %s\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  const std::size_t processors = size % 4 + 1;
  auto p = redflow::schedule::parse_stg(in, "fuzz", processors);
  if (!p.ok()) {
    if (p.status().message().find("STG 'fuzz'") == std::string::npos) fail("an error that does not name the input", text);
    return 0;
  }
  const redflow::schedule::HeftResult r = redflow::schedule::heft(*p);
  const std::size_t n = p->cost.size();
  if (r.proc.size() != n || r.order.size() != n) fail("HEFT did not place every task", text);
  for (std::size_t t = 0; t < n; ++t) {
    if (r.proc[t] >= processors) fail("HEFT used a processor that does not exist", text);
    for (const auto& [s, c] : p->successors[t])
      if (r.start[s] + 1e-9 < r.finish[t]) fail("a task starts before its predecessor finishes", text);
  }
  return 0;
}
