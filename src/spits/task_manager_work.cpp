// A Task Manager's part of a job (task_manager_work.hpp).
#include "spits/task_manager_work.hpp"

#include <algorithm>

#include "spits/net_messages.hpp"

namespace redflow::spits {

using net::EnvelopeKind;

TaskManagerWork::TaskManagerWork(std::string name, const JobPlugin& job, unsigned workers, unsigned prefetch, const net::Doorbell& doorbell)
    : wakeup_(doorbell), local_(std::move(name), job, workers, prefetch, prefetch == 0, wakeup_) {}

TaskManagerWork::~TaskManagerWork() { stop(); }

Status TaskManagerWork::take(net::Sender& to, std::uint64_t request, std::span<const std::byte> body) {
  tasks_.clear();
  REDFLOW_RETURN_IF_ERROR(decode_tasks(body, tasks_));
  local_.push(tasks_);
  last_taken_ = std::max(last_taken_, request);
  to.send(EnvelopeKind::kAck, request, {});
  return Status::Ok();
}

std::uint32_t TaskManagerWork::capacity() const {
  return static_cast<std::uint32_t>(std::min<std::size_t>(local_.capacity() * kNetworkMargin, kMaxBatch));
}

void TaskManagerWork::send_results(net::Sender& to) {
  if (local_.pull(results_) == 0) return;
  std::vector<std::byte> body;
  encode_results(capacity(), local_.mean_ns_per_task(), results_, body);
  results_.clear();
  const std::uint64_t seq = next_seq_++;
  // Sent even while the Job Manager seems silent: if it is really gone, the
  // batch goes again when it (or its successor) says HELLO.
  to.send(EnvelopeKind::kReply, seq, unacked_[seq] = std::move(body));
}

void TaskManagerWork::resend(net::Sender& to) const {
  for (const auto& [seq, batch] : unacked_) to.send(EnvelopeKind::kReply, seq, batch);
}

}  // namespace redflow::spits
