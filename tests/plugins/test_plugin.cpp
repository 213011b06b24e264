// A small actor plugin the tests load with Registry::load_plugin (and the CLI
// with --lib): it shows the shape of a plugin and proves that actors defined
// in a separately compiled .so run like built-ins.
//   test.negate  output[i] = -input[i] for int32s (wrapping: -INT32_MIN == INT32_MIN)
//   test.fill    no inputs; every int32 of the output = N (args: value=N, N may be negative)
//   test.add2    output[i] = input0[i] + input1[i] for int32s, shape declared in one line (shape::elementwise)
//   test.add2_unchecked  the same function without a shape: a graph giving it one input must not crash silently
//   test.crash   crashes (SIGSEGV) inside its parallel loop, for the crash report naming the actor;
//                after sleeping ms=N milliseconds first if given (a worker slow to die); with
//                runs=PATH,slow_from=K, only from its K-th run on (counted in PATH across processes);
//                with runs=PATH,crashes=K only its first K runs crash, later ones write zeros and end
//                (a worker lost once, the actor then runs to the end elsewhere)
//   test.refuse  always refuses with ctx.fail("refused on purpose")
//   test.sleep   output = its first input (same size), after sleeping ms=N milliseconds (default 5):
//                an actor that takes time, for joins and stragglers; with until=PATH it waits
//                instead until the file PATH exists (at most ms): a gate a test opens on an event

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "redflow/registry.hpp"

namespace {

std::optional<std::int32_t> parse_value(std::string_view args) {
  auto raw = redflow::ActorContext::find_arg(args, "value");
  if (!raw) return std::nullopt;
  std::int32_t v = 0;
  auto [ptr, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), v);
  if (ec != std::errc() || ptr != raw->data() + raw->size()) return std::nullopt;
  return v;
}

void negate(redflow::ActorContext& ctx) {
  if (ctx.num_inputs() != 1 || ctx.input_bytes(0).size() != ctx.output_bytes().size()) {
    ctx.fail("needs one int32 input and an output of the same size");
    return;
  }
  // Negated as uint32: -INT32_MIN overflows as int32 (UB), wraps as uint32.
  auto in = ctx.input<std::uint32_t>(0);
  auto out = ctx.output<std::uint32_t>();
  ctx.parallel_for(0, out.size(), [&](std::size_t i) { out[i] = 0u - in[i]; });
}

void fill(redflow::ActorContext& ctx) {
  auto value = parse_value(ctx.args());
  if (!value) {
    ctx.fail("needs an int32 arg 'value'");
    return;
  }
  auto out = ctx.output<std::int32_t>();
  ctx.parallel_for(0, out.size(), [&](std::size_t i) { out[i] = *value; });
}

void add2(redflow::ActorContext& ctx) {
  auto a = ctx.input<const std::uint32_t>(0);
  auto b = ctx.input<const std::uint32_t>(1);
  auto out = ctx.output<std::uint32_t>();
  ctx.parallel_for(0, out.size(), [&](std::size_t i) { out[i] = a[i] + b[i]; });
}

// This run's number (1, 2, ...) among every process's runs that append to `path`.
std::uint64_t count_run(std::string_view path) {
  const int fd = ::open(std::string(path).c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd < 0) return 0;
  struct stat st {};
  const char one = 1;
  const bool ok = ::write(fd, &one, 1) == 1 && ::fstat(fd, &st) == 0;
  ::close(fd);
  return ok ? static_cast<std::uint64_t>(st.st_size) : 0;
}

void crash(redflow::ActorContext& ctx) {
  bool slow = true, crashes = true;
  if (const auto runs = redflow::ActorContext::find_arg(ctx.args(), "runs")) {
    const std::uint64_t run = count_run(*runs);
    slow = run >= redflow::ActorContext::find_arg_u64(ctx.args(), "slow_from").value_or(1);
    if (const auto limit = redflow::ActorContext::find_arg_u64(ctx.args(), "crashes")) crashes = run <= *limit;
  }
  if (const auto ms = redflow::ActorContext::find_arg_u64(ctx.args(), "ms"); ms && slow) std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
  auto out = ctx.output<std::uint32_t>();
  ctx.parallel_for(0, out.size(), [&](std::size_t i) {
    if (crashes && i + 1 == out.size()) std::raise(SIGSEGV);  // as a wild pointer would
    out[i] = 0;
  });
}

void sleep_then_copy(redflow::ActorContext& ctx) {
  if (ctx.num_inputs() < 1 || ctx.input_bytes(0).size() != ctx.output_bytes().size()) {
    ctx.fail("needs a first input of the output's size");
    return;
  }
  const auto ms = redflow::ActorContext::find_arg_u64(ctx.args(), "ms");
  const auto wait = std::chrono::milliseconds(ms ? *ms : 5);
  if (const auto until = redflow::ActorContext::find_arg(ctx.args(), "until")) {
    const std::string path(*until);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    struct stat st;
    while (::stat(path.c_str(), &st) != 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // polling the file the test makes
  } else {
    std::this_thread::sleep_for(wait);
  }
  std::memcpy(ctx.output_bytes().data(), ctx.input_bytes(0).data(), ctx.output_bytes().size());
}

}  // namespace

REDFLOW_PLUGIN(reg) {
  reg.add("test.sleep", sleep_then_copy);
  reg.add("test.add2", add2, redflow::shape::elementwise<std::uint32_t>(2));
  reg.add("test.add2_unchecked", add2);
  reg.add("test.crash", crash);
  reg.add("test.refuse", [](redflow::ActorContext& ctx) { ctx.fail("refused on purpose"); });
  reg.add("test.negate",
          redflow::ActorSpec{negate,
                             [](const redflow::ActorShape& s) -> std::string {
                               if (s.input_bytes.size() != 1) return "expects 1 input";
                               if (s.input_bytes[0] % 4 != 0) return "input 0 is not a whole number of int32";
                               if (s.output_bytes != s.input_bytes[0]) return "output size differs from input size";
                               return "";
                             },
                             false, "int32 element-wise negation (wrapping)"});
  reg.add("test.fill", redflow::ActorSpec{fill,
                                          [](const redflow::ActorShape& s) -> std::string {
                                            if (!s.input_bytes.empty()) return "expects no inputs";
                                            if (s.output_bytes % 4 != 0) return "output is not a whole number of int32";
                                            if (!parse_value(s.args)) return "needs an int32 arg 'value' (value=N)";
                                            return "";
                                          },
                                          false, "fills its int32 output with N (args: value=N)"});
}
