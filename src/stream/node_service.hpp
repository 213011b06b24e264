// NodeService: the stream node as a service on the driver's peer hub
// (net/peer_hub.hpp). The hub owns each worker's session (admission,
// WELCOME, heartbeats, silence, BYE); this owns what a stream program does
// with its nodes: admission by the operators the program uses (a worker
// lacking one is refused with the reason, and the driver waits on for
// another), each node's SETUP once all came (with where each node's link
// socket listens: node_links.hpp), START once all are READY, the TOKENS,
// BARRIERs and CREDITs it relays for nodes that have no links, the collect
// operators' outputs that come as they gather (OUTPUT), the DONEs it
// gathers into a RunResult, and the error that ends the run (a node lost, failed or off the protocol).
// It has no socket and no clock: run_cluster() (stream_driver.cpp) is its
// effects, and a unit test drives it with a recording sender.
//
// Thread-safety: none; the driver's one thread (or the test's).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/peer_hub.hpp"
#include "redflow/stream.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {

class NodeService final : public net::PeerService {
 public:
  // `peer_keys`: with keys, the workers the driver lets in, whom each node's
  // link socket lets in too (WELCOME lists them).
  NodeService(const Program& program, const RunOptions& run, const ClusterOptions& options, std::vector<unsigned> node_of,
              std::vector<std::string> peer_keys = {});

  net::PeerHub& hub() { return hub_; }
  // The run's error (Ok while it goes on).
  const Status& error() const { return error_; }
  // Every node still in the run said DONE: finish() has the result.
  bool done() const { return started_ && waiting_ready_ == false && done_ == alive(); }
  bool started() const { return started_; }
  // The clock's turn: starts the next checkpoint when one is due.
  void tick(Time now);
  unsigned nodes_done() const { return done_; }
  // Bytes of tokens between nodes so far: relayed here, and sent straight
  // as the nodes' SENTs said.
  std::uint64_t relayed() const;
  // The streams between nodes, each with the tokens sent on it so far
  // (RunOptions::on_sample over worker processes; `queued` 0: the queues are
  // on the nodes).
  std::vector<StreamProfile> relayed_streams() const;
  // The error when fewer than `nodes` came within the wait, with what was refused.
  Status none_came(const std::string& endpoint) const;
  // What the nodes reported, gathered (once done()).
  RunResult finish();

 private:
  struct Node {
    bool alive = true, ready = false, done = false;
    bool resetting = false;  // sent a new incarnation's SETUP; its READY not yet back
    RunResult result;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::uint64_t most_waiting_bytes = 0;  // its DONE's
    std::uint64_t bytes_to_nodes = 0;      // its last SENT's
  };

  std::string who(std::size_t i) const;
  void fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
  }
  void send(std::size_t i, std::span<const std::byte> body);
  void on_reply(std::size_t i, std::span<const std::byte> body);
  unsigned alive() const;
  void send_setups();
  void on_ready(std::size_t i, std::span<const std::byte> body);
  void on_barriers(std::size_t i, std::span<const std::byte> body);
  void on_snapshot(std::size_t i, std::span<const std::byte> body);
  void on_credits(std::size_t i, std::span<const std::byte> body);
  void on_sent(std::size_t i, std::span<const std::byte> body);
  void on_output(std::size_t i, std::span<const std::byte> body);
  // Goes on without lost node `n` from the last whole checkpoint; false
  // when it cannot (the run then fails naming the node).
  bool recover(unsigned n, const std::string& why);

  // PeerService
  std::string admit(const net::HelloMessage& hello) override;
  void welcome(unsigned n, net::WelcomeMessage& welcome) override;
  void welcomed(unsigned n, Time now) override;
  bool message(unsigned n, const net::Envelope& e, Time now, zmq::message_t* body_part) override;
  void lost(unsigned n, const std::string& why, bool left) override;
  std::string describe(unsigned n, const net::HelloMessage& hello) const override;

  const Program& program_;
  const RunOptions& run_;
  const ClusterOptions& options_;
  std::vector<unsigned> node_of_;
  net::PeerHub hub_;
  std::vector<Node> nodes_;  // node i is the hub's peer i, in order of arrival
  unsigned ready_ = 0, done_ = 0;
  bool started_ = false, waiting_ready_ = false;
  std::uint64_t relayed_ = 0;  // TOKENS bytes forwarded
  std::vector<std::uint64_t> relayed_tokens_;  // by stream: tokens forwarded
  // Checkpoints: whether they are taken, which operators cannot snapshot
  // (named at load and in a loss's error), the epoch asked last, and the
  // parts of it received (by operator; finished operators' final state
  // stands for every later epoch).
  bool checkpoints_ = false;
  std::string cannot_snapshot_;
  std::uint32_t epoch_ = 0, incarnation_ = 0, complete_epoch_ = 0, checkpoints_done_ = 0;
  bool in_flight_ = false;
  Time next_checkpoint_{};
  std::vector<std::optional<OperatorCheckpoint>> parts_, finals_;
  std::vector<std::optional<OperatorCheckpoint>> complete_;  // the last whole checkpoint (empty: none yet)
  // By operator: what each collect operator has gathered so far (OUTPUT);
  // after a lost node, what its restored state holds.
  std::vector<Bytes> gathered_;
  std::vector<std::string> peer_keys_;
  std::vector<NodeLoss> losses_;
  Time recovering_since_{};
  Time now_{};  // the time of the last message or tick
  Time start_{};
  Status error_;
};

}  // namespace redflow::stream
