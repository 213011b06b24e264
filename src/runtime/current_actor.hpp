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

// Makes an actor the thread's current one for the scope's lifetime, then
// puts back the one before. Inline: the per-actor path (invoke_actor).
// ActorCrashScope (redflow/actor_context.hpp) is the same for callers outside the runtime.
class RunningActor {
 public:
  explicit RunningActor(CurrentActor now) : previous_(current_actor) { current_actor = now; }
  ~RunningActor() { current_actor = previous_; }
  RunningActor(const RunningActor&) = delete;
  RunningActor& operator=(const RunningActor&) = delete;

 private:
  CurrentActor previous_;
};

}  // namespace redflow::runtime
