// JoinSchedule: one execution's part of joins under HEFT (joins.cpp): the
// schedule the walkers follow (the plan's, or one made again for the tiles
// in service when a worker joined), its epoch (how many were made), the
// claims that make an actor moved by a new schedule run once, and the
// counts of joins and re-plans.
//
// Owned by the Job. Thread-safe: claims are per-actor atomic exchanges; a
// new schedule is published with its epoch (seq_cst, so a walker that reads
// the new epoch sees the new schedule); the schedules made live until the
// job ends, so a walker on an older one never reads freed memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/schedule.hpp"

namespace redflow::runtime {

class JoinSchedule {
 public:
  // Walkers claim actors from now (`claims`: per actor, the number of the
  // execution that claimed it). Before the runners start.
  void use_claims(std::atomic<std::uint32_t>* claims, std::uint32_t execution) {
    claims_ = claims;
    execution_ = execution;
  }
  // Whether walkers claim actors (HEFT with places kept for joins).
  bool claiming() const { return claims_ != nullptr; }
  // One walker runs `a`: true for the first to claim it (always without claims).
  bool claim(ActorId a) { return claims_ == nullptr || claims_[a].exchange(execution_, std::memory_order_acq_rel) != execution_; }
  bool claimed(ActorId a) const { return claims_ != nullptr && claims_[a].load(std::memory_order_acquire) == execution_; }

  // The schedule walked now; null: the plan's own.
  const Schedule* current() const { return schedule_.load(std::memory_order_acquire); }
  // The schedule to start with (null: the plan's). Before the runners start.
  void start_with(const Schedule* s) { schedule_.store(s, std::memory_order_relaxed); }
  // Counts the schedules made during the execution.
  std::uint32_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // Makes `make()` (a std::unique_ptr<Schedule>) the schedule walked from
  // now. One at a time: two joins at once install their schedules in the
  // order they made them, so the last one counts every tile in service.
  template <typename Make>
  void replace(Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    made_.push_back(make());
    schedule_.store(made_.back().get(), std::memory_order_seq_cst);
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    replans_.fetch_add(1, std::memory_order_relaxed);
  }

  // This execution's counts, for its stats: schedules made (the one it
  // started with included, when it was not the plan's), workers joined.
  void count_replan() { replans_.fetch_add(1, std::memory_order_relaxed); }
  std::uint32_t replans() const { return replans_.load(); }
  void set_joins(std::uint32_t n) { joins_.store(n, std::memory_order_relaxed); }
  void count_join() { joins_.fetch_add(1, std::memory_order_relaxed); }
  std::uint32_t joins() const { return joins_.load(); }

 private:
  std::atomic<std::uint32_t>* claims_ = nullptr;
  std::uint32_t execution_ = 0;
  std::atomic<const Schedule*> schedule_{nullptr};
  std::atomic<std::uint32_t> epoch_{0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<Schedule>> made_;
  std::atomic<std::uint32_t> replans_{0}, joins_{0};
};

}  // namespace redflow::runtime
