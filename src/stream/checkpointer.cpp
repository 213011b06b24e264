// Consistent checkpoints of a Runner's operators (checkpointer.hpp).
#include "stream/checkpointer.hpp"

#include <utility>

namespace redflow::stream {

Checkpointer::Checkpointer(const Program& program, const NodePart& part)
    : part_(part), slots_(new std::atomic<std::uint64_t>[program.streams().size()]), requested_(part.epoch) {
  for (std::size_t k = 0; k < program.streams().size(); ++k) slots_[k].store(0, std::memory_order_relaxed);
  // Reached from a source: a barrier comes to it.
  const auto& inst = program.instances();
  std::vector<char> reached(inst.size(), 0);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < inst.size(); ++i)
    if (inst[i].spec.inputs == 0) reached[i] = 1, todo.push_back(i);
  while (!todo.empty()) {
    const std::size_t i = todo.back();
    todo.pop_back();
    for (const auto& st : program.streams())
      if (st.from == i && !reached[st.to]) reached[st.to] = 1, todo.push_back(st.to);
  }
  initiates_.resize(inst.size());
  for (std::size_t i = 0; i < inst.size(); ++i) initiates_[i] = inst[i].spec.inputs == 0 || !reached[i];
}

void Checkpointer::request(std::uint32_t epoch) { requested_.store(epoch, std::memory_order_release); }

void Checkpointer::deliver_barrier(std::size_t stream, std::uint32_t epoch, std::uint64_t position) {
  slots_[stream].store(pack_barrier(epoch, position), std::memory_order_release);
}

std::uint64_t Checkpointer::barrier_at(const OpState& s, std::size_t i, std::uint32_t epoch) const {
  // Closed first: a producer puts its barrier before it closes, so a closed
  // stream whose slot has none never gets one (its producer finished first).
  const bool closed = s.in[i].closed();
  const std::uint64_t b = barrier_position(s.barrier[i]->load(std::memory_order_acquire), epoch);
  if (b != kNoBarrier || !closed) return b;
  return s.in[i].total();
}

void Checkpointer::before_step(OpState& s) {
  if (s.recording_any) advance(s);
  if (s.snapped >= requested()) return;
  const std::uint32_t epoch = s.snapped + 1;
  bool due = initiates_[s.index] != 0;
  for (std::size_t i = 0; i < s.in.size() && !due; ++i) due = barrier_at(s, i, epoch) != kNoBarrier;
  if (due) snapshot(s, epoch);
}

void Checkpointer::snapshot(OpState& s, std::uint32_t epoch) {
  StateWriter w;
  s.op->snapshot(w);
  s.snapped = epoch;
  s.safe = s.consumed;  // the barrier to stop at is the next epoch's now: look again
  s.pending = OperatorCheckpoint{false, std::move(w.bytes), std::vector<std::vector<std::byte>>(s.in.size())};
  s.recording_any = false;
  for (std::size_t i = 0; i < s.in.size(); ++i) {
    const std::uint64_t b = barrier_at(s, i, epoch);
    if (b != kNoBarrier && s.consumed[i] >= b) continue;  // reached: nothing in flight
    s.recording[i] = OpState::Recording{true, s.consumed[i], b, {}};
    s.recording_any = true;
  }
  // Before any token beyond it is written (consumers rely on that order).
  for (std::size_t o = 0; o < s.out.size(); ++o) {
    slots_[s.out_stream[o]].store(pack_barrier(epoch, s.out[o]->pushed()), std::memory_order_release);
    s.wrote[o] = 1;
  }
  if (s.recording_any) advance(s);
  else report(s);
}

void Checkpointer::advance(OpState& s) {
  bool open = false;
  for (std::size_t i = 0; i < s.in.size(); ++i) {
    OpState::Recording& r = s.recording[i];
    if (!r.active) continue;
    if (r.until == kNoBarrier) {
      r.until = barrier_at(s, i, s.snapped);
      // Read past it before it was known: keep only the tokens before it.
      if (r.until != kNoBarrier) r.bytes.resize(std::min<std::size_t>(r.bytes.size(), (r.until - r.start) * s.in[i].token_bytes()));
    }
    if (r.until != kNoBarrier && s.consumed[i] < r.until) {
      // The rest is already waiting in the queue: copied from there rather
      // than as the operator reads it, which may be much later (an operator
      // that reads its inputs one after the other).
      const std::uint64_t left = r.until - s.consumed[i];
      if (s.in[i].size() >= left) {
        const std::size_t at = r.bytes.size();
        r.bytes.resize(at + left * s.in[i].token_bytes());
        s.in[i].peek(r.bytes.data() + at, static_cast<std::size_t>(left));
        r.active = false;
      }
    } else if (r.until != kNoBarrier) {
      r.active = false;
    }
    open |= r.active;
  }
  if (!open) {
    s.recording_any = false;
    report(s);
  }
}

void Checkpointer::report(OpState& s) {
  for (std::size_t i = 0; i < s.in.size(); ++i) s.pending.channels[i] = std::move(s.recording[i].bytes), s.recording[i] = {};
  if (part_.on_checkpoint) part_.on_checkpoint(s.index, s.snapped, std::move(s.pending));
  s.pending = {};
}

void Checkpointer::finished(OpState& s) {
  // A channel still recorded ends with what it read: the restored operator
  // reaches its end again without the rest.
  if (s.recording_any) {
    s.recording_any = false;
    report(s);
  }
  StateWriter w;
  s.op->snapshot(w);
  if (part_.on_checkpoint) part_.on_checkpoint(s.index, kFinalEpoch, OperatorCheckpoint{true, std::move(w.bytes), {}});
}

}  // namespace redflow::stream
