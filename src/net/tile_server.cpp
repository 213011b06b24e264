// The tile server's effects (tile_server.hpp): the I/O thread's poll loop
// over the ROUTER socket and the eventfd doorbell, receiving multipart
// messages for the hub, sending what it queued, the clock's ticks, and the
// engine-facing calls that submit requests and await their answers.
#include "net/tile_server.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "net/router_sender.hpp"
#include "net/sockets.hpp"

namespace redflow::net {

Result<std::unique_ptr<TileServer>> TileServer::start(const TileServerOptions& options) {
  if (!(options.heartbeat_timeout_s > 0)) return Status::InvalidArgument("heartbeat timeout must be > 0 seconds");
  std::unique_ptr<TileServer> server(new TileServer(options));
  server->zap_ = std::make_unique<ZapAuthenticator>(server->context_);
  auto router = make_driver_router(server->context_, options.listen, server->endpoint_, options.security, *server->zap_);
  if (!router.ok()) return router.status();
  server->router_ = std::move(*router);
  // The keys secure_server() gave the authenticator, for the workers' peer sockets (WELCOME).
  server->hub_ = std::make_unique<TileHub>(options, server->zap_->running() ? server->zap_->public_keys() : std::vector<std::string>{});
  if (!server->doorbell_.ok()) return Status::IOError("eventfd failed");
  server->next_tick_ = TileHub::Clock::now() + server->hub_->interval();
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
}

void TileServer::wake() { doorbell_.ring(); }

void TileServer::wake_answered(std::vector<std::shared_ptr<Request>>& answered) {
  for (const auto& r : answered) r->answered.notify_one();
  answered.clear();
}

Status TileServer::wait_for_workers(double timeout_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  changed_.wait_until(lock, deadline, [&] { return hub_->welcomed() >= options_.workers; });
  if (hub_->welcomed() >= options_.workers) return Status::Ok();
  return Status::ResourceExhausted("waited " + std::to_string(timeout_s) + " s for " + std::to_string(options_.workers) +
                                   " remote tile(s) at " + endpoint_ + ": " + std::to_string(hub_->welcomed()) +
                                   " came (start workers with: redflow worker --connect " + endpoint_ + ")");
}

unsigned TileServer::welcomed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->welcomed();
}

HelloMessage TileServer::hello(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->hello(w);
}

bool TileServer::lost(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->lost(w);
}

void TileServer::lose(unsigned w, const std::string& why) { drop(&TileHub::lose, w, why); }

void TileServer::refuse(unsigned w, const std::string& why) { drop(&TileHub::refuse, w, why); }

void TileServer::drop(bool (TileHub::*how)(unsigned, const std::string&), unsigned w, const std::string& why) {
  std::vector<std::shared_ptr<Request>> answered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!((*hub_).*how)(w, why)) return;
    hub_->take_answered(answered);
  }
  wake_answered(answered);
  wake();  // its BYE (and REFUSED) go out
}

WorkerTraffic TileServer::traffic(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->traffic(w);
}

TileServerCounts TileServer::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->counts();
}

TileServer::PeerAddress TileServer::peer(unsigned w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_->peer(w);
}

std::shared_ptr<TileServer::Request> TileServer::submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from,
                                                        double budget_s) {
  std::shared_ptr<Request> r;
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    r = hub_->submit(w, std::move(frame), wants_reply, fetch_from, budget_s);
    queued = !r->done;  // read here: once queued, the I/O thread may answer it any time
  }
  if (queued) wake();
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

// The hub's queue goes out without the lock, so the engine's threads keep
// submitting meanwhile; what went out is counted under it after.
void TileServer::send_queued() {
  TileHub::Outbox out;
  std::vector<std::shared_ptr<Request>> answered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out = hub_->take_outbox(TileHub::Clock::now());
    hub_->take_answered(answered);
  }
  wake_answered(answered);
  if (out.empty()) return;
  RouterSender sender(router_);
  out.emit(sender);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hub_->sent(out);
    hub_->take_answered(answered);
  }
  wake_answered(answered);
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
  const std::string address = parts.size() > 1 ? peer_address(parts[1]) : std::string();
  std::vector<std::span<const std::byte>> spans;
  for (std::size_t i = 1; i < parts.size(); ++i) spans.emplace_back(static_cast<const std::byte*>(parts[i].data()), parts[i].size());
  std::vector<std::shared_ptr<Request>> answered;
  bool came = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const unsigned before = hub_->welcomed();
    hub_->received(routing_id, bytes);
    hub_->on_message(routing_id, spans, address, TileHub::Clock::now(), parts.size() == 3 ? &parts[2] : nullptr);
    hub_->take_answered(answered);
    came = hub_->welcomed() != before;
  }
  if (came) changed_.notify_all();
  wake_answered(answered);
}

void TileServer::io_main() {
  zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell_.fd(), ZMQ_POLLIN, 0}};
  std::vector<std::shared_ptr<Request>> answered;
  while (!stop_.load()) {
    if (Status s = poll_for(items, next_tick_ - TileHub::Clock::now()); !s.ok()) {
      spdlog::error("tile server: {}", s.message());
      continue;
    }
    if (items[1].revents & ZMQ_POLLIN) doorbell_.drain();
    // Drain what arrived (bounded, so sending is never starved).
    for (int i = 0; i < 256 && (router_.get(zmq::sockopt::events) & ZMQ_POLLIN); ++i) receive_one();
    if (const auto now = TileHub::Clock::now(); now >= next_tick_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        hub_->on_tick(now);
        hub_->take_answered(answered);
      }
      wake_answered(answered);
      next_tick_ = TileHub::Clock::now() + hub_->interval();
    }
    send_queued();
  }
  // Leaving: what is queued (a REFUSED saying why), then BYE to every worker
  // still here, given a moment to go out.
  send_queued();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hub_->leave();
  }
  send_queued();
  router_.set(zmq::sockopt::linger, 500);
  router_.close();
}

}  // namespace redflow::net
