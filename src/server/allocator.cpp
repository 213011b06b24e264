// Allocator (allocator.hpp): the policy of asking a batch system for workers.
#include "server/allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace redflow::server {

namespace {

// Ended allocations kept for `redflow workers` to show.
constexpr std::size_t kEndedKept = 8;

const char* state_word(int s) {
  static const char* const kWords[] = {"queued", "running", "ending", "ended"};
  return kWords[s];
}

}  // namespace

std::string allocation_of(const std::string& worker_name) {
  const auto at = worker_name.find("/slurm-");
  if (at == std::string::npos) return "";
  std::size_t end = at + 7;
  while (end < worker_name.size() && worker_name[end] >= '0' && worker_name[end] <= '9') ++end;
  return worker_name.substr(at + 7, end - at - 7);
}

Allocator::Allocation* Allocator::find(const std::string& id) {
  for (auto& a : allocations_)
    if (a.id == id) return &a;
  return nullptr;
}

std::uint32_t Allocator::workers_asked() const {
  std::uint32_t n = 0;
  for (const auto& a : allocations_)
    if (a.state != State::kEnded) n += a.workers;
  return n;
}

Allocator::Plan Allocator::plan(std::size_t wanted, double now_s) {
  Plan p;
  if (!enabled()) return p;
  // Workers coming: asked for, not at the server yet, in allocations that may still bring them.
  std::size_t coming = 0, queued_coming = 0;
  for (auto& a : allocations_) {
    if (a.state == State::kEnded || a.state == State::kEnding || !a.why_cancelled.empty()) continue;
    const bool late = a.state == State::kRunning && a.running_since_s >= 0 && now_s - a.running_since_s >= o_.join_timeout_s;
    if (late && a.most_joined == 0) {
      p.cancel.push_back(a.id);
      a.why_cancelled = fmt::format("none of its workers reached the server within {:g} s of its start", o_.join_timeout_s);
      continue;
    }
    const std::size_t missing = late || a.workers <= a.most_joined ? 0 : a.workers - a.most_joined;
    coming += missing;
    if (a.state == State::kQueued) queued_coming += missing;
  }
  if (wanted > coming) {
    if (now_s < retry_at_s_) return p;
    const std::uint32_t per = std::max<std::uint32_t>(1, o_.workers_per_allocation);
    const std::uint32_t room = o_.max_workers > workers_asked() ? o_.max_workers - workers_asked() : 0;
    const std::size_t need = wanted - coming;
    p.ask = static_cast<std::uint32_t>(std::min<std::size_t>((need + per - 1) / per, room / per));
    return p;
  }
  // More coming than wanted: take back allocations still in the batch queue, newest first.
  std::size_t surplus = coming - wanted;
  for (auto it = allocations_.rbegin(); it != allocations_.rend() && queued_coming > 0; ++it) {
    if (it->state != State::kQueued || !it->why_cancelled.empty() || it->workers > surplus) continue;
    p.cancel.push_back(it->id);
    it->why_cancelled = "no job waits for its workers any more";
    surplus -= it->workers;
    queued_coming -= it->workers;
  }
  return p;
}

void Allocator::asked(const std::string& id, double now_s) {
  if (find(id) != nullptr) return;
  allocations_.push_back(Allocation{.id = id, .workers = o_.workers_per_allocation, .asked_s = now_s});
}

void Allocator::failed(const std::string& why, double now_s) {
  ++failures_in_a_row_;
  last_failure_ = why;
  const double wait = std::min(o_.max_retry_s, o_.retry_s * std::pow(2.0, std::min<std::uint32_t>(failures_in_a_row_ - 1, 30)));
  retry_at_s_ = now_s + wait;
}

void Allocator::ask_failed(const std::string& why, double now_s) { failed("the request was refused: " + why, now_s); }

void Allocator::cancelling(const std::string& id, const std::string& why) {
  if (Allocation* a = find(id); a != nullptr && a->why_cancelled.empty()) a->why_cancelled = why;
}

void Allocator::listed(const std::map<std::string, std::string>& states, double now_s) {
  for (const auto& [id, word] : states) {
    if (find(id) == nullptr) allocations_.push_back(Allocation{.id = id, .workers = o_.workers_per_allocation, .asked_s = now_s});
  }
  for (auto& a : allocations_) {
    if (a.state == State::kEnded) continue;
    auto it = states.find(a.id);
    if (it == states.end()) {
      a.state = State::kEnded;
      a.joined = 0;
      // An allocation that ended without a worker ever joining (and that the
      // server did not take back while it waited in the queue) failed.
      if (a.most_joined == 0 && (a.why_cancelled.empty() || a.running_since_s >= 0))
        failed(fmt::format("allocation {} ended without any of its workers reaching the server{}", a.id,
                           a.why_cancelled.empty() ? "" : " (" + a.why_cancelled + ")"),
               now_s);
      continue;
    }
    const std::string& w = it->second;
    if (w == "PENDING") {
      a.state = State::kQueued;
    } else if (w == "RUNNING" || w == "CONFIGURING") {
      if (a.running_since_s < 0) a.running_since_s = now_s;
      a.state = State::kRunning;
    } else {
      a.state = State::kEnding;  // COMPLETING, SUSPENDED, ...: it brings no more workers
    }
  }
  // Keep the last few ended ones to show.
  std::size_t ended = std::count_if(allocations_.begin(), allocations_.end(), [](const Allocation& a) { return a.state == State::kEnded; });
  for (auto it = allocations_.begin(); ended > kEndedKept && it != allocations_.end();) {
    if (it->state == State::kEnded) {
      it = allocations_.erase(it);
      --ended;
    } else {
      ++it;
    }
  }
}

void Allocator::joined(const std::map<std::string, std::uint32_t>& counts) {
  for (auto& a : allocations_) {
    if (a.state == State::kEnded) continue;
    auto it = counts.find(a.id);
    a.joined = it == counts.end() ? 0 : it->second;
    if (a.joined > 0 && a.most_joined == 0) {
      failures_in_a_row_ = 0;  // the batch system and the workers work: no more backing off
      retry_at_s_ = 0;
    }
    a.most_joined = std::max(a.most_joined, a.joined);
  }
}

std::vector<Client::Allocation> Allocator::allocations(double now_s) const {
  std::vector<Client::Allocation> out;
  for (const auto& a : allocations_)
    out.push_back({.id = a.id, .state = state_word(static_cast<int>(a.state)), .workers = a.workers, .joined = a.joined,
                   .age_s = now_s - a.asked_s, .why = a.why_cancelled});
  return out;
}

std::string Allocator::summary(double now_s) const {
  if (!enabled()) return "";
  std::string s = fmt::format("from Slurm: at most {} worker{}, {} per allocation; {} asked for now", o_.max_workers,
                              o_.max_workers == 1 ? "" : "s", o_.workers_per_allocation, workers_asked());
  if (!last_failure_.empty() && failures_in_a_row_ > 0) {
    s += fmt::format("; {} failure{} in a row, the last: {}", failures_in_a_row_, failures_in_a_row_ == 1 ? "" : "s", last_failure_);
    if (retry_at_s_ > now_s) s += fmt::format(" (next request in {:.0f} s at the earliest)", retry_at_s_ - now_s);
  }
  return s;
}

}  // namespace redflow::server
