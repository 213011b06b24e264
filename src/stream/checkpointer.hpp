// Checkpointer: consistent checkpoints of the operators a Runner fires
// (docs/streams.md, "When a node is lost"), Chandy-Lamport's snapshot with
// its markers as token counts. A checkpoint `epoch` starts at the sources
// (request()): each snapshots its state between two firings and puts a
// barrier on each output, at the number of tokens written so far. An
// operator snapshots as soon as a barrier is known on any input (it may not
// read past one it has not snapshotted), puts barriers on its outputs, and
// records each input's tokens from where it had read to that input's
// barrier: the tokens in flight across the cut, copied from the queue once
// there. Once those are whole its part is reported
// (NodePart::on_checkpoint). A stream that closed without a barrier has it
// at its end. One checkpoint is taken at a time: the driver asks for the
// next once the last is whole.
//
// The barriers overtake the tokens queued before them (Flink's unaligned
// checkpoints rather than its aligned ones): streams here are unbounded, so
// a source far ahead of its readers, or a cycle that passes one token per
// lap, would hold an aligned barrier back until everything before it was
// read. The price is the queued tokens in the checkpoint.
//
// Barriers are positions, not tokens in the queue: a stream's barrier slot
// says "epoch e lies after p tokens", so a barrier from another node needs
// no ordering with the tokens (deliver_barrier()).
//
// Thread-safety: request() and deliver_barrier() from any thread; the rest
// on the thread that fires the operator, between firings.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "stream/op_state.hpp"
#include "stream/runner.hpp"

namespace redflow::stream {

class Checkpointer {
 public:
  Checkpointer(const Program& program, const NodePart& part);

  // Each stream's barrier slot (an OpState's `barrier` per input).
  const std::atomic<std::uint64_t>* slot(std::size_t stream) const { return &slots_[stream]; }
  void request(std::uint32_t epoch);
  std::uint32_t requested() const { return requested_.load(std::memory_order_acquire); }
  void deliver_barrier(std::size_t stream, std::uint32_t epoch, std::uint64_t position);

  // Before a firing: snapshots `s` when its next epoch is due (a source
  // asked, or an input reached its barrier), and ends the channel
  // recordings whose barrier came. Marks `s.wrote` where it put barriers.
  void before_step(OpState& s);
  // After `s` finished and closed its outputs: its channels end with what it
  // read, and its final state is reported (kFinalEpoch).
  void finished(OpState& s);

 private:
  // Where `epoch`'s barrier lies on input `i` of `s`: its slot, or the end of
  // a closed stream, or kNoBarrier.
  std::uint64_t barrier_at(const OpState& s, std::size_t i, std::uint32_t epoch) const;
  void snapshot(OpState& s, std::uint32_t epoch);
  void advance(OpState& s);
  void report(OpState& s);

  const NodePart& part_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> slots_;
  // Per operator: it starts a checkpoint itself when asked, as the sources
  // do: a source, or an operator no source reaches (a cycle of its own),
  // where no barrier would ever come.
  std::vector<char> initiates_;
  std::atomic<std::uint32_t> requested_;
};

}  // namespace redflow::stream
