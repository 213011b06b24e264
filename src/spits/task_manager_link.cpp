// The Job Manager's I/O thread and its view of remote Task Managers
// (task_manager_link.hpp).
#include "spits/task_manager_link.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <random>
#include <set>

#include "net/driver_messages.hpp"
#include "net/router_sender.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "spits/announce.hpp"

namespace redflow::spits {

using Clock = std::chrono::steady_clock;
using net::EnvelopeKind;

namespace {
constexpr auto kScanEvery = std::chrono::milliseconds(250);
// How often a Task Manager not (or no longer) welcomed is asked again.
constexpr auto kHelloEvery = std::chrono::milliseconds(1000);
constexpr std::size_t kBatchBytes = std::size_t{4} << 20;
}  // namespace

struct TaskManagerLink::Connection {
  std::shared_ptr<Peer> peer;
  bool dialled_in = false;
  zmq::socket_t socket;  // an announced Task Manager's own DEALER
  unsigned hub_peer = 0;  // a dial-in one's peer on the hub (its latest session)
  Clock::time_point heard{}, last_hello{}, next_beat{};
  std::set<std::uint64_t> unacked;  // task batches sent and not yet acknowledged, by sequence number
  std::uint64_t next_seq = 1;
  std::string last_refusal;
};

// Never blocks: a DEALER whose connection is down (a dead Task Manager, a
// failed CURVE handshake) would otherwise hold the I/O thread, and with it
// every heartbeat. What cannot go now is a heartbeat or HELLO to a peer that
// is not there; a task batch that cannot go makes the peer lost.
// A dial-in Task Manager's messages are queued on the hub, which sends them
// on the ROUTER and loses the peer if its connection is gone.
bool TaskManagerLink::send_only(Connection& c, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) {
  if (!c.dialled_in) return net::send_envelope(c.socket, kind, request, body, {}, true);
  hub_->send(c.hub_peer, kind, request, std::vector<std::byte>(body.begin(), body.end()));
  return true;
}

bool TaskManagerLink::send(Connection& c, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) {
  return send_only(c, kind, request, body);
}

Result<std::unique_ptr<TaskManagerLink>> TaskManagerLink::start(const LinkOptions& options, Wakeup& wakeup) {
  if (options.announce_dir.empty() && options.cluster.listen.empty())
    return Status::InvalidArgument("spits: Task Managers need somewhere to be found: an announce list or an address to listen at");
  std::unique_ptr<TaskManagerLink> link(new TaskManagerLink(options, wakeup));
  if (!link->doorbell_.ok()) return Status::IOError("eventfd failed");
  if (!options.cluster.listen.empty()) REDFLOW_RETURN_IF_ERROR(link->listen());
  if (link->hub_) link->router_sender_ = std::make_unique<net::RouterSender>(link->router_, /*dontwait=*/true);
  link->thread_ = std::thread([l = link.get()] { l->io_main(); });
  return link;
}

// Bound here, on the caller's thread, so a bad address or key file is the
// caller's error; the I/O thread takes the socket over when it starts.
Status TaskManagerLink::listen() {
  net::SecurityOptions security;
  security.key_file = options_.cluster.key_file;
  security.authorized_keys_file = options_.cluster.authorized_keys_file;
  zap_ = std::make_unique<net::ZapAuthenticator>(context_);
  auto router = net::make_driver_router(context_, options_.cluster.listen, endpoint_, security, *zap_);
  if (!router.ok()) return router.status();
  router_ = std::move(*router);
  make_hub();
  return Status::Ok();
}

void TaskManagerLink::make_hub() {
  encode(JobWelcome{options_.plugin, options_.job, options_.args}, job_welcome_);
  net::PeerHubOptions o;
  o.log_name = "spits";
  o.role = net::Role::kTaskManager;
  o.version = kSpitsProtocolVersion;
  o.heartbeat_timeout_s = options_.cluster.heartbeat_timeout_s;
  hub_ = std::make_unique<net::PeerHub>(std::move(o), static_cast<net::PeerService&>(*this));
}

std::unique_ptr<TaskManagerLink> TaskManagerLink::without_sockets(const LinkOptions& options, Wakeup& wakeup) {
  std::unique_ptr<TaskManagerLink> link(new TaskManagerLink(options, wakeup));
  link->make_hub();
  return link;
}

TaskManagerLink::TaskManagerLink(const LinkOptions& options, Wakeup& wakeup)
    : options_(options), wakeup_(wakeup), interval_(net::heartbeat_interval(options.cluster.heartbeat_timeout_s)), context_(1) {
  hello_.incarnation = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
                       static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  hello_.job = options.job;
  hello_.args = options.args;
  hello_.heartbeat_interval_ms = static_cast<std::uint32_t>(interval_.count());
  hello_.heartbeat_timeout_ms = static_cast<std::uint32_t>(options.cluster.heartbeat_timeout_s * 1000);
}

TaskManagerLink::~TaskManagerLink() {
  stop_.store(true);
  ring();
  if (thread_.joinable()) thread_.join();
}

void TaskManagerLink::ring() { doorbell_.ring(); }

std::vector<std::unique_ptr<TaskManager>> TaskManagerLink::take_joined() {
  std::vector<std::shared_ptr<Peer>> peers;
  {
    std::lock_guard lock(mutex_);
    peers.swap(joined_);
  }
  std::vector<std::unique_ptr<TaskManager>> out;
  for (auto& p : peers) out.push_back(std::make_unique<RemoteTaskManager>(*this, std::move(p)));
  return out;
}

unsigned TaskManagerLink::live() const {
  std::lock_guard lock(mutex_);
  return live_locked();
}

unsigned TaskManagerLink::live_locked() const {
  unsigned n = 0;
  for (const auto& c : connections_) n += c->peer->live ? 1 : 0;
  return n;
}

Status TaskManagerLink::wait_for(unsigned n, double wait_s) const {
  std::unique_lock lock(mutex_);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  if (changed_.wait_until(lock, deadline, [&] { return live_locked() >= n; })) return Status::Ok();
  std::string start = "redflow worker --connect " + (endpoint_.empty() ? std::string("ADDR") : endpoint_);
  if (!options_.announce_dir.empty()) start += ", or redflow spits-worker JOB.so --announce-dir " + options_.announce_dir;
  return Status::ResourceExhausted("spits: waited " + std::to_string(static_cast<int>(wait_s)) + " s for " + std::to_string(n) +
                                   " Task Manager(s), " + std::to_string(live_locked()) + " came (start them: " + start + ")");
}

void TaskManagerLink::scan_announcements() {
  if (options_.announce_dir.empty()) return;
  for (Announcement& a : read_announcements(options_.announce_dir)) {
    bool known = false;
    for (const auto& c : connections_) known |= c->peer->name == a.name && c->peer->endpoint == a.record.endpoint;
    if (known) continue;
    auto peer = std::make_shared<Peer>();
    peer->name = a.name;
    peer->endpoint = a.record.endpoint;
    peer->public_key = a.record.server_public_key;
    // CURVE with the Task Managers that published a key; plain with those
    // that did not (they listen on loopback only: check_listen_address).
    net::SecurityOptions security;
    if (!a.record.server_public_key.empty()) {
      security.key_file = options_.cluster.key_file;
      security.server_public_key = a.record.server_public_key;
    }
    auto socket = net::make_worker_dealer(context_, peer->endpoint, security);
    auto c = std::make_unique<Connection>();
    c->peer = peer;
    if (!socket.ok()) {
      // Remembered as gone, so the same entry is not tried (and logged) every scan.
      spdlog::warn("spits: cannot reach Task Manager '{}' at {}: {}", a.name, peer->endpoint, socket.status().message());
      peer->gone = true;
      c->socket = zmq::socket_t(context_, zmq::socket_type::dealer);
    } else {
      c->socket = std::move(*socket);
      say_hello(*c);
    }
    std::lock_guard lock(mutex_);
    connections_.push_back(std::move(c));
  }
}

void TaskManagerLink::say_hello(Connection& c) {
  std::vector<std::byte> body;
  encode(hello_, body);
  send(c, EnvelopeKind::kHello, 0, body);
  c.last_hello = Clock::now();
}

void TaskManagerLink::receive(Connection& c) {
  std::vector<zmq::message_t> parts;
  for (int i = 0; i < 256 && net::receive_message(c.socket, parts); ++i) on_envelope(c, net::part_spans(parts));
}

void TaskManagerLink::receive_dialled_in() {
  std::vector<zmq::message_t> parts;
  for (int i = 0; i < 256 && net::receive_message(router_, parts); ++i)
    if (!parts.empty()) hub_->on_message(parts[0].to_string(), net::part_spans(parts, 1), {}, Clock::now());
}

TaskManagerLink::Connection* TaskManagerLink::dialled_in(const std::string& name) {
  for (auto& c : connections_)
    if (c->dialled_in && c->peer->name == name) return c.get();
  return nullptr;
}

// A worker that dials in under the name of a Task Manager lost before is
// that Task Manager again (`redflow worker --persist`); one under the name
// of a Task Manager serving is refused.
std::string TaskManagerLink::admit(const net::HelloMessage& hello) {
  if (Connection* c = dialled_in(hello.name); c != nullptr && c->peer->live)
    return "a Task Manager named '" + hello.name + "' serves this job already (give each worker its own --name)";
  return {};
}

void TaskManagerLink::welcome(unsigned peer, net::WelcomeMessage& w) {
  const std::string& name = hub_->peer(peer).hello.name;
  Connection* c = dialled_in(name);
  std::lock_guard lock(mutex_);
  if (c == nullptr) {
    auto& added = connections_.emplace_back(std::make_unique<Connection>());
    added->dialled_in = true;
    added->peer = std::make_shared<Peer>();
    added->peer->name = name;
    c = added.get();
  }
  c->hub_peer = peer;
  if (by_peer_.size() <= peer) by_peer_.resize(peer + 1, nullptr);
  by_peer_[peer] = c;
  for (std::size_t i = 0; i < connections_.size(); ++i)
    if (connections_[i].get() == c) w.tile = static_cast<std::uint32_t>(i);
  w.service = job_welcome_;
}

void TaskManagerLink::welcomed(unsigned peer, Time) {
  Connection& c = *by_peer_[peer];
  const net::HelloMessage& hello = hub_->peer(peer).hello;
  const std::uint32_t workers = std::max<std::uint32_t>(1, hello.cores);
  {
    std::lock_guard lock(mutex_);
    c.peer->gone = false;
    welcomed(c, TaskManagerInfo{hello.name, hello.host, hello.pid, workers,
                                static_cast<std::uint32_t>(std::min<std::size_t>(workers * kNetworkMargin, kMaxBatch))});
  }
  wakeup_.notify();
}

bool TaskManagerLink::message(unsigned peer, const net::Envelope& e, Time, zmq::message_t*) {
  if (!on_role_message(*by_peer_[peer], e)) return false;
  wakeup_.notify();
  return true;
}

void TaskManagerLink::heartbeat(unsigned peer, std::uint64_t request) {
  if (const std::string why = batch_never_reached(*by_peer_[peer], request); !why.empty()) hub_->drop(peer, why);
}

// Its request id: the last task batch sent before it (see batch_never_reached()).
std::uint64_t TaskManagerLink::beat_request(unsigned peer) { return by_peer_[peer]->next_seq - 1; }

// A Task Manager that leaves says so after its last results: what it still
// held was never run there, so it goes back without strikes.
void TaskManagerLink::lost(unsigned peer, const std::string& why, bool left) {
  Connection& c = *by_peer_[peer];
  std::lock_guard lock(mutex_);
  if (c.peer->live) declare_lost(c, why, !left);
  if (left) c.peer->gone = true;
}

std::string TaskManagerLink::describe(unsigned, const net::HelloMessage& hello) const { return "Task Manager '" + hello.name + "'"; }

void TaskManagerLink::welcomed(Connection& c, TaskManagerInfo info) {
  Peer& p = *c.peer;
  p.info = std::move(info);
  p.capacity = p.info.capacity;
  p.live = true;
  c.unacked.clear();
  c.heard = c.next_beat = Clock::now();
  c.last_refusal.clear();
  spdlog::info("spits: Task Manager '{}' ({} Workers on {}) {}", p.name, p.info.workers, p.info.host, p.welcomed_once ? "is back" : "joined");
  if (!p.welcomed_once) joined_.push_back(c.peer);
  p.welcomed_once = true;
  changed_.notify_all();
}

// What an announced Task Manager says, on its own DEALER.
void TaskManagerLink::on_envelope(Connection& c, std::span<const std::span<const std::byte>> parts) {
  net::Envelope e;
  wire::Error error;
  if (Status s = net::decode_envelope(parts, e, error); !s.ok()) return unreadable(c, "sent a message that cannot be read: " + s.message());
  c.heard = Clock::now();
  Peer& p = *c.peer;
  switch (e.kind) {
    case EnvelopeKind::kWelcome: {
      TaskManagerInfo info;
      if (Status s = decode(e.body, info); !s.ok()) {
        spdlog::warn("spits: Task Manager '{}': {}", p.name, s.message());
        return;
      }
      std::lock_guard lock(mutex_);
      if (p.live || p.gone) return;  // an answer to a HELLO repeated while it was away
      welcomed(c, std::move(info));
      break;
    }
    case EnvelopeKind::kRefused: {
      net::RefusedMessage refused;
      if (!decode(e.body, refused).ok()) refused.reason = "(an unreadable reason)";
      if (refused.reason != c.last_refusal) spdlog::warn("spits: Task Manager '{}' refused this Job Manager: {}", p.name, refused.reason);
      c.last_refusal = refused.reason;
      std::lock_guard lock(mutex_);
      if (p.live) declare_lost(c, "it refused: " + refused.reason);
      return;
    }
    case EnvelopeKind::kHeartbeat: {
      const std::string why = batch_never_reached(c, e.request);
      std::lock_guard lock(mutex_);
      if (!why.empty() && p.live) declare_lost(c, why);
      return;
    }
    case EnvelopeKind::kBye: {
      std::lock_guard lock(mutex_);
      // A Task Manager that leaves says so after its last results: what it
      // still held was never run there, so it goes back without strikes.
      if (p.live) declare_lost(c, "said BYE", false);
      p.gone = true;
      break;
    }
    default:
      if (!on_role_message(c, e)) return unreadable(c, std::string("sent a ") + net::envelope_kind_name(e.kind) + ", which a Task Manager never sends");
      break;
  }
  wakeup_.notify();
}

// An announced Task Manager echoes the request id of our last heartbeat it
// heard, i.e. the last task batch we had sent before that heartbeat; one
// that dialled in names the last task batch it took. Both directions are in
// order, so that batch's ACK would have come before this: a batch up to
// there still unacknowledged never reached it (a dropped connection). No
// timeout: a large batch on a slow link is not lost.
std::string TaskManagerLink::batch_never_reached(Connection& c, std::uint64_t request) {
  std::lock_guard lock(mutex_);
  if (!c.peer->live || c.unacked.empty() || *c.unacked.begin() > request) return {};
  return "never received task batch " + std::to_string(*c.unacked.begin()) + " (its connection dropped)";
}

bool TaskManagerLink::on_role_message(Connection& c, const net::Envelope& e) {
  Peer& p = *c.peer;
  switch (e.kind) {
    case EnvelopeKind::kReply: {
      std::uint32_t capacity = 0;
      std::uint64_t ns_per_task = 0;
      std::vector<ResultMessage> results;
      // Not acknowledged: it sends the batch again when it is taken back.
      if (Status s = decode_results(e.body, capacity, ns_per_task, results); !s.ok()) {
        unreadable(c, "sent a result batch that cannot be read: " + s.message());
        return true;
      }
      {
        std::lock_guard lock(mutex_);
        if (!p.live) return true;  // late, from before it was lost; it re-sends once welcomed again
        p.capacity = capacity;
        if (ns_per_task > 0) p.ns_per_task = ns_per_task;
        for (ResultMessage& r : results) {
          if (auto it = p.held.find(r.id); it != p.held.end()) {
            p.held_by_order.erase(it->second);
            p.held.erase(it);
          } else {
            ++p.late;
          }
          p.inbox.push_back(std::move(r));
        }
      }
      send(c, EnvelopeKind::kAck, e.request, {});
      return true;
    }
    case EnvelopeKind::kAck: c.unacked.erase(e.request); return true;
    default: return false;
  }
}

// The link to a Task Manager is one ordered, reliable stream: a message from
// it that cannot be read (or that it should never send) may have held
// results, which it keeps until they are acknowledged. Losing it puts its
// tasks back in the queue; the HELLO the link keeps saying takes it back,
// and it sends its unacknowledged results again.
void TaskManagerLink::unreadable(Connection& c, const std::string& why) {
  if (c.dialled_in) {
    hub_->lose(c.hub_peer, why);  // the hub's peer lost: lost() below
    return;
  }
  std::lock_guard lock(mutex_);
  if (!c.peer->live) {
    spdlog::warn("spits: Task Manager '{}' {}", c.peer->name, why);
    return;
  }
  declare_lost(c, why);
}

void TaskManagerLink::declare_lost(Connection& c, const std::string& why, bool strikes) {
  Peer& p = *c.peer;
  p.live = false;
  ++p.losses;
  std::size_t running = strikes ? p.info.workers : 0;
  for (const auto& [order, id] : p.held_by_order) {
    ResultMessage& r = p.inbox.emplace_back();
    r.id = id;
    r.outcome = running > 0 ? ResultMessage::Outcome::kLost : ResultMessage::Outcome::kReturned;
    r.bytes = "Task Manager '" + p.name + "' " + why;
    if (running > 0) --running;
  }
  if (c.dialled_in) spdlog::warn("spits: the {} tasks Task Manager '{}' held go back to the queue", p.held.size(), p.name);
  else spdlog::warn("spits: Task Manager '{}' is lost: {}; its {} tasks go back to the queue", p.name, why, p.held.size());
  p.held.clear();
  p.held_by_order.clear();
  p.outbox.clear();
  c.unacked.clear();
  c.last_hello = Clock::now();
  wakeup_.notify();
}

void TaskManagerLink::flush(net::HubSender& dialled_in) {
  flush_outboxes();
  if (hub_) hub_->flush(dialled_in);
}

void TaskManagerLink::flush_outboxes() {
  std::vector<TaskMessage> batch;
  std::vector<std::byte> body;
  for (auto& cp : connections_) {
    Connection& c = *cp;
    {
      std::lock_guard lock(mutex_);
      if (!c.peer->live || c.peer->outbox.empty()) continue;
      batch.swap(c.peer->outbox);
    }
    // Messages of at most kBatchBytes, so a Task Manager starts on the first
    // tasks while the rest are still on a slow link.
    for (std::size_t from = 0; from < batch.size();) {
      std::size_t to = from, bytes = 0;
      while (to < batch.size() && (to == from || bytes + batch[to].bytes.size() <= kBatchBytes)) bytes += batch[to++].bytes.size();
      body.clear();
      encode_tasks(std::span(batch).subspan(from, to - from), body);
      from = to;
      const std::uint64_t seq = c.next_seq++;
      c.unacked.insert(seq);
      if (!send(c, EnvelopeKind::kRequest, seq, body)) {
        std::lock_guard lock(mutex_);
        if (c.peer->live) declare_lost(c, "its connection dropped");
        break;
      }
    }
    batch.clear();
  }
}

// The announced Task Managers' heartbeats and silence, by the hub's policy
// (the dial-in ones are the hub's own).
void TaskManagerLink::tick(Clock::time_point now) {
  for (auto& cp : connections_) {
    Connection& c = *cp;
    if (c.dialled_in) continue;
    bool live;
    {
      std::lock_guard lock(mutex_);
      if (c.peer->gone) continue;
      live = c.peer->live;
      if (live && net::silent(c.heard, now, options_.cluster.heartbeat_timeout_s)) {
        declare_lost(c, net::silence_reason(options_.cluster.heartbeat_timeout_s));
        continue;
      }
    }
    if (live && now >= c.next_beat) {
      // Its request id: the last task batch sent before it (see kHeartbeat in on_envelope).
      send(c, EnvelopeKind::kHeartbeat, c.next_seq - 1, {});
      c.next_beat = now + interval_;
    } else if (!live && now - c.last_hello >= kHelloEvery) {
      say_hello(c);
    }
  }
}

void TaskManagerLink::io_main() {
  auto next_scan = Clock::now(), next_hub_tick = Clock::now();
  std::vector<zmq::pollitem_t> items;
  std::vector<Connection*> polled;  // the announced Task Managers, after the doorbell and the ROUTER
  const bool listening = router_.handle() != nullptr;
  while (!stop_.load()) {
    items.assign(1, zmq::pollitem_t{nullptr, doorbell_.fd(), ZMQ_POLLIN, 0});
    if (listening) items.push_back(zmq::pollitem_t{router_.handle(), 0, ZMQ_POLLIN, 0});
    const std::size_t first = items.size();
    polled.clear();
    for (auto& c : connections_)
      if (!c->dialled_in) {
        items.push_back(zmq::pollitem_t{c->socket.handle(), 0, ZMQ_POLLIN, 0});
        polled.push_back(c.get());
      }
    if (Status s = net::poll_for(items, interval_ / 2); !s.ok()) spdlog::error("spits: {}", s.message());
    if (items[0].revents & ZMQ_POLLIN) doorbell_.drain();
    if (listening && (items[1].revents & ZMQ_POLLIN)) receive_dialled_in();
    for (std::size_t i = first; i < items.size(); ++i)
      if (items[i].revents & ZMQ_POLLIN) receive(*polled[i - first]);
    const auto now = Clock::now();
    if (now >= next_scan) {
      scan_announcements();
      next_scan = now + kScanEvery;
    }
    if (listening && now >= next_hub_tick) {
      hub_->on_tick(now);
      next_hub_tick = now + hub_->interval();
    }
    tick(now);
    // Only a listening link has a ROUTER (and a sender over it) for dial-in peers.
    if (listening) flush(*router_sender_);
    else flush_outboxes();
  }
  // The job is over: BYE to each Task Manager still here, given a moment to go out.
  for (auto& c : connections_) {
    if (c->peer->gone || c->dialled_in) continue;
    send_only(*c, EnvelopeKind::kBye, 0, {});
    c->socket.set(zmq::sockopt::linger, 500);
  }
  if (listening) {
    hub_->leave();
    hub_->flush(*router_sender_);
    router_.set(zmq::sockopt::linger, 500);
  }
  std::lock_guard lock(mutex_);
  connections_.clear();
}

RemoteTaskManager::RemoteTaskManager(TaskManagerLink& link, std::shared_ptr<TaskManagerLink::Peer> peer) : link_(link), peer_(std::move(peer)) {}

unsigned RemoteTaskManager::workers() const {
  std::lock_guard lock(link_.mutex_);
  return peer_->info.workers;
}

std::size_t RemoteTaskManager::room() const {
  std::lock_guard lock(link_.mutex_);
  if (!peer_->live || peer_->capacity <= peer_->held.size()) return 0;
  return peer_->capacity - peer_->held.size();
}

void RemoteTaskManager::push(std::vector<TaskMessage>& tasks) {
  {
    std::lock_guard lock(link_.mutex_);
    TaskManagerLink::Peer& p = *peer_;
    for (TaskMessage& t : tasks) {
      if (!p.live) {  // lost since room() said yes: straight back to the queue
        p.inbox.push_back(ResultMessage{t.id, ResultMessage::Outcome::kReturned, "Task Manager '" + p.name + "' is lost"});
        continue;
      }
      const std::uint64_t order = p.next_order++;
      p.held_by_order[order] = t.id;
      p.held[t.id] = order;
      p.outbox.push_back(std::move(t));
    }
  }
  tasks.clear();
  link_.ring();
}

std::size_t RemoteTaskManager::pull(std::vector<ResultMessage>& out) {
  std::lock_guard lock(link_.mutex_);
  const std::size_t n = peer_->inbox.size();
  for (ResultMessage& r : peer_->inbox) out.push_back(std::move(r));
  peer_->inbox.clear();
  return n;
}

std::string RemoteTaskManager::host() const {
  std::lock_guard lock(link_.mutex_);
  return peer_->info.host;
}

std::uint64_t RemoteTaskManager::late_results() const {
  std::lock_guard lock(link_.mutex_);
  return peer_->late;
}

std::uint64_t RemoteTaskManager::losses() const {
  std::lock_guard lock(link_.mutex_);
  return peer_->losses;
}

double RemoteTaskManager::task_s() const {
  std::lock_guard lock(link_.mutex_);
  return static_cast<double>(peer_->ns_per_task) * 1e-9;
}

}  // namespace redflow::spits
