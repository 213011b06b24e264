// Crash reports that name the actor: a plugin author's bug (reading past an
// input, a null pointer) must not end in a silent SIGSEGV; a read of an input
// port the actor lacks fails its execution instead (ActorContext::bad_port). Each thread
// remembers which actor it runs (ActorCrashScope); report_actor_crashes()
// installs signal handlers that print it and then crash as before, so core
// dumps, debuggers and sanitizers still see the original fault.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "redflow/actor_context.hpp"
#include "redflow/graph.hpp"
#include "redflow/runtime.hpp"
#include "runtime/current_actor.hpp"
#include "runtime/tile.hpp"

namespace redflow {

namespace runtime {
[[gnu::tls_model("initial-exec")]] thread_local CurrentActor current_actor;
}  // namespace runtime

namespace {

using runtime::current_actor;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction previous_actions[std::size(kSignals)];

void write_all(const char* text, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}
void write_text(const char* text) { write_all(text, std::strlen(text)); }

const char* describe(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bad memory access)";
    case SIGFPE: return "SIGFPE (arithmetic error, e.g. division by zero)";
    case SIGILL: return "SIGILL (illegal instruction)";
  }
  return "a fatal signal";
}

// Only async-signal-safe calls: write(2), sigaction(2), raise(3).
void on_crash(int sig) {
  write_text("redflow: fatal: ");
  write_text(describe(sig));
  // A context's name is a view into its graph: reading it allocates nothing.
  const std::string_view actor = current_actor.context != nullptr ? current_actor.context->actor_name()
                                                                  : std::string_view(current_actor.data, current_actor.size);
  if (current_actor.data != nullptr || current_actor.context != nullptr) {
    write_text(" inside actor '");
    write_all(actor.data(), actor.size());
    write_text("': the actor read or wrote outside its data? Declare its inputs and sizes at registration "
               "(docs/actors.md, \"Shapes\") and run it under AddressSanitizer.\n");
  } else {
    write_text(" in redflow itself, outside any actor.\n");
  }
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == sig) sigaction(sig, &previous_actions[i], nullptr);
  raise(sig);  // the previous handler (default: terminate with a core) takes over
}

}  // namespace

// A crash scope sets name and context both (RunningActor, inside the
// runtime, only the context), keeping what it replaced in its fields so
// that the public header need not show the thread-local.
ActorCrashScope::ActorCrashScope(std::string_view actor) {
  const runtime::CurrentActor previous = std::exchange(current_actor, runtime::CurrentActor{actor.data(), actor.size(), nullptr});
  previous_data_ = previous.data;
  previous_size_ = previous.size;
  previous_context_ = previous.context;
}

ActorCrashScope::ActorCrashScope(const ActorContext& ctx) {
  const runtime::CurrentActor previous = std::exchange(current_actor, runtime::CurrentActor{nullptr, 0, &ctx});
  previous_data_ = previous.data;
  previous_size_ = previous.size;
  previous_context_ = previous.context;
}

ActorCrashScope::~ActorCrashScope() { current_actor = runtime::CurrentActor{previous_data_, previous_size_, previous_context_}; }

std::string_view ActorContext::name_in_graph() const { return graph_->actor(actor_).name; }
std::string_view ActorContext::args_in_graph() const { return graph_->actor(actor_).args; }

void ActorContext::bad_port(std::size_t port) const {
  // Caught by the runtime's call of the actor (runtime::invoke_actor), which
  // fails this execution with the message: the process goes on.
  throw runtime::ActorPortError("actor '" + std::string(actor_name_) + "' reads input port " + std::to_string(port) + " but has " +
                                std::to_string(inputs_.size()) + " input(s); its graph gives it too few edges, or its function should " +
                                "declare how many inputs it takes (docs/actors.md, \"Shapes\")");
}

void report_actor_crashes() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction action {};
    action.sa_handler = on_crash;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_NODEFER;
    sigaction(kSignals[i], &action, &previous_actions[i]);
  }
}

}  // namespace redflow
