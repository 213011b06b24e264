// WireProxy: a man in the middle for tests (Jepsen's habit). A ZeroMQ proxy
// on its own thread between a driver and a worker that forwards every
// envelope (src/net/envelope.hpp) and, by rules, garbles, flips a bit in,
// drops, duplicates, reorders, delays or re-labels chosen ones, counting what
// it did so a test can assert that the fault happened.
//
// It binds a ROUTER on 127.0.0.1 (endpoint()); whoever connects there gets
// its own DEALER connected on to `target`. Tiles and stream nodes connect to
// their driver (WorkerSide::kConnects: point the worker at endpoint()); SPITS
// Task Managers listen and the Job Manager connects (WorkerSide::kListens:
// point the Job Manager at endpoint(), `target` is the Task Manager's).
//
// What a rule picks: a direction (from the worker, to it, or both), an
// envelope kind, and for a REQUEST/REPLY body that is a tile-protocol frame
// its frame kind (byte 6 of "RFTP"...). A REPLY (REQUEST) rule also hits the
// entries of a REPLIES (REQUESTS) batch one by one: the batch is taken apart,
// the rule applied to the entry, and put back together (a batch left with one
// entry goes as a lone REPLY/REQUEST, as the real sender would). Which of the
// matching messages: the Nth (1-based), or each with probability p from a
// seeded generator; at most `limit` of them (0: no limit).
//
// Plain sockets only (no CURVE): tests on loopback. Thread-safety: rules are
// added before traffic they should see; counts may be read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::testing {

enum class ProxyAction {
  kGarble,          // the body's first byte flipped: a tile-protocol frame then has a bad magic
  kGarbleEnvelope,  // the envelope header's magic flipped (a lone message only)
  kFlipBit,         // one bit of the body: `bit`, or a seeded one
  kDrop,
  kDuplicate,
  kReorder,         // held back and sent just after the next message in the same direction
  kDelay,           // held back `delay_ms`, then sent alone
  kRewriteId,       // the request id plus `id_delta`
  kReplace,         // the body becomes `replacement` (a well-formed answer of the wrong kind, say)
  kRewriteKind,     // the envelope kind becomes `new_kind` (a message the sender should never send)
};
enum class ProxyDirection { kFromWorker, kToWorker, kBoth };

struct ProxyRule {
  ProxyAction action = ProxyAction::kGarble;
  ProxyDirection direction = ProxyDirection::kFromWorker;
  std::optional<net::EnvelopeKind> envelope = std::nullopt;  // none: any kind
  std::optional<runtime::WireKind> frame = std::nullopt;     // none: any body
  int nth = 0;                                // the Nth matching message (1-based); 0: by probability
  double probability = 0;
  std::uint32_t seed = 1;
  int limit = 1;                  // at most this many applied; 0: no limit
  std::int64_t bit = -1;          // kFlipBit: the bit index in the body; < 0: seeded
  bool bit_from_end = false;      // kFlipBit: `bit` counts from the body's last bit (payload, not header)
  int delay_ms = 200;             // kDelay
  std::uint64_t id_delta = 1000;  // kRewriteId
  std::vector<std::byte> replacement = {};  // kReplace
  net::EnvelopeKind new_kind = net::EnvelopeKind::kRequest;  // kRewriteKind (one with a body, as the message had)
};

enum class WorkerSide { kConnects, kListens };

class WireProxy {
 public:
  explicit WireProxy(std::string target, WorkerSide worker = WorkerSide::kConnects)
      : target_(std::move(target)), worker_(worker), frontend_(context_, zmq::socket_type::router) {
    frontend_.set(zmq::sockopt::linger, 0);
    frontend_.set(zmq::sockopt::router_mandatory, 1);
    frontend_.bind("tcp://127.0.0.1:*");
    endpoint_ = frontend_.get(zmq::sockopt::last_endpoint);
  }
  ~WireProxy() { stop(); }
  WireProxy(const WireProxy&) = delete;
  WireProxy& operator=(const WireProxy&) = delete;

  // Adds a rule; its index for applied()/matched(). Then start().
  std::size_t add(const ProxyRule& rule) {
    std::lock_guard lock(mu_);
    rules_.push_back(std::make_unique<Rule>(rule));
    return rules_.size() - 1;
  }
  void start() {
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }
  // How many messages (or batch entries) rule `i` hit, and how many matched its filter.
  int applied(std::size_t i) const { return rules_.at(i)->applied.load(); }
  int matched(std::size_t i) const { return rules_.at(i)->matched.load(); }
  // Envelopes forwarded each way (a batch counts once).
  std::uint64_t forwarded(ProxyDirection d) const { return d == ProxyDirection::kToWorker ? to_worker_.load() : from_worker_.load(); }

 private:
  struct Rule {
    explicit Rule(const ProxyRule& r) : spec(r), rng(r.seed) {}
    ProxyRule spec;
    std::mt19937_64 rng;
    std::atomic<int> matched{0}, applied{0};
  };
  // One message on its way: header fields and body, or an undecodable one as it came.
  struct Unit {
    net::EnvelopeKind kind = net::EnvelopeKind::kHeartbeat;
    std::uint64_t id = 0;
    std::vector<std::byte> body;
    bool garble_header = false;
  };
  struct Link {
    std::string route;  // the connector's routing id on the frontend
    std::unique_ptr<zmq::socket_t> backend;
  };
  struct Held {
    std::chrono::steady_clock::time_point at;  // max(): until the next message this way
    Link* link;
    bool up;  // connector -> listener
    Unit unit;
  };

  bool from_worker(bool up) const { return up == (worker_ == WorkerSide::kConnects); }

  void run() {
    while (!stop_) {
      std::vector<zmq::pollitem_t> items{{frontend_.handle(), 0, ZMQ_POLLIN, 0}};
      for (auto& l : links_) items.push_back({l->backend->handle(), 0, ZMQ_POLLIN, 0});
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(5));
      std::vector<zmq::message_t> parts;
      if (items[0].revents & ZMQ_POLLIN)
        while (net::receive_message(frontend_, parts, 8)) from_frontend(parts);
      for (std::size_t i = 1; i < items.size(); ++i)
        if (items[i].revents & ZMQ_POLLIN)
          while (net::receive_message(*links_[i - 1]->backend, parts, 8)) handle(*links_[i - 1], /*up=*/false, parts, 0);
      release_due();
    }
  }

  void from_frontend(std::vector<zmq::message_t>& parts) {
    const std::string route = parts[0].to_string();
    Link* link = nullptr;
    for (auto& l : links_)
      if (l->route == route) link = l.get();
    if (link == nullptr) {
      auto l = std::make_unique<Link>();
      l->route = route;
      l->backend = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
      l->backend->set(zmq::sockopt::linger, 0);
      l->backend->connect(target_);
      links_.push_back(std::move(l));
      link = links_.back().get();
    }
    handle(*link, /*up=*/true, parts, 1);
  }

  // Decodes what came, applies the rules, forwards what is left.
  void handle(Link& link, bool up, std::vector<zmq::message_t>& parts, std::size_t skip) {
    (from_worker(up) ? from_worker_ : to_worker_)++;
    const auto spans = net::part_spans(parts, skip);
    net::Envelope e;
    wire::Error error;
    if (!net::decode_envelope(spans, e, error).ok()) {
      forward_raw(link, up, spans);  // not ours to judge: the receiver refuses it
      return;
    }
    std::vector<Unit> units;
    bool batch = e.kind == net::EnvelopeKind::kReplies || e.kind == net::EnvelopeKind::kRequests;
    const auto lone = e.kind == net::EnvelopeKind::kReplies ? net::EnvelopeKind::kReply : net::EnvelopeKind::kRequest;
    std::vector<net::BatchEntry> entries;
    if (batch && !net::decode_batch(e, entries, error).ok()) batch = false;  // forwarded as it came, unless a rule says otherwise
    if (batch) {
      for (const auto& entry : entries) units.push_back(Unit{lone, entry.request, {entry.frame.begin(), entry.frame.end()}});
      // A rule on the batch itself (kind REPLIES/REQUESTS) sees it whole first.
      Unit whole{e.kind, e.request, {e.body.begin(), e.body.end()}};
      std::vector<Unit> out;
      std::vector<Held> later;
      if (apply(link, up, whole, out, later, /*whole_batch=*/true)) {
        for (Unit& u : out) send(link, up, u);
        release_reordered(up);
        hold(std::move(later));
        return;
      }
    } else {
      units.push_back(Unit{e.kind, e.request, {e.body.begin(), e.body.end()}});
    }
    std::vector<Unit> out;
    std::vector<Held> later;
    for (Unit& u : units) apply(link, up, u, out, later, false);
    if (batch) {
      // Entries still of the batch's kind go back in one (or alone, if one
      // is left); an entry a rule re-labelled or garbled the header of goes alone.
      std::vector<Unit> plain, odd;
      for (Unit& u : out) (u.kind == lone && !u.garble_header ? plain : odd).push_back(std::move(u));
      if (plain.size() >= 2) {
        net::BatchWriter w;
        for (const Unit& u : plain) w.add(u.id, u.body);
        Unit b{e.kind, w.entries(), w.take()};
        send(link, up, b);
      } else {
        for (Unit& u : plain) send(link, up, u);
      }
      for (Unit& u : odd) send(link, up, u);
    } else {
      for (Unit& u : out) send(link, up, u);
    }
    release_reordered(up);
    hold(std::move(later));
  }

  bool matches(const ProxyRule& r, bool up, const Unit& u) const {
    if (r.direction != ProxyDirection::kBoth && (r.direction == ProxyDirection::kFromWorker) != from_worker(up)) return false;
    if (r.envelope && *r.envelope != u.kind) return false;
    if (r.frame && (u.body.size() < runtime::kFrameHeaderBytes || static_cast<runtime::WireKind>(u.body[6]) != *r.frame)) return false;
    return true;
  }

  // Applies the first rule that picks `u`; what is to go now lands in `out`,
  // what is held back in `later`. Whether a rule applied.
  bool apply(Link& link, bool up, Unit& u, std::vector<Unit>& out, std::vector<Held>& later, bool whole_batch) {
    std::lock_guard lock(mu_);
    for (auto& rp : rules_) {
      Rule& r = *rp;
      const ProxyRule& s = r.spec;
      if (whole_batch != (s.envelope == net::EnvelopeKind::kReplies || s.envelope == net::EnvelopeKind::kRequests)) continue;
      if (!matches(s, up, u)) continue;
      const int n = ++r.matched;
      if (s.limit > 0 && r.applied.load() >= s.limit) continue;
      const bool pick = s.nth > 0 ? n == s.nth : std::uniform_real_distribution<double>(0, 1)(r.rng) < s.probability;
      if (!pick) continue;
      ++r.applied;
      switch (s.action) {
        case ProxyAction::kGarble:
          if (!u.body.empty()) u.body[0] ^= std::byte{0xff};
          break;
        case ProxyAction::kGarbleEnvelope: u.garble_header = true; break;
        case ProxyAction::kFlipBit: {
          const std::uint64_t bits = u.body.size() * 8;
          if (bits == 0) break;
          std::uint64_t b = s.bit >= 0 ? static_cast<std::uint64_t>(s.bit) % bits : r.rng() % bits;
          if (s.bit_from_end) b = bits - 1 - b;
          u.body[b / 8] ^= static_cast<std::byte>(1u << (b % 8));
          break;
        }
        case ProxyAction::kDrop: return true;
        case ProxyAction::kDuplicate: out.push_back(u); break;
        case ProxyAction::kReorder: later.push_back(Held{std::chrono::steady_clock::time_point::max(), &link, up, std::move(u)}); return true;
        case ProxyAction::kDelay:
          later.push_back(Held{std::chrono::steady_clock::now() + std::chrono::milliseconds(s.delay_ms), &link, up, std::move(u)});
          return true;
        case ProxyAction::kRewriteId: u.id += s.id_delta; break;
        case ProxyAction::kReplace: u.body = s.replacement; break;
        case ProxyAction::kRewriteKind: u.kind = s.new_kind; break;
      }
      out.push_back(std::move(u));
      return true;
    }
    out.push_back(std::move(u));
    return false;
  }

  void send(Link& link, bool up, const Unit& u) {
    std::vector<std::byte> header;
    net::encode_header(u.kind, u.id, header);
    if (u.garble_header) header[0] ^= std::byte{0xff};
    const bool body = net::envelope_has_body(u.kind);
    if (up) {
      if (body) net::send_parts(*link.backend, {zmq::buffer(header), zmq::buffer(u.body.data(), u.body.size())}, true);
      else net::send_parts(*link.backend, {zmq::buffer(header)}, true);
    } else if (body) {
      net::send_parts(frontend_, {zmq::buffer(link.route), zmq::buffer(header), zmq::buffer(u.body.data(), u.body.size())}, true);
    } else {
      net::send_parts(frontend_, {zmq::buffer(link.route), zmq::buffer(header)}, true);
    }
  }
  void forward_raw(Link& link, bool up, const std::vector<std::span<const std::byte>>& spans) {
    zmq::socket_t& s = up ? *link.backend : frontend_;
    try {
      if (!up && !s.send(zmq::buffer(link.route), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        const auto more = i + 1 < spans.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        if (!s.send(zmq::buffer(spans[i].data(), spans[i].size()), more | zmq::send_flags::dontwait)) return;
      }
    } catch (const zmq::error_t&) {
      // the other side is gone: nothing to forward to
    }
  }

  void hold(std::vector<Held> later) {
    for (Held& h : later) held_.push_back(std::move(h));
  }
  // A reordered message goes right after the next one forwarded its way.
  void release_reordered(bool up) {
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->up == up && it->at == std::chrono::steady_clock::time_point::max()) {
        send(*it->link, it->up, it->unit);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void release_due() {
    const auto now = std::chrono::steady_clock::now();
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->at <= now) {
        send(*it->link, it->up, it->unit);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::string target_;
  WorkerSide worker_;
  zmq::context_t context_{1};
  zmq::socket_t frontend_;
  std::string endpoint_;
  std::vector<std::unique_ptr<Link>> links_;  // proxy thread only
  std::deque<Held> held_;                     // proxy thread only
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Rule>> rules_;
  std::atomic<std::uint64_t> from_worker_{0}, to_worker_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace redflow::testing
