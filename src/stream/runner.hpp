// Runner: runs the operators of a stream program that live in this process,
// in either local mode (stream.hpp: run()). In a cluster (stream_worker.cpp)
// a node runs its part of the program, and the streams that cross to other
// nodes meet the process's I/O thread instead of another operator:
//   - a stream from here to elsewhere stays a TokenQueue; the I/O thread is
//     its consumer (outgoing_queue()), rung through NodePart::outgoing;
//   - a stream from elsewhere to here is an Inbox that the I/O thread fills
//     (deliver(), close_incoming()).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream {

class TokenQueue;

// Which part of the program runs here, and how its remote streams behave.
struct NodePart {
  std::vector<char> local;          // per instance: it runs in this process
  bool two_level = true;            // Inbox buffering (inbox.hpp)
  std::function<void()> outgoing;   // a producer here wrote to (or closed) a stream bound elsewhere
};

class Runner {
 public:
  // Without a part, every operator runs here (a local run).
  Runner(const Program& program, const RunOptions& options, const NodePart* part = nullptr);
  ~Runner();

  // Validates the program and builds this part's operators and streams
  // (run() does it when it was not done).
  Status prepare();
  // Starts the local operators and returns when every one of them has
  // finished (or the run failed). Outputs and profile cover this part.
  Result<RunResult> run();

  // The I/O thread's side, for streams whose other end is on another node:
  // after prepare(), from a thread other than run()'s.
  TokenQueue* outgoing_queue(std::size_t stream);  // null unless it leaves this node
  bool incoming(std::size_t stream) const;          // it comes from another node to one here
  void deliver(std::size_t stream, const void* tokens, std::size_t n);
  void close_incoming(std::size_t stream);
  // Ends the run with `error` (the link broke, another node failed).
  void abort(Status error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace redflow::stream
