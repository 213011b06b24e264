// What the tile hub sends (tile_hub.hpp): requests the engine submits,
// CANCELs of fetches from a lost source, and the flush that hands the queue
// to a HubSender, notices first, then each worker's requests in order, small
// ones batched.
#include "net/tile_hub.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::net {

std::shared_ptr<TileHub::Request> TileHub::submit(unsigned w, std::vector<std::byte> frame, bool wants_reply, int fetch_from,
                                                  double budget_s) {
  auto r = std::make_shared<Request>();
  r->worker = w;
  r->frame = std::move(frame);
  r->wants_reply = wants_reply;
  r->fetch_from = fetch_from;
  r->budget_s = budget_s;
  if (lost(w)) {
    r->done = r->lost = true;
    return r;
  }
  if (fetch_from >= 0 && lost(static_cast<unsigned>(fetch_from))) {
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
  return r;
}

// A CANCEL goes through the same queue as requests, so it never overtakes
// the fetch it names; one still queued is cancelled right behind it.
void TileHub::cancel_fetches_from(unsigned source) {
  std::vector<std::shared_ptr<Request>> cancels;
  auto cancel = [&](const std::shared_ptr<Request>& fetch) {
    if (fetch->fetch_from != static_cast<int>(source) || fetch->kind != EnvelopeKind::kRequest || hub_.lost(fetch->worker)) return;
    auto c = std::make_shared<Request>();
    c->worker = fetch->worker;
    c->id = fetch->id;
    c->kind = EnvelopeKind::kCancel;
    c->wants_reply = false;
    cancels.push_back(std::move(c));
  };
  for (const auto& [id, r] : in_flight_) cancel(r);
  for (const std::shared_ptr<Request>& r : outbox_) cancel(r);
  outbox_.insert(outbox_.end(), cancels.begin(), cancels.end());
}

// Notices first: a WELCOME must reach its worker before the first REQUEST
// (the engine may send one the moment wait_for_workers() sees the worker),
// or the worker, without a tile yet, would have to drop it.
TileHub::Outbox TileHub::take_outbox(Time now) {
  Outbox out;
  out.notices_ = hub_.take_notices();
  out.queued_.swap(outbox_);
  out.routes_.resize(hub_.size());
  for (auto it = out.queued_.begin(); it != out.queued_.end();) {
    const std::shared_ptr<Request>& r = *it;
    if (hub_.lost(r->worker)) {
      r->done = r->lost = true;
      answered_.push_back(r);
      it = out.queued_.erase(it);
      continue;
    }
    out.routes_[r->worker] = hub_.peer(r->worker).routing_id;
    if (r->kind == EnvelopeKind::kRequest) {
      r->sent_at = now;
      in_flight_.emplace(r->id, r);
    }
    ++it;
  }
  return out;
}

// Each worker's requests in the order they were queued: the small ones that
// follow each other go as one batch (envelope.hpp), a value or a CANCEL alone.
void TileHub::Outbox::emit(HubSender& out) {
  for (const PeerHub::Notice& n : notices_) note(n.routing_id, n.body.size(), out.send(n.routing_id, n.kind, n.request, n.body));
  std::vector<std::vector<Request*>> batches(routes_.size());
  auto flush = [&](unsigned w) {
    batched_ += send_batched(std::span<Request* const>(batches[w]), EnvelopeKind::kRequest,
                             [&](EnvelopeKind kind, std::uint64_t id, std::vector<std::byte> body) {
                               const std::size_t bytes = body.size();
                               note(routes_[w], bytes, out.send_owned(routes_[w], kind, id, std::move(body)));
                             });
    for (Request* r : batches[w]) r->frame = {};
    batches[w].clear();
  };
  for (const std::shared_ptr<Request>& r : queued_) {
    if (r->kind == EnvelopeKind::kRequest && BatchWriter::fits(r->frame)) {
      batches[r->worker].push_back(r.get());
      if (batches[r->worker].size() == kMaxBatchEntries) flush(r->worker);
      continue;
    }
    flush(r->worker);  // what was queued before it goes before it
    const std::string& route = routes_[r->worker];
    if (envelope_has_body(r->kind)) {
      // A value: ZeroMQ takes over the buffer it was encoded into.
      const std::size_t bytes = r->frame.size();
      note(route, bytes, out.send_owned(route, r->kind, r->id, std::move(r->frame)));
    } else {
      note(route, 0, out.send(route, r->kind, r->id, {}));
    }
    r->frame = {};
  }
  for (unsigned w = 0; w < batches.size(); ++w) flush(w);
}

void TileHub::sent(const Outbox& out) {
  counts_.batched_requests += out.batched_;
  for (const Outbox::Sent& s : out.sent_) {
    const int index = hub_.find(s.routing_id);
    Worker* w = index >= 0 ? &workers_[index] : nullptr;
    if (s.ok) {
      const std::uint64_t bytes = kEnvelopeHeaderBytes + s.bytes;
      counts_.bytes_sent += bytes;
      counts_.largest_sent_bytes = std::max(counts_.largest_sent_bytes, bytes);
      if (w != nullptr) w->traffic.bytes_sent += bytes;
      continue;
    }
    hub_.unreachable(s.routing_id);
  }
}

void TileHub::flush(Time now, HubSender& out) {
  Outbox box = take_outbox(now);
  box.emit(out);
  sent(box);
}

}  // namespace redflow::net
