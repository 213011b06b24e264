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
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream {

class Inbox;
class TokenQueue;

// One operator's part of a checkpoint: Chandy-Lamport's local state and
// the state of its input channels (docs/streams.md, "When a node is lost").
struct OperatorCheckpoint {
  bool finished = false;         // it had finished: restored finished, its outputs closed
  std::vector<std::byte> state;  // Operator::snapshot()
  // Per input: the tokens that were in flight, read after its snapshot and
  // before that input's barrier; restored ahead of everything else.
  std::vector<std::vector<std::byte>> channels;
  friend bool operator==(const OperatorCheckpoint&, const OperatorCheckpoint&) = default;
};
// The epoch of an operator's last report, once it finished: its state from
// then on, for every later checkpoint.
inline constexpr std::uint32_t kFinalEpoch = 0xFFFFFFFF;

// Which part of the program runs here, and how its remote streams behave.
struct NodePart {
  std::vector<char> local;          // per instance: it runs in this process
  bool two_level = true;            // Inbox buffering (inbox.hpp)
  // Per stream from elsewhere: its credit window in tokens (0: none; the
  // producer's node sends what it has). credit_windows() computes it.
  std::vector<std::uint64_t> credit_window{};
  std::function<void()> outgoing;   // a producer here wrote to (or closed) a stream bound elsewhere
  // Checkpoints, when set (called on an operator's thread): operator `op`'s
  // part of `epoch` is whole (channels recorded), or, as kFinalEpoch, it
  // finished. The barriers of streams bound elsewhere: outgoing_barrier().
  std::function<void(std::size_t op, std::uint32_t epoch, OperatorCheckpoint)> on_checkpoint{};
  // When set: a `collect` operator here gathered `bytes` at `offset` of its
  // output (called on its thread after each firing that gathered some).
  // Other operators whose results are outputs report them at the end.
  std::function<void(std::size_t op, std::size_t offset, std::span<const std::byte> bytes)> on_output{};
  // Where this run starts: per instance, a checkpoint to restore (none:
  // start afresh), and the last checkpoint epoch used (the next is epoch + 1).
  std::vector<std::optional<OperatorCheckpoint>> restore{};
  std::uint32_t epoch = 0;
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
  // The I/O thread took tokens from stream `stream` (bound elsewhere): a
  // producer waiting for room in it may fire again.
  void took_outgoing(std::size_t stream);
  // A stream from another node as it arrives here (null unless it does):
  // the I/O thread takes its credit and its most tokens waiting from it.
  Inbox* incoming_inbox(std::size_t stream) const;
  // Checkpoints (NodePart::on_checkpoint set): the sources here take
  // checkpoint `epoch`; and the barrier of `epoch` on a stream from another
  // node lies after `position` tokens. Any thread, after prepare().
  void request_checkpoint(std::uint32_t epoch);
  void deliver_barrier(std::size_t stream, std::uint32_t epoch, std::uint64_t position);
  // The barrier slot of a stream bound elsewhere (op_state.hpp's packing; 0:
  // none yet), for the I/O thread to send each barrier in order with its
  // tokens: read after popping them, it shows every barrier those tokens
  // are beyond.
  std::uint64_t outgoing_barrier(std::size_t stream) const;
  // Ends the run with `error` (the link broke, another node failed).
  void abort(Status error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace redflow::stream
