// WorkerPool (worker_pool.hpp): HELLOs held, REDIRECTs sent.
#include "server/worker_pool.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"

namespace redflow::server {

Result<std::unique_ptr<WorkerPool>> WorkerPool::open(zmq::context_t& context, const std::string& endpoint, const net::SecurityOptions& security,
                                                     double confirm_timeout_s) {
  std::unique_ptr<WorkerPool> pool(new WorkerPool(context, confirm_timeout_s));
  auto router = net::make_driver_router(context, endpoint, pool->endpoint_, security, pool->zap_);
  if (!router.ok()) return router.status();
  pool->socket_ = std::move(*router);
  return pool;
}

void WorkerPool::receive() {
  std::vector<zmq::message_t> parts;
  while (net::receive_message(socket_, parts, 4)) {
    if (parts.size() < 2) continue;
    const std::string who = parts[0].to_string();
    net::Envelope e;
    wire::Error error;
    if (Status s = net::decode_envelope(net::part_spans(parts, 1), e, error); !s.ok()) {
      spdlog::warn("server: a worker's message: {}", s.ToString());
      continue;
    }
    if (e.kind == net::EnvelopeKind::kBye) {
      // A worker sent to a job took its REDIRECT.
      auto sent = std::find_if(unconfirmed_.begin(), unconfirmed_.end(), [&](const Sent& s) { return s.worker.routing_id == who; });
      if (sent != unconfirmed_.end()) {
        serving_.push_back(std::move(*sent));
        unconfirmed_.erase(sent);
        continue;
      }
    }
    if (e.kind != net::EnvelopeKind::kHello) {
      // A worker that still thinks it serves a job's driver (a BYE, a late heartbeat): nothing to do here.
      spdlog::debug("server: ignored a {} on the workers' endpoint", net::envelope_kind_name(e.kind));
      continue;
    }
    net::HelloMessage hello;
    if (Status s = net::decode(e.body, hello); !s.ok()) {
      spdlog::warn("server: a worker's HELLO: {}", s.ToString());
      continue;
    }
    // A worker that dialled again (its last HELLO's connection dropped) is idle once, where it now is.
    std::erase_if(idle_, [&](const Idle& i) { return i.host == hello.host && i.pid == hello.pid; });
    // One sent to a job that says HELLO before its BYE never had the REDIRECT.
    std::erase_if(unconfirmed_, [&](const Sent& s) {
      if (s.worker.host != hello.host || s.worker.pid != hello.pid) return false;
      untaken_.push_back({s.job, s.worker.name, "it said HELLO again instead"});
      return true;
    });
    // One that served a job is back from it.
    std::erase_if(serving_, [&](const Sent& s) {
      if (s.worker.host != hello.host || s.worker.pid != hello.pid) return false;
      returned_.push_back({s.job, s.worker.name});
      return true;
    });
    idle_.push_back({who, hello.name + " on " + hello.host, hello.host, hello.pid});
    spdlog::info("server: worker '{}' on {} is idle ({} idle)", hello.name, hello.host, idle_.size());
  }
}

std::vector<std::string> WorkerPool::idle_names() const {
  std::vector<std::string> out;
  for (const auto& i : idle_) out.push_back(i.name);
  return out;
}

std::vector<std::string> WorkerPool::names() const {
  std::vector<std::string> out = idle_names();
  for (const auto* list : {&unconfirmed_, &serving_})
    for (const auto& s : *list) out.push_back(s.worker.name);
  return out;
}

void WorkerPool::beat() {
  const auto now = Clock::now();
  if (now < next_beat_) return;
  next_beat_ = now + std::chrono::seconds(1);
  std::erase_if(idle_, [&](const Idle& w) {
    if (net::send_envelope(socket_, net::EnvelopeKind::kHeartbeat, 0, {}, w.routing_id, true)) return false;
    spdlog::warn("server: idle worker {} is gone (its heartbeat could not be sent)", w.name);
    return true;
  });
}

void WorkerPool::job_ended(std::uint64_t job, double return_timeout_s) {
  for (Sent& s : serving_)
    if (s.job == job && !s.job_ended) {
      s.job_ended = true;
      s.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(return_timeout_s));
    }
}

std::size_t WorkerPool::returning() {
  const auto now = Clock::now();
  std::erase_if(serving_, [&](const Sent& s) {
    if (!s.job_ended || now < s.deadline) return false;
    spdlog::warn("server: worker {} did not come back after job {} ended; forgotten until it says HELLO", s.worker.name, s.job);
    return true;
  });
  return static_cast<std::size_t>(std::count_if(serving_.begin(), serving_.end(), [](const Sent& s) { return s.job_ended; }));
}

std::vector<WorkerPool::Untaken> WorkerPool::untaken() {
  const auto now = Clock::now();
  std::erase_if(unconfirmed_, [&](const Sent& s) {
    if (now < s.deadline) return false;
    untaken_.push_back({s.job, s.worker.name, fmt::format("no BYE within {:g} s of its REDIRECT", confirm_timeout_.count())});
    return true;
  });
  return std::exchange(untaken_, {});
}

std::vector<std::string> WorkerPool::send(std::size_t n, std::uint16_t port, double welcome_timeout_s, std::uint64_t job) {
  std::vector<std::byte> body;
  net::encode(net::RedirectMessage{.port = port, .welcome_timeout_ms = static_cast<std::uint32_t>(welcome_timeout_s * 1000)}, body);
  std::vector<std::string> sent;
  while (sent.size() < n && !idle_.empty()) {
    Idle w = std::move(idle_.front());
    idle_.erase(idle_.begin());
    if (!net::send_envelope(socket_, net::EnvelopeKind::kRedirect, 0, body, w.routing_id, true)) {
      spdlog::warn("server: worker {} is gone (its REDIRECT could not be sent)", w.name);
      continue;
    }
    spdlog::info("server: sent worker {} to job {} (its driver's port {})", w.name, job, port);
    sent.push_back(w.name);
    unconfirmed_.push_back({std::move(w), job, Clock::now() + std::chrono::duration_cast<Clock::duration>(confirm_timeout_)});
  }
  return sent;
}

}  // namespace redflow::server
