// What the driver of a stream program and its nodes (`redflow worker` as a stream node)
// say to each other over the transport of src/net/ (the envelope, HELLO /
// WELCOME, heartbeats, keys): the bodies of REQUEST (driver -> node) and
// REPLY (node -> driver). Each body starts with its type byte.
//
//   driver -> node   SETUP   the program, its placement, this node's id, the modes
//   node -> driver   READY   its operators are built (or ERROR: why not)
//   driver -> node   START   every node is ready: run
//   both ways        TOKENS  token batches, naming the node they are bound
//                            for. Sent straight to that node over its link
//                            socket when SETUP names one (node_links.hpp);
//                            else to the driver, which forwards the body
//                            unchanged to it (a star, docs/streams.md)
//   node -> driver   DONE    its operators finished: outputs and profile
//   node -> driver   ERROR   an operator failed, or the program cannot be built here
//   driver -> node   CHECKPOINT  the sources take checkpoint `epoch`
//   both ways        BARRIER  where checkpoint barriers lie on streams that
//                            cross nodes, counted from the producer's first
//                            token of this incarnation (the reader adds what
//                            its checkpoint restored): straight to the node
//                            that reads the stream with its tokens, or
//                            through the driver as they go
//   node -> driver   SNAPSHOT an operator's part of a checkpoint (or its
//                            final state once it finished)
//   both ways        CREDIT  tokens of streams with a credit window that the
//                            node reading them has taken since its last
//                            CREDIT, plus what their windows grew by: the
//                            producer's node may send as many more
//                            (credit_window.hpp, room.hpp). It names the
//                            producer's node and goes to it as TOKENS do.
//   node -> driver   SENT    with direct links: the bytes this node has sent
//                            straight to other nodes and the tokens of each
//                            stream leaving it so far, about ten times a
//                            second and before DONE (the driver's progress,
//                            live sample and report).
//   node -> driver   OUTPUT  what a collect operator gathered since its
//                            last OUTPUT, at its offset in the output: an
//                            output crosses the node's link while the run
//                            goes on, and DONE carries none
//
// After a node is lost the driver sends each survivor a new SETUP, of the
// next incarnation, carrying the operators' checkpoint; the node drops its
// part and builds the new one, and answers READY with that incarnation.
//
// A TOKENS body: u32 node, then entries {u32 stream, u8 close, u32 count,
// count tokens of the stream's size}; with `close` the stream has ended after
// them. Tokens of one stream always travel in order (one path, TCP, ZeroMQ).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "redflow/status.hpp"
#include "redflow/stream.hpp"
#include "stream/runner.hpp"

namespace redflow::stream {

// The stream node role's protocol version, offered in a worker's HELLO.
inline constexpr std::uint16_t kStreamProtocolVersion = 5;
inline constexpr std::size_t kMaxProgramItems = std::size_t{1} << 20;  // operators, streams, args
inline constexpr std::size_t kMaxNameBytes = std::size_t{1} << 12;
inline constexpr std::size_t kMaxValueBytes = (std::size_t{1} << 31) - 1;  // an output's bytes

enum class StreamMessage : std::uint8_t { kSetup = 1, kReady = 2, kStart = 3, kTokens = 4, kDone = 5, kError = 6, kCheckpoint = 7, kBarrier = 8, kSnapshot = 9, kCredit = 10, kSent = 11, kOutput = 12 };
const char* stream_message_name(StreamMessage t);

// Where a node listens for the other nodes' tokens (node_links.hpp): an
// empty endpoint when it has no link socket (tokens for it go through the
// driver); with keys, its public key (Z85).
struct NodeLink {
  std::string endpoint, public_key;
  friend bool operator==(const NodeLink&, const NodeLink&) = default;
};

struct SetupMessage {
  std::uint16_t protocol = kStreamProtocolVersion;
  std::uint32_t node = 0, nodes = 1;
  Mode mode = Mode::kPool;
  bool two_level = true, aggregate = true, trace = false;
  std::uint64_t buffer_bytes = 0;  // RunOptions::stream_buffer_bytes (0: unbounded)
  // The program, by value: instances (name, operator, args) and streams, in
  // the driver's order, so stream ids mean the same on every node.
  struct Instance {
    std::string name, op;
    Args args;
    friend bool operator==(const Instance&, const Instance&) = default;
  };
  std::vector<Instance> instances;
  std::vector<Program::Stream> streams;
  std::vector<std::uint32_t> node_of;  // per instance
  // Which start of the program this is (0 the first; one more after each
  // lost node), the last checkpoint epoch used, and the checkpoint of each
  // of this node's operators that goes on from one (by instance).
  std::uint32_t incarnation = 0, epoch = 0;
  bool checkpoints = false;  // the node reports barriers and snapshots
  std::vector<std::pair<std::uint32_t, OperatorCheckpoint>> restore;
  // Where each node listens (by node; empty: every token goes through the
  // driver, the star).
  std::vector<NodeLink> links;
  friend bool operator==(const SetupMessage& a, const SetupMessage& b);
};

// A checkpoint barrier on a stream that crosses nodes (BARRIER).
struct BarrierEntry {
  std::uint32_t stream = 0, epoch = 0;
  std::uint64_t position = 0;
  friend bool operator==(const BarrierEntry&, const BarrierEntry&) = default;
};
// Tokens of a stream: taken by its reader, granted back (CREDIT), or sent
// by its producer's node so far (SENT).
struct TokenCount {
  std::uint32_t stream = 0;
  std::uint64_t tokens = 0;
  friend bool operator==(const TokenCount&, const TokenCount&) = default;
};
// An operator's part of a checkpoint (SNAPSHOT).
struct SnapshotMessage {
  std::uint32_t epoch = 0, op = 0;  // epoch kFinalEpoch: it finished
  OperatorCheckpoint checkpoint;
};

// Bytes a collect operator gathered (OUTPUT): `bytes` go at `offset` of operator `op`'s output.
struct OutputMessage {
  std::uint32_t op = 0;
  std::uint64_t offset = 0;
  std::vector<std::byte> bytes;
  friend bool operator==(const OutputMessage&, const OutputMessage&) = default;
};

// The program of `p`, placed on `nodes` nodes by `node_of`, for `node`.
SetupMessage make_setup(const Program& p, const std::vector<unsigned>& node_of, unsigned node, unsigned nodes);
// Builds the program a SETUP carries from this process's operators: named
// errors for an operator this node lacks or a stream that does not fit.
Result<Program> program_of(const SetupMessage& m, const OperatorRegistry& registry);

// Bodies that are just their type (READY, START) or a text (ERROR).
void encode_type(StreamMessage t, std::vector<std::byte>& out);
void encode_error(const std::string& what, std::vector<std::byte>& out);
void encode(const SetupMessage& m, std::vector<std::byte>& out);
// DONE also carries the most bytes of tokens from other nodes that waited on the node at once.
void encode_done(const RunResult& r, std::vector<std::byte>& out, std::uint64_t most_waiting_bytes = 0);
void encode_ready(std::uint32_t incarnation, std::vector<std::byte>& out);
void encode_checkpoint(std::uint32_t epoch, std::vector<std::byte>& out);
void encode_barriers(const std::vector<BarrierEntry>& barriers, std::vector<std::byte>& out);
void encode(const SnapshotMessage& m, std::vector<std::byte>& out);
void encode_credits(std::uint32_t node, const std::vector<TokenCount>& credits, std::vector<std::byte>& out);
void encode_sent(std::uint64_t bytes, const std::vector<TokenCount>& sent, std::vector<std::byte>& out);
void encode(const OutputMessage& m, std::vector<std::byte>& out);

// The type byte of a body; a named error for an empty body or an unknown type.
Result<StreamMessage> message_type(std::span<const std::byte> body);
// Each refuses anything malformed with a named error ("stream SETUP: <rule>: ...").
Status decode(std::span<const std::byte> body, SetupMessage& out);
Status decode_done(std::span<const std::byte> body, RunResult& out, std::uint64_t* most_waiting_bytes = nullptr);
Status decode_error(std::span<const std::byte> body, std::string& out);
Status decode_ready(std::span<const std::byte> body, std::uint32_t& incarnation);
Status decode_checkpoint(std::span<const std::byte> body, std::uint32_t& epoch);
Status decode_barriers(std::span<const std::byte> body, std::vector<BarrierEntry>& out);
Status decode(std::span<const std::byte> body, SnapshotMessage& out);
Status decode_credits(std::span<const std::byte> body, std::uint32_t& node, std::vector<TokenCount>& out);
Status decode_sent(std::span<const std::byte> body, std::uint64_t& bytes, std::vector<TokenCount>& out);
Status decode(std::span<const std::byte> body, OutputMessage& out);

// Writes TOKENS bodies: begin() once, then add() per stream's run of tokens.
class TokenBatchWriter {
 public:
  explicit TokenBatchWriter(std::vector<std::byte>& out) : out_(out) {}
  void begin(std::uint32_t node);
  void add(std::uint32_t stream, bool close, std::span<const std::byte> tokens, std::size_t count);
  std::size_t bytes() const { return out_.size(); }

 private:
  std::vector<std::byte>& out_;
};

// The node a TOKENS body is bound for (the driver reads only this).
Result<std::uint32_t> tokens_node(std::span<const std::byte> body);
// Calls `entry(stream, close, tokens, count)` for each entry, in order, after
// checking the whole body: `token_bytes(stream)` says a stream's token size,
// or 0 when the stream does not come to this node (refused, named). Nothing
// is delivered from a malformed body.
Status decode_tokens(std::span<const std::byte> body, const std::function<std::size_t(std::uint32_t)>& token_bytes,
                     const std::function<void(std::uint32_t, bool, std::span<const std::byte>, std::size_t)>& entry);

}  // namespace redflow::stream
