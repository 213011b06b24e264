// A stream node's direct links to the other nodes (node_links.hpp).
#include "stream/node_links.hpp"

#include <spdlog/spdlog.h>

#include "net/envelope.hpp"

namespace redflow::stream {

NodeLinks::~NodeLinks() {
  for (auto& w : watches_)
    if (w) w->detach();  // before the DEALERs close: the context lives on
  for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("stream worker: refused {} message(s) from {} in all", n, peer);
}

void NodeLinks::expect(const std::vector<NodeLink>& links, std::uint32_t self, std::uint32_t incarnation) {
  for (auto& w : watches_)
    if (w) w->detach();
  dealers_.clear();  // an earlier incarnation's links, and what waited on them, go
  dealers_.resize(links.size());
  dialled_.assign(links.size(), {});
  watches_.clear();
  watches_.resize(links.size());
  waiting_for_.assign(links.size(), {});
  waiting_ = 0;
  links_ = links;
  self_ = self;
  incarnation_ = incarnation;
}

Status NodeLinks::dial(std::uint32_t n) {
  if (watches_[n]) watches_[n]->detach();
  dealers_[n].reset();
  watches_[n] = std::make_unique<net::LinkWatch>();
  auto dealer = socket_.dial(links_[n].endpoint, links_[n].public_key, /*immediate=*/true, watches_[n].get());
  if (!dealer.ok()) return Status::IOError("cannot link to node " + std::to_string(n) + " at " + links_[n].endpoint + ": " + dealer.status().message());
  dealers_[n] = std::make_unique<zmq::socket_t>(std::move(*dealer));
  dialled_[n] = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status NodeLinks::connect() {
  for (std::uint32_t n = 0; n < links_.size(); ++n)
    if (direct(n) && !dealers_[n]) REDFLOW_RETURN_IF_ERROR(dial(n));
  return Status::Ok();
}

// Hands `body` to node's link if it can take it now (it is then moved out).
bool NodeLinks::post(std::uint32_t node, std::vector<std::byte>& body) {
  if (!dealers_[node]) return false;  // not dialled yet
  // A DEALER without a connection (not yet made, or its handshake refused)
  // does not take it; the body then waits here.
  const std::size_t size = body.size();
  if (!net::try_send_envelope_owned(*dealers_[node], net::EnvelopeKind::kRequest, incarnation_, body)) return false;
  sent_bytes_ += size;
  return true;
}

void NodeLinks::send(std::uint32_t node, std::vector<std::byte> body) {
  auto& queue = waiting_for_[node];
  if (queue.empty() && post(node, body)) return;
  queue.push_back(std::move(body));
  ++waiting_;
}

bool NodeLinks::retry() {
  const auto now = std::chrono::steady_clock::now();
  for (std::uint32_t n = 0; n < waiting_for_.size() && waiting_ > 0; ++n) {
    auto& queue = waiting_for_[n];
    while (!queue.empty() && post(n, queue.front())) {
      queue.pop_front();
      --waiting_;
    }
    // A refused handshake is not tried again by ZeroMQ: dial again (with
    // ZMQ_IMMEDIATE nothing was queued on the old DEALER).
    if (!queue.empty() && dealers_[n] && watches_[n]->refused() && now - dialled_[n] >= kRedialAfter) {
      spdlog::debug("stream worker: the handshake with node {} at {} failed; dialling again", n, links_[n].endpoint);
      if (Status s = dial(n); !s.ok()) spdlog::warn("stream worker: {}", s.message());
    }
  }
  return waiting_ == 0;
}

void NodeLinks::poll_items(std::vector<zmq::pollitem_t>& items) {
  if (socket_.listening()) items.push_back({socket_.router().handle(), 0, ZMQ_POLLIN, 0});
  for (std::uint32_t n = 0; n < waiting_for_.size(); ++n)
    if (!waiting_for_[n].empty() && dealers_[n]) items.push_back({dealers_[n]->handle(), 0, ZMQ_POLLOUT, 0});
}

bool NodeLinks::receive(net::ReceivedBytes& out) {
  if (!socket_.listening()) return false;
  std::vector<zmq::message_t> parts;
  while (net::receive_message(socket_.router(), parts)) {
    net::Envelope e;
    wire::Error error;
    Status s = net::decode_envelope(net::part_spans(parts, 1), e, error);
    if (s.ok() && e.kind != net::EnvelopeKind::kRequest) s = Status::InvalidArgument(std::string("a ") + net::envelope_kind_name(e.kind));
    if (s.ok()) {
      auto type = message_type(e.body);
      if (!type.ok()) s = type.status();
      else if (*type != StreamMessage::kTokens && *type != StreamMessage::kBarrier && *type != StreamMessage::kCredit)
        s = Status::InvalidArgument(std::string("a ") + stream_message_name(*type) + ", which nodes do not send each other");
    }
    if (!s.ok()) {
      if (const std::uint64_t n = refusals_.refuse(kNodesName))
        spdlog::warn("stream worker: refused a message from another node: {}{}", s.message(), net::RefusalLog::times(n));
      continue;
    }
    if (e.request != incarnation_) continue;  // sent before a lost node's recovery: that run was abandoned
    out = parts.size() == 3 ? net::ReceivedBytes(std::move(parts[2])) : net::ReceivedBytes(std::vector<std::byte>(e.body.begin(), e.body.end()));
    return true;
  }
  return false;
}

}  // namespace redflow::stream
