// The actor each thread runs now, for crash reports: crash_report.cpp's
// signal handler names it (report_actor_crashes). Set and restored around
// every actor call, so both must be cheap: plain pointers, no constructors
// (a signal handler reads them), and the initial-exec TLS model (in the
// shared library the default model calls __tls_get_addr on every access;
// this one is a load). Twenty-four bytes of static TLS, which glibc keeps in
// reserve also for a library loaded later with dlopen (the Python module).
// Per thread, so no synchronisation.
#pragma once

#include <cstddef>

namespace redflow {
class ActorContext;
}

namespace redflow::runtime {

struct CurrentActor {
  const char* data = nullptr;
  std::size_t size = 0;
  const ActorContext* context = nullptr;  // when set, the name is asked of it (data, size unused)
};
// Defined in crash_report.cpp.
[[gnu::tls_model("initial-exec")]] extern thread_local CurrentActor current_actor;

// Makes `ctx` the thread's current actor for the scope's lifetime, then
// puts back the one before. Inline: the per-actor path (invoke_actor). Only
// the context changes: a context set wins over a name, so the name an outer
// ActorCrashScope set shows again once this one ends.
// ActorCrashScope (redflow/actor_context.hpp) is the same for callers outside the runtime.
class RunningActor {
 public:
  explicit RunningActor(const ActorContext& ctx) : previous_(current_actor.context) { current_actor.context = &ctx; }
  ~RunningActor() { current_actor.context = previous_; }
  RunningActor(const RunningActor&) = delete;
  RunningActor& operator=(const RunningActor&) = delete;

 private:
  const ActorContext* previous_;
};

}  // namespace redflow::runtime
