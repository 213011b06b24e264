// The tile server's wire and sending (tile_server.hpp): the I/O thread's poll
// loop over the ROUTER socket and the eventfd doorbell, receiving multipart
// messages and sending requests, heartbeats and notices.
#include "net/tile_server.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "net/sockets.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {

TileServer::TileServer(const TileServerOptions& options)
    : options_(options),
      // Four beats per timeout: one late or lost beat never makes a worker lost.
      interval_(std::max<long>(10, std::lround(options.heartbeat_timeout_s * 1000 / 4))),
      context_(1) {}

Result<std::unique_ptr<TileServer>> TileServer::start(const TileServerOptions& options) {
  if (!(options.heartbeat_timeout_s > 0)) return Status::InvalidArgument("heartbeat timeout must be > 0 seconds");
  std::unique_ptr<TileServer> server(new TileServer(options));
  server->zap_ = std::make_unique<ZapAuthenticator>(server->context_);
  auto router = make_driver_router(server->context_, options.listen, server->endpoint_, options.security, *server->zap_);
  if (!router.ok()) return router.status();
  server->router_ = std::move(*router);
  // The keys secure_server() gave the authenticator, for the workers' peer sockets (WELCOME).
  if (server->zap_->running()) server->peer_keys_ = server->zap_->public_keys();
  if (!server->doorbell_.ok()) return Status::IOError("eventfd failed");
  server->next_tick_ = std::chrono::steady_clock::now() + server->interval_;
  TileServer* s = server.get();
  // spdlog makes its registry on first use; make it here, before the thread
  // that logs starts, so that the start orders the two (ThreadSanitizer
  // cannot see the guard inside the uninstrumented libspdlog).
  spdlog::default_logger_raw();
  server->thread_ = std::thread([s] { s->io_main(); });
  return server;
}

TileServer::~TileServer() {
  if (thread_.joinable()) {
    stop_.store(true);
    wake();
    thread_.join();
  }
  for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("tile server: refused {} message(s) from {} in all", n, peer);
  for (const auto& [peer, n] : discards_.unlogged()) spdlog::warn("tile server: discarded {} message(s) from {} after it was lost, in all", n, peer);
}

void TileServer::wake() { doorbell_.ring(); }

Status TileServer::wait_for_workers(double timeout_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  changed_.wait_until(lock, deadline, [&] { return workers_.size() >= options_.workers; });
  if (workers_.size() >= options_.workers) return Status::Ok();
  return Status::ResourceExhausted("waited " + std::to_string(timeout_s) + " s for " + std::to_string(options_.workers) +
                                   " remote tile(s) at " + endpoint_ + ": " + std::to_string(workers_.size()) +
                                   " came (start workers with: redflow worker --connect " + endpoint_ + ")");
}

unsigned TileServer::welcomed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<unsigned>(workers_.size());
}

HelloMessage TileServer::hello(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return w < workers_.size() ? workers_[w].hello : HelloMessage{};
}

bool TileServer::lost(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return w >= workers_.size() || workers_[w].lost;
}

void TileServer::lose(unsigned w, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (w >= workers_.size() || workers_[w].lost) return;
    ++counts_.refused_messages;
    declare_lost(w, why);
  }
  wake();  // its BYE goes out
}

WorkerTraffic TileServer::traffic(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return w < workers_.size() ? workers_[w].traffic : WorkerTraffic{};
}

TileServerCounts TileServer::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

TileServer::PeerAddress TileServer::peer(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return w < workers_.size() ? workers_[w].peer : PeerAddress{};
}

std::shared_ptr<TileServer::Request> TileServer::submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from,
                                                        double budget_s) {
  auto r = std::make_shared<Request>();
  r->worker = w;
  r->frame = std::move(frame);
  r->wants_reply = wants_reply;
  r->fetch_from = fetch_from;
  r->budget_s = budget_s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (w >= workers_.size() || workers_[w].lost) {
      r->done = r->lost = true;
      return r;
    }
    if (fetch_from >= 0 && (static_cast<unsigned>(fetch_from) >= workers_.size() || workers_[fetch_from].lost)) {
      // Its source is gone (declared lost after the engine chose it): what the worker would answer after a CANCEL.
      std::vector<std::byte> answer;
      runtime::encode(Status::NotFound("peer fetch from tile " + std::to_string(options_.first_tile + static_cast<unsigned>(fetch_from)) +
                                       ": the driver declared the source lost"),
                      answer);
      r->reply = ReceivedBytes(std::move(answer));
      r->done = true;
      return r;
    }
    r->id = next_request_++;
    outbox_.push_back(r);
  }
  wake();
  return r;
}

bool TileServer::call(unsigned w, std::vector<std::byte> frame, ReceivedBytes& reply) {
  Ticket t = send(w, std::move(frame));
  return await(t, reply);
}

TileServer::Ticket TileServer::send(unsigned w, std::vector<std::byte> frame, double budget_s) {
  Ticket t;
  t.request_ = submit(w, std::move(frame), true, -1, budget_s);
  return t;
}

void TileServer::bound(const Ticket& ticket, double budget_s) {
  if (!ticket.request_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ticket.request_->budget_s = budget_s;
}

bool TileServer::await(Ticket& ticket, ReceivedBytes& reply) {
  std::shared_ptr<Request> r = std::move(ticket.request_);
  if (!r) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  r->answered.wait(lock, [&] { return r->done; });
  if (r->lost) return false;
  reply = std::move(r->reply);
  return true;
}

bool TileServer::answered_within(const Ticket& ticket, double timeout_s) {
  const std::shared_ptr<Request>& r = ticket.request_;
  if (!r) return true;
  std::unique_lock<std::mutex> lock(mutex_);
  return r->answered.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return r->done; });
}

void TileServer::abandon(Ticket& ticket) {
  std::shared_ptr<Request> r = std::move(ticket.request_);
  if (!r) return;
  std::lock_guard<std::mutex> lock(mutex_);
  r->wants_reply = false;
}

void TileServer::post(unsigned w, std::vector<std::byte> frame) { submit(w, std::move(frame), false); }

TileServer::Ticket TileServer::send_fetch(unsigned w, std::vector<std::byte> frame, unsigned source) {
  Ticket t;
  t.request_ = submit(w, std::move(frame), true, static_cast<int>(source));
  return t;
}

// A CANCEL goes through the same queue as requests, so it never overtakes
// the fetch it names; one still queued is cancelled right behind it.
void TileServer::cancel_fetches_from(unsigned source) {
  std::vector<std::shared_ptr<Request>> cancels;
  auto cancel = [&](const std::shared_ptr<Request>& fetch) {
    if (fetch->fetch_from != static_cast<int>(source) || fetch->kind != EnvelopeKind::kRequest || workers_[fetch->worker].lost) return;
    auto c = std::make_shared<Request>();
    c->worker = fetch->worker;
    c->id = fetch->id;
    c->kind = EnvelopeKind::kCancel;
    c->wants_reply = false;
    cancels.push_back(std::move(c));
  };
  for (const auto& [id, r] : in_flight_) cancel(r);
  for (const std::shared_ptr<Request>& r : outbox_) cancel(r);
  if (cancels.empty()) return;
  outbox_.insert(outbox_.end(), cancels.begin(), cancels.end());
  wake();
}

void TileServer::send_to(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) {
  if (kind == EnvelopeKind::kRequest && !BatchWriter::fits(body)) {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.copied_value_bytes += body.size();  // ZeroMQ copies what send_envelope() gives it
  }
  sent_or_lost(routing_id, send_envelope(router_, kind, request, body, routing_id), body.size());
}

void TileServer::send_owned(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) {
  const std::size_t bytes = body.size();
  sent_or_lost(routing_id, send_envelope_owned(router_, kind, request, std::move(body), routing_id), bytes);
}

void TileServer::sent_or_lost(const std::string& routing_id, bool sent, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sent) {
    counts_.bytes_sent += kEnvelopeHeaderBytes + bytes;
    counts_.largest_sent_bytes = std::max<std::uint64_t>(counts_.largest_sent_bytes, kEnvelopeHeaderBytes + bytes);
    if (Worker* w = find_worker(routing_id)) w->traffic.bytes_sent += kEnvelopeHeaderBytes + bytes;
    return;
  }
  // ROUTER_MANDATORY: the peer's connection is gone (the process died, the
  // link broke). Its routing id will not come back (a reconnecting DEALER is
  // a new peer), so the worker is lost now, not a heartbeat timeout later.
  unsigned index = 0;
  if (find_worker(routing_id, &index) != nullptr) declare_lost(index, "its connection dropped");
}

// Notices first: a WELCOME must reach its worker before the first REQUEST
// (the engine may send one the moment wait_for_workers() sees the worker),
// or the worker, without a tile yet, would have to drop it. Then requests,
// each worker's in the order they were queued: the small ones that follow
// each other go as one batch (envelope.hpp), a value or a CANCEL alone.
void TileServer::send_queued() {
  std::vector<std::pair<std::string, EnvelopeKind>> notices;
  std::vector<std::vector<std::byte>> bodies;
  std::deque<std::shared_ptr<Request>> queued;
  std::vector<std::string> routes;  // by worker index, of the workers with a request here
  {
    std::lock_guard<std::mutex> lock(mutex_);
    notices.swap(notices_);
    bodies.swap(notice_bodies_);
    queued.swap(outbox_);
    routes.resize(workers_.size());
    const auto now = std::chrono::steady_clock::now();
    for (auto it = queued.begin(); it != queued.end();) {
      const std::shared_ptr<Request>& r = *it;
      if (workers_[r->worker].lost) {
        r->done = r->lost = true;
        r->answered.notify_one();
        it = queued.erase(it);
        continue;
      }
      routes[r->worker] = workers_[r->worker].routing_id;
      if (r->kind == EnvelopeKind::kRequest) {
        r->sent_at = now;
        in_flight_.emplace(r->id, r);
      }
      ++it;
    }
  }
  for (std::size_t i = 0; i < notices.size(); ++i) send_to(notices[i].first, notices[i].second, 0, bodies[i]);
  std::vector<std::vector<Request*>> batches(routes.size());
  auto flush = [&](unsigned w) {
    const std::size_t batched = send_batched(std::span<Request* const>(batches[w]), EnvelopeKind::kRequest,
                                             [&](EnvelopeKind kind, std::uint64_t id, std::vector<std::byte> body) {
                                               send_owned(routes[w], kind, id, std::move(body));
                                             });
    if (batched != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      counts_.batched_requests += batched;
    }
    for (Request* r : batches[w]) r->frame = {};
    batches[w].clear();
  };
  for (const std::shared_ptr<Request>& r : queued) {
    if (r->kind == EnvelopeKind::kRequest && BatchWriter::fits(r->frame)) {
      batches[r->worker].push_back(r.get());
      if (batches[r->worker].size() == kMaxBatchEntries) flush(r->worker);
      continue;
    }
    flush(r->worker);  // what was queued before it goes before it
    if (envelope_has_body(r->kind)) {
      // A value: ZeroMQ takes over the buffer it was encoded into.
      send_owned(routes[r->worker], r->kind, r->id, std::move(r->frame));
    } else {
      send_to(routes[r->worker], r->kind, r->id, {});
    }
    r->frame = {};
  }
  for (unsigned w = 0; w < batches.size(); ++w) flush(w);
}

void TileServer::receive_one() {
  std::vector<zmq::message_t> parts;
  std::size_t bytes = 0;
  for (;;) {
    zmq::message_t m;
    if (!router_.recv(m, zmq::recv_flags::dontwait)) break;
    bytes += m.size();
    const bool more = m.more();
    // A flood of parts is refused below; only the first few are kept.
    if (parts.size() < 4) parts.push_back(std::move(m));
    if (!more) break;
  }
  if (parts.empty()) return;
  const std::string routing_id(static_cast<const char*>(parts[0].data()), parts[0].size());
  std::string address;
  if (parts.size() > 1) {
    try {
      address = parts[1].gets("Peer-Address");
    } catch (const zmq::error_t&) {
      // not TCP: no address to give the worker's peers
    }
  }
  std::vector<std::span<const std::byte>> spans;
  for (std::size_t i = 1; i < parts.size(); ++i) spans.emplace_back(static_cast<const std::byte*>(parts[i].data()), parts[i].size());
  std::vector<std::shared_ptr<Request>> answered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.bytes_received += bytes;
    counts_.largest_message_bytes = std::max<std::uint64_t>(counts_.largest_message_bytes, bytes);
    if (Worker* w = find_worker(routing_id)) w->traffic.bytes_received += bytes;
    on_message(routing_id, spans, address, parts.size() == 3 ? &parts[2] : nullptr);
    answered.swap(answered_);
  }
  // After the lock: a runner woken under it would wake only to block on the
  // lock this thread still holds (a second sleep and wake-up per reply).
  for (const auto& r : answered) r->answered.notify_one();
}

void TileServer::io_main() {
  zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell_.fd(), ZMQ_POLLIN, 0}};
  while (!stop_.load()) {
    if (Status s = poll_for(items, next_tick_ - std::chrono::steady_clock::now()); !s.ok()) {
      spdlog::error("tile server: {}", s.message());
      continue;
    }
    if (items[1].revents & ZMQ_POLLIN) doorbell_.drain();
    // Drain what arrived (bounded, so sending is never starved).
    for (int i = 0; i < 256 && (router_.get(zmq::sockopt::events) & ZMQ_POLLIN); ++i) receive_one();
    if (std::chrono::steady_clock::now() >= next_tick_) {
      std::lock_guard<std::mutex> lock(mutex_);
      on_tick();
      next_tick_ = std::chrono::steady_clock::now() + interval_;
    }
    send_queued();
  }
  // Leaving: what is queued (a REFUSED saying why) and BYE to every worker
  // still here, given a moment to go out.
  send_queued();
  std::vector<std::string> live;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Worker& w : workers_)
      if (!w.lost) live.push_back(w.routing_id);
  }
  for (const std::string& id : live) send_to(id, EnvelopeKind::kBye, 0, {});
  router_.set(zmq::sockopt::linger, 500);
  router_.close();
}

}  // namespace redflow::net
