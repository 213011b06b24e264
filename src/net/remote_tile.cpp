// A tile in a worker process, reached through the tile server (remote_tile.hpp).
#include "net/remote_tile.hpp"

#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <deque>

#include "net/peer_links.hpp"
#include "runtime/frame_client.hpp"

namespace redflow::net {

using namespace redflow::runtime;

RemoteTile::RemoteTile(TileServer& server, unsigned worker, unsigned index)
    : server_(server), worker_(worker), index_(index) {
  attach();
}

void RemoteTile::attach() {
  const HelloMessage hello = server_.hello(worker_);
  slot_bytes_ = hello.slot_bytes;
  name_ = hello.name;
}

std::string RemoteTile::who() const { return "tile " + std::to_string(index_) + " (worker '" + name_ + "')"; }

bool RemoteTile::lost() const { return lost_.load(std::memory_order_acquire) || server_.lost(worker_); }

Status RemoteTile::call(std::vector<std::byte> frame, DecodedFrame& out, WireKind expect) {
  TileServer::Ticket ticket = server_.send(worker_, std::move(frame));
  return receive(ticket, out, expect);
}

Status RemoteTile::answered_lost(DecodedFrame& out) {
  lost_.store(true, std::memory_order_release);
  out.borrowed_from.reset();
  std::vector<std::byte> lost;
  encode_lost(lost);
  return decode(lost, out);
}

Status RemoteTile::receive(TileServer::Ticket& ticket, DecodedFrame& out, WireKind expect) {
  out.borrowed_from.reset();
  ReceivedBytes reply;
  if (!server_.await(ticket, reply)) return answered_lost(out);
  Status s;
  if (!BatchWriter::fits(reply.bytes())) {
    // A value read back: decoded where it arrived, and copied from there
    // once, into main memory (slot_data_of), not first out of the message.
    auto kept = std::make_shared<ReceivedBytes>(std::move(reply));
    s = decode(kept->bytes(), out, /*borrow=*/true);
    out.borrowed_from = std::move(kept);
  } else {
    s = decode(reply.bytes(), out);
  }
  // A worker whose answer cannot be read, or is not an answer to what was
  // asked, no longer follows the protocol: nothing else it holds is
  // trusted, and its work is re-run elsewhere as after any lost worker.
  if (!s.ok()) {
    server_.lose(worker_, "answered a garbled frame: " + s.message());
    return answered_lost(out);
  }
  if (out.kind != expect && out.kind != WireKind::kLost) {
    // An error where a completion or a slot's bytes were due: the worker
    // could not read the frame it was sent, so the link garbles (the same
    // rule as an envelope it cannot read: it says REFUSED and is lost).
    server_.lose(worker_, out.kind == WireKind::kStatus && !out.status.ok()
                              ? "could not read what the driver sent: " + out.status.message()
                              : "answered with a frame of the wrong kind (kind " + std::to_string(static_cast<int>(out.kind)) + " where kind " +
                                    std::to_string(static_cast<int>(expect)) + " was due)");
    return answered_lost(out);
  }
  if (out.kind == WireKind::kLost) lost_.store(true, std::memory_order_release);
  return s;
}

Status RemoteTile::status_reply(const DecodedFrame& reply) const {
  if (reply.kind == WireKind::kLost) return Status::Internal(who() + " is lost");
  if (reply.kind != WireKind::kStatus)
    return Status::Internal("tile protocol: worker '" + name_ + "' answered with the wrong kind of frame");
  if (reply.status.ok()) return reply.status;
  const std::string what = "worker '" + name_ + "' (tile " + std::to_string(index_) + "): " + reply.status.message();
  switch (reply.status.code()) {
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(what);
    case Status::Code::kNotFound: return Status::NotFound(what);
    case Status::Code::kInvalidGraph: return Status::InvalidGraph(what);
    case Status::Code::kResourceExhausted: return Status::ResourceExhausted(what);
    case Status::Code::kDataLoss: return Status::DataLoss(what);
    case Status::Code::kGaveUp: return Status::GaveUp(what);
    default: return Status::Internal(what);
  }
}

Status RemoteTile::load_actors(const ActorTableMessage& table, const Registry& registry) {
  if (hand_over_) hand_over_(table.table, registry);
  std::vector<std::byte> frame;
  encode(table, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

Status RemoteTile::configure_faults(const FaultConfigMessage& faults) {
  std::vector<std::byte> frame;
  encode(faults, frame);
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(call(std::move(frame), reply));
  return status_reply(reply);
}

const RemoteTile* RemoteTile::peer_source(const DataNodeMessage& message) const {
  if (!peer_transfers_ || message.source_tile < 0 || static_cast<std::size_t>(message.source_tile) >= peers_.size()) return nullptr;
  const auto* source = dynamic_cast<const RemoteTile*>(peers_[message.source_tile]);
  if (source == nullptr || &source->server_ != &server_ || source->lost()) return nullptr;
  return server_.peer(source->worker_).endpoint.empty() ? nullptr : source;
}

// The worker fetches the value from the source's peer socket; should the
// source no longer hold it, or be lost (the tile server then cancels the
// fetch), the engine takes the value from main memory or recomputes it, as
// after any transfer that found nothing.
Status RemoteTile::fetch_from_peer(const DataNodeMessage& message, const RemoteTile& source) {
  const TileServer::PeerAddress from = server_.peer(source.worker_);
  std::vector<std::byte> frame;
  encode(message, PeerSource{from.endpoint, from.public_key}, frame);
  TileServer::Ticket ticket = server_.send_fetch(worker_, std::move(frame), source.worker_);
  if (depth_ > 1) {
    // Ahead of the actor, as data nodes from main memory go: the worker
    // holds its later frames until the value is in the slot, and a fetch
    // that finds nothing comes back with the actor's completion.
    placing_.push_back(Placement{ticket, message.slot, static_cast<int>(source.worker_), message.bytes, message.tag.data});
    // Counted when sent, as the engine traces it, and taken back if it
    // finds nothing: a straggler's copy abandoned at the end of an execution
    // has its fetch in both or in neither.
    peer_bytes_in_.fetch_add(message.bytes, std::memory_order_relaxed);
    return Status::Ok();
  }
  DecodedFrame reply;
  REDFLOW_RETURN_IF_ERROR(receive(ticket, reply, WireKind::kStatus));
  Status s = status_reply(reply);
  if (s.ok()) {
    peer_bytes_in_.fetch_add(message.bytes, std::memory_order_relaxed);
    if (message.checked) checked_ok();
  } else if (s.code() == Status::Code::kDataLoss) {
    corrupted(message.tag.data, s.message());  // the engine places it again, through the driver
  }
  return s;
}

Status RemoteTile::data_node(const DataNodeMessage& message) {
  if (const RemoteTile* source = peer_source(message)) return fetch_from_peer(message, *source);
  // Any other transfer from a tile is relayed: read here, then sent on as
  // bytes from main memory. A relay is answered before this returns: only
  // values from main memory go ahead of their actor (pipelining relays too
  // is not done: docs/remote.md).
  const bool relayed = message.source_tile != kFromDriver;
  std::vector<std::byte> relayed_bytes;
  DataNodeMessage m = message;
  if (relayed) REDFLOW_RETURN_IF_ERROR(read_relayed(message, peers_, relayed_bytes, m));
  if (lost()) return Status::Internal(who() + " is lost");
  // Bytes from main memory (given, made in the driver's process, or
  // recomputed there after a loss) are hashed as they are sent; a relayed
  // value keeps the checksum its read was verified against. The check
  // covers the wire from here on: the worker verifies before it places. A
  // value in pieces is hashed piece by piece as they go, not in a pass of
  // its own before the first.
  const bool hash = !relayed || !m.checked;
  const bool in_pieces = m.bytes > PeerLinks::kChunkBytes;
  if (hash && !in_pieces) m.checksum = XXH3_64bits(m.payload.data(), m.payload.size());
  m.checked = true;
  const bool ahead = depth_ > 1 && !relayed;
  if (ahead && in_pieces) return send_in_pieces(m, true, hash);
  if (ahead) {
    // Nothing can go wrong here that the engine could act on at once (a lost
    // worker loses the actor too; bytes that arrive corrupted are placed
    // again), so the bytes go ahead of the actor without a round trip of
    // their own; the worker takes frames in order.
    std::vector<std::byte> frame;
    encode(m, frame);
    placing_.push_back(Placement{server_.send(worker_, std::move(frame)), m.slot, -1, m.bytes, m.tag.data});
    return Status::Ok();
  }
  return send_value(m, hash);
}

Status RemoteTile::send_value(const DataNodeMessage& m, bool hash_pieces) {
  for (;;) {
    Status s;
    if (m.bytes > PeerLinks::kChunkBytes) {
      s = send_in_pieces(m, false, hash_pieces);
    } else {
      std::vector<std::byte> frame;
      encode(m, frame);
      DecodedFrame reply;
      s = call(std::move(frame), reply);
      if (s.ok()) s = status_reply(reply);
    }
    if (s.code() != Status::Code::kDataLoss) {
      if (s.ok()) checked_ok();
      return s;
    }
    // Corrupted on the way: sent again, until the worker is lost for it.
    corrupted(m.tag.data, s.message());
    if (lost()) return Status::Internal(who() + " is lost");
  }
}

void RemoteTile::corrupted(DataId data, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(corrupted_mutex_);
    corrupted_.push_back(Corrupted{data, std::chrono::steady_clock::now()});
  }
  spdlog::warn("{}: end-to-end check: {}", who(), what);
  if (corrupted_in_a_row_.fetch_add(1, std::memory_order_relaxed) + 1 >= kCorruptedInARow)
    server_.lose(worker_, std::to_string(kCorruptedInARow) + " values in a row crossed the wire corrupted (the last: " + what + ")");
}

std::vector<RemoteTile::Corrupted> RemoteTile::take_corrupted() {
  std::lock_guard<std::mutex> lock(corrupted_mutex_);
  return std::exchange(corrupted_, {});
}

// A large value streams in chunks, as values between workers and read-backs
// do: each piece is copied once here (into its frame, which ZeroMQ takes
// over) and once on the worker (into the slot, as it comes), and no message
// holds more than a chunk. `ahead` (pipelined), every piece goes ahead of
// the actor at once, answered with its completion: the value crosses the
// wire while the worker still runs the actors sent before it, where a window
// would hold the rest back until the worker reached the first piece.
// Otherwise at most kWindow pieces are unanswered, and all are answered
// before this returns. `hash`: the value's checksum is taken here, piece by
// piece, and goes with the last piece, the one the worker checks the whole
// value at (the pieces before it carry none).
Status RemoteTile::send_in_pieces(const DataNodeMessage& m, bool ahead, bool hash) {
  std::deque<Placement> unanswered;
  Status first;
  auto answer_oldest = [&] {
    DecodedFrame reply;
    Status s = receive(unanswered.front().ticket, reply, WireKind::kStatus);
    if (s.ok()) s = status_reply(reply);
    if (first.ok()) first = s;
    unanswered.pop_front();
  };
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(hash ? XXH3_createState() : nullptr, &XXH3_freeState);
  if (state) XXH3_64bits_reset(state.get());
  for (std::uint64_t offset = 0; offset < m.bytes && first.ok();) {
    const std::uint64_t length = std::min(PeerLinks::kChunkBytes, m.bytes - offset);
    const auto piece_bytes = m.payload.subspan(offset, length);
    std::uint64_t checksum = m.checksum;
    if (state) {
      XXH3_64bits_update(state.get(), piece_bytes.data(), piece_bytes.size());
      checksum = offset + length == m.bytes ? XXH3_64bits_digest(state.get()) : 0;
    }
    std::vector<std::byte> frame;
    encode(DataNodePieceMessage{m.tag, m.slot, m.bytes, offset, piece_bytes, checksum, m.checked}, frame);
    Placement piece{server_.send(worker_, std::move(frame)), m.slot, -1, length, m.tag.data};
    offset += length;
    if (ahead) {
      placing_.push_back(std::move(piece));
      continue;
    }
    unanswered.push_back(std::move(piece));
    if (unanswered.size() == PeerLinks::kWindow) answer_oldest();
  }
  while (!unanswered.empty()) {
    if (first.ok()) {
      answer_oldest();
    } else {
      server_.abandon(unanswered.front().ticket);
      unanswered.pop_front();
    }
  }
  return first;
}

// Clears need no answer: the worker handles frames in order, so a later
// message never finds the slot still full.
void RemoteTile::clear_slot(SlotId slot) {
  std::vector<std::byte> frame;
  encode(ClearSlotMessage{slot}, frame);
  server_.post(worker_, std::move(frame));
}

void RemoteTile::clear_all() {
  std::vector<std::byte> frame;
  encode_clear_all(frame);
  server_.post(worker_, std::move(frame));
}

Completion RemoteTile::actor(const ActorMessage& message) {
  send_actor(message);
  return next_completion();
}

void RemoteTile::send_actor(const ActorMessage& message) {
  std::vector<std::byte> frame;
  encode(message, frame);
  // An actor's deadline is the engine's to give (bound_completion); until then only a dropped answer is caught.
  sent_.push_back(Sent{server_.send(worker_, std::move(frame), TileServer::kUnbounded), message.actor, std::exchange(placing_, {})});
}

Status RemoteTile::settle(std::vector<Placement>& placements, std::vector<SlotId>& missing) {
  Status first;
  for (Placement& p : placements) {
    DecodedFrame reply;
    Status s = receive(p.ticket, reply, WireKind::kStatus);
    // A lost worker is not the placement's error: the actor's completion says lost.
    if (s.ok() && reply.kind == WireKind::kLost) continue;
    if (s.ok()) s = status_reply(reply);
    if (s.code() == Status::Code::kDataLoss) {
      // The bytes did not match their checksum: the worker placed nothing
      // and ran nothing on them, and the engine places the value again.
      corrupted(p.data, s.message());
      if (p.source_worker >= 0) peer_bytes_in_.fetch_sub(p.bytes, std::memory_order_relaxed);
      missing.push_back(p.slot);
      continue;
    }
    if (s.ok()) checked_ok();
    if (p.source_worker >= 0) {
      if (!s.ok()) peer_bytes_in_.fetch_sub(p.bytes, std::memory_order_relaxed);
      if (s.code() == Status::Code::kNotFound) {
        missing.push_back(p.slot);
        continue;
      }
    }
    if (first.ok()) first = s;
  }
  placements.clear();
  return first;
}

Completion RemoteTile::next_completion() {
  Sent s = std::move(sent_.front());
  sent_.pop_front();
  std::vector<SlotId> missing;
  const Status placed = settle(s.placements, missing);
  DecodedFrame reply;
  const Status received = receive(s.ticket, reply, WireKind::kCompletion);
  Completion done = completion_of(received, reply, s.actor, who());
  if (done.lost) return done;
  if (!placed.ok() && done.ok) {
    done.ok = false;
    done.error = "placing an input failed: " + placed.message();
  } else if (placed.ok() && !missing.empty()) {
    // The worker emptied those slots and ran nothing on them ("holds no value").
    done.ok = false;
    done.error = "an input fetched from another worker was not there";
    done.missing_inputs = std::move(missing);
  }
  return done;
}

bool RemoteTile::completion_within(double timeout_s) { return server_.answered_within(sent_.front().ticket, timeout_s); }

void RemoteTile::bound_completion(std::size_t i, double seconds) {
  if (i < sent_.size()) server_.bound(sent_[i].ticket, seconds);
}

void RemoteTile::abandon_completion() {
  for (Placement& p : sent_.front().placements) server_.abandon(p.ticket);
  server_.abandon(sent_.front().ticket);
  sent_.pop_front();
}

// A value read back is verified against the checksum its producer reported
// before anyone reads it; bytes that do not match are read again, until the
// worker is lost for them (its values are then recomputed elsewhere).
bool RemoteTile::read_slot(const ReadSlotMessage& message, std::span<std::byte> out) {
  const bool whole = message.offset == 0 && message.range() == message.bytes;
  const bool check = message.checked && whole;
  for (;;) {
    std::uint64_t got = 0;
    if (!read_once(message, out, check ? &got : nullptr)) return false;
    if (!check) return true;
    if (got == message.checksum) {
      checked_ok();
      return true;
    }
    char sums[64];
    std::snprintf(sums, sizeof sums, "%016" PRIx64 ", expected %016" PRIx64, got, message.checksum);
    corrupted(message.tag.data, "data node " + std::to_string(message.tag.data) + " (execution " + std::to_string(message.tag.execution) +
                                    ", " + std::to_string(message.bytes) + " bytes) read back from slot " + std::to_string(message.slot) +
                                    " arrived with checksum " + sums);
    if (lost()) return false;
  }
}

bool RemoteTile::read_once(const ReadSlotMessage& message, std::span<std::byte> out, std::uint64_t* checksum) {
  if (out.size() != message.bytes) return false;
  // A large value comes back in chunks, as between workers (PeerLinks): the
  // worker copies one out of its slot while the one before crosses the wire
  // and the one before that is copied into main memory, and neither side
  // holds more than a window of chunks besides the value itself.
  struct Chunk {
    TileServer::Ticket ticket;
    std::uint64_t offset = 0, length = 0;
  };
  std::deque<Chunk> asked;
  std::uint64_t next = 0;
  auto ask = [&] {
    const ReadSlotMessage m = PeerLinks::chunk_at(message, next);
    std::vector<std::byte> frame;
    encode(m, frame);
    asked.push_back(Chunk{server_.send(worker_, std::move(frame)), m.offset, m.length});
    next += m.length;
  };
  // The checksum is taken chunk by chunk as each is copied in, while the
  // next ones cross the wire, not in a pass of its own after the last.
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> hash(checksum != nullptr ? XXH3_createState() : nullptr, &XXH3_freeState);
  if (hash) XXH3_64bits_reset(hash.get());
  // A 0-byte value is still asked for once: the answer says whether the slot holds it.
  do ask();
  while (next < message.bytes && asked.size() < PeerLinks::kWindow);
  bool ok = true;
  while (!asked.empty()) {
    Chunk c = std::move(asked.front());
    asked.pop_front();
    if (!ok) {
      server_.abandon(c.ticket);
      continue;
    }
    DecodedFrame reply;
    const Status got = receive(c.ticket, reply, WireKind::kSlotData);
    ok = slot_data_of(got, reply, out.subspan(c.offset, c.length));
    if (ok && next < message.bytes) ask();
    if (ok && hash) XXH3_64bits_update(hash.get(), out.data() + c.offset, c.length);
  }
  if (ok && hash) *checksum = XXH3_64bits_digest(hash.get());
  return ok;
}

}  // namespace redflow::net
