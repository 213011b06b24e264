// Allocator: when the server asks a batch system (Slurm) for workers, and
// when it takes a request back, as plain state with no process or clock of
// its own. The server's loop feeds it what the batch system lists, which
// workers are at the server and how many the jobs wait for; it answers with
// a Plan (allocations to ask for, allocations to cancel), which the effects
// side (slurm_allocations.hpp) carries out. tests/server_allocator_test.cpp
// drives it directly.
//
// Policy (docs/server.md, "Workers from Slurm"):
// - Ask when jobs wait: the workers the queued jobs (and running ones short
//   of workers) want beyond the idle and returning ones, less those already
//   coming (asked for and not yet at the server: the workers of an
//   allocation waiting in the batch queue, or of one running for less than
//   `join_timeout_s` that have not joined yet), in allocations of
//   `workers_per_allocation` workers each.
// - Bounded: never more than `max_workers` workers in allocations not ended,
//   whatever the jobs want.
// - Take back what is no longer wanted: an allocation still waiting in the
//   batch queue is cancelled, newest first, when the workers coming without
//   it cover what the jobs want. A running allocation is never cancelled
//   for that: its workers leave by themselves after their idle timeout, and
//   the allocation ends with the last of them.
// - A running allocation none of whose workers reached the server within
//   `join_timeout_s` is cancelled (they cannot reach it: a wrong address,
//   keys, a firewall), and counts as a failure.
// - Failures (a request refused, an allocation that ended without any
//   worker joining) back off: no request for `retry_s`, doubled each
//   failure in a row up to `max_retry_s`; a worker joining resets it. The
//   server never stops asking while jobs wait: an allocation that stops
//   being requested is a cluster that silently stops working.
//
// An allocation the batch system lists that this Allocator did not ask for
// (an earlier server's, on the same journal and so the same endpoint) is
// adopted: counted, and its workers awaited, as if asked for.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "redflow/client.hpp"

namespace redflow::server {

struct AllocatorOptions {
  // Workers in allocations not ended, at most. 0: ask for none.
  std::uint32_t max_workers = 0;
  // Workers (batch-system tasks) per allocation.
  std::uint32_t workers_per_allocation = 1;
  // A running allocation with no worker at the server this long after it started is cancelled.
  double join_timeout_s = 120;
  // The wait after a failure, doubled per failure in a row, at most max_retry_s.
  double retry_s = 5;
  double max_retry_s = 300;
};

// The allocation a worker came from: the `ID` of a name "...\/slurm-ID ..."
// (what the workers an allocation starts call themselves), or "".
std::string allocation_of(const std::string& worker_name);

class Allocator {
 public:
  explicit Allocator(AllocatorOptions options) : o_(options) {}

  struct Plan {
    std::uint32_t ask = 0;            // allocations to ask for now (workers_per_allocation each)
    std::vector<std::string> cancel;  // allocations to cancel now
  };
  // What to do `now_s` seconds into the server's life, when the jobs want
  // `wanted` workers beyond the idle and returning ones.
  Plan plan(std::size_t wanted, double now_s);

  // The batch system took a request: allocation `id`.
  void asked(const std::string& id, double now_s);
  // It refused one (`why`: its message).
  void ask_failed(const std::string& why, double now_s);
  // The server asked the batch system to cancel `id`, because `why`.
  void cancelling(const std::string& id, const std::string& why);
  // What the batch system lists now, id -> its state word (Slurm's PENDING,
  // RUNNING, ...). Allocations asked for and not listed have ended.
  void listed(const std::map<std::string, std::string>& states, double now_s);
  // The workers at the server now, per allocation id (allocation_of).
  void joined(const std::map<std::string, std::uint32_t>& counts);

  // For `redflow workers`: the allocations, oldest first (the last few ended).
  std::vector<Client::Allocation> allocations(double now_s) const;
  // Its bounds and what went wrong last ("at most 4 workers, 2 per
  // allocation; last request refused: ...").
  std::string summary(double now_s) const;
  // Workers in allocations not ended.
  std::uint32_t workers_asked() const;
  bool enabled() const { return o_.max_workers > 0; }

 private:
  enum class State { kQueued, kRunning, kEnding, kEnded };
  struct Allocation {
    std::string id = {};
    State state = State::kQueued;
    std::uint32_t workers = 0;
    std::uint32_t joined = 0;
    std::uint32_t most_joined = 0;  // at once: those that left since (their idle timeout) are not coming again
    double asked_s = 0;
    double running_since_s = -1;  // when first listed running
    std::string why_cancelled = {};  // "" unless the server cancelled it
  };
  void failed(const std::string& why, double now_s);
  Allocation* find(const std::string& id);

  AllocatorOptions o_;
  std::vector<Allocation> allocations_;  // asked or adopted, oldest first
  std::uint32_t failures_in_a_row_ = 0;
  double retry_at_s_ = 0;
  std::string last_failure_;
};

}  // namespace redflow::server
