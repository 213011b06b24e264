// ActorContext: what an actor function sees while it runs: spans over its
// input slots and its output slot, its args string, and a parallel loop over
// the cores of the tile it runs on (the paper's Fig. 4). Actors are pure: they
// read inputs, write their whole output, allocate nothing on the heap and
// report a problem with fail() instead of throwing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace redflow {

// Runs chunk(begin, end) over a split of [begin, end) on the tile's cores and
// returns when every chunk is done.
class ParallelLoop {
 public:
  virtual ~ParallelLoop() = default;
  virtual unsigned cores() const = 0;
  virtual void run(std::size_t begin, std::size_t end, void (*chunk)(void*, std::size_t, std::size_t), void* closure) = 0;
};

// Marks the calling thread as running `actor` while it lives, so that a
// crash (SIGSEGV, ...) inside it is reported with the actor's name when the
// program called report_actor_crashes() (redflow/runtime.hpp). The runtime
// sets it around every actor call and every parallel_for chunk.
class ActorContext;
class ActorCrashScope {
 public:
  explicit ActorCrashScope(std::string_view actor);
  // The actor `ctx` runs: its name is looked up only if a crash is reported.
  explicit ActorCrashScope(const ActorContext& ctx);
  ~ActorCrashScope();
  ActorCrashScope(const ActorCrashScope&) = delete;
  ActorCrashScope& operator=(const ActorCrashScope&) = delete;

 private:
  const char* previous_data_;
  std::size_t previous_size_;
  const ActorContext* previous_context_;
};

class Graph;
namespace runtime {
struct ChainedContext;
}

class ActorContext {
 public:
  ActorContext(std::string_view actor_name, std::string_view args, std::span<const std::span<const std::byte>> inputs,
               std::span<std::byte> output, ParallelLoop* loop)
      : actor_name_(actor_name), args_(args), inputs_(inputs), output_(output), loop_(loop) {}
  // The same for actor `actor` of `graph`, which outlives the context: its
  // name and args are read from the graph only when asked (most actors never
  // ask, and the runtime's per-actor path then touches no string).
  ActorContext(const Graph& graph, std::uint32_t actor, std::span<const std::span<const std::byte>> inputs, std::span<std::byte> output,
               ParallelLoop* loop)
      : graph_(&graph), actor_(actor), inputs_(inputs), output_(output), loop_(loop) {}

  std::size_t num_inputs() const { return inputs_.size(); }
  // A port the actor does not have is a bug in the actor (or a graph that
  // gives it fewer inputs than it reads, when it declared no shape): never read
  // past the inputs, it fails the execution with an error naming the actor and
  // the port. Declare the arity at registration (shape::elementwise).
  std::span<const std::byte> input_bytes(std::size_t port) const {
    if (port >= inputs_.size()) [[unlikely]] bad_port(port);
    return inputs_[port];
  }
  std::span<std::byte> output_bytes() const { return output_; }

  // Typed views; the byte size must be a multiple of sizeof(T) (checked at load time by the actor's shape check).
  template <typename T>
  std::span<const T> input(std::size_t port) const {
    auto b = input_bytes(port);
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> output() const {
    return {reinterpret_cast<T*>(output_.data()), output_.size() / sizeof(T)};
  }

  std::string_view actor_name() const { return graph_ != nullptr ? name_in_graph() : actor_name_; }
  std::string_view args() const { return graph_ != nullptr ? args_in_graph() : args_; }
  // Value of `key` in an args string of the form "key=value,key2=value2".
  std::optional<std::string_view> arg(std::string_view key) const { return find_arg(args(), key); }
  static std::optional<std::string_view> find_arg(std::string_view args, std::string_view key);
  static std::optional<std::uint64_t> find_arg_u64(std::string_view args, std::string_view key);

  unsigned cores() const { return loop_ ? loop_->cores() : 1; }

  // Calls body(i) for every i in [begin, end), spread over the tile's cores.
  template <typename Body>
  void parallel_for(std::size_t begin, std::size_t end, Body&& body) {
    parallel_chunks(begin, end, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) body(i);
    });
  }
  // Calls body(b, e) on disjoint chunks covering [begin, end), one per core.
  // What a chunk throws (a port the actor does not have) is kept, and thrown
  // here once every chunk is done, on the actor's own thread: the runtime
  // then fails the execution with it, whichever thread ran the chunk.
  template <typename Body>
  void parallel_chunks(std::size_t begin, std::size_t end, Body&& body) {
    if (end <= begin) return;
    if (!loop_ || loop_->cores() <= 1 || end - begin < 2) {
      body(begin, end);
      return;
    }
    // Each chunk marks its thread as running this actor, for crash reports.
    // An exception must not leave a chunk: on a helper thread it would end
    // the process, and on this one it would leave the loop while the other
    // chunks still run.
    struct Chunk {
      std::remove_reference_t<Body>* body;
      std::string_view actor;
      std::atomic<bool> threw{false};
      std::exception_ptr error{};  // the first chunk's exception
    } chunk{&body, actor_name()};
    loop_->run(begin, end,
               [](void* c, std::size_t b, std::size_t e) {
                 auto* k = static_cast<Chunk*>(c);
                 ActorCrashScope scope(k->actor);
                 try {
                   (*k->body)(b, e);
                 } catch (...) {
                   if (!k->threw.exchange(true)) k->error = std::current_exception();
                 }
               },
               &chunk);
    if (chunk.error) std::rethrow_exception(chunk.error);  // run() returned: every chunk is done, and its writes are seen
  }

  // Marks this execution of the actor as failed; the execution stops with an
  // error naming the actor and this message.
  void fail(std::string message) { failure_ = std::move(message); }
  const std::optional<std::string>& failure() const { return failure_; }

 private:
  friend struct runtime::ChainedContext;  // the runtime moves one context along a chain of actors

  [[noreturn]] void bad_port(std::size_t port) const;
  std::string_view name_in_graph() const;
  std::string_view args_in_graph() const;

  const Graph* graph_ = nullptr;  // when set, the name and args are the graph's actor_'s
  std::uint32_t actor_ = 0;
  std::string_view actor_name_;
  std::string_view args_;
  std::span<const std::span<const std::byte>> inputs_;
  std::span<std::byte> output_;
  ParallelLoop* loop_;
  std::optional<std::string> failure_;
};

}  // namespace redflow
