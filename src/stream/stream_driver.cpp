// The driver of a stream program over worker processes (stream.hpp:
// run_cluster()). One ROUTER socket on this thread, which is the driver's one
// I/O thread: it welcomes `nodes` workers, places the program and sends each
// node its SETUP (with where every node's peer socket is, read from the
// address each HELLO came from, until the run starts), STARTs them all once
// every one is READY, forwards what nodes without direct links send each
// other, and gathers the DONEs.
//
// The session with each worker is the peer hub's (net/peer_hub.hpp), as for
// every model: HELLO admission (the role, then the operators the program
// uses: a worker lacking one is refused with the reason, and the driver
// waits on for another), WELCOME, heartbeats, silence, BYE. The stream node
// is a service on it (NodeService); serve() is its effects: the socket, the
// clock and the sends. A node lost (silent, gone, unreadable) ends the run
// with an error naming it and the operators it held, unless the run takes
// checkpoints: then it goes on from the last one on the other nodes. When it
// fails, the other workers are told that error in a REFUSED and end with it.
//
// Tokens cross nodes worker to worker over each node's link socket
// (node_links.hpp); the driver relays only for nodes without one, and with
// ClusterOptions::direct_links off (docs/streams.md).
#include <chrono>
#include <zmq.hpp>

#include "net/doorbell.hpp"
#include "net/router_sender.hpp"
#include "net/sockets.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/stream.hpp"
#include "stream/node_service.hpp"
#include "stream/profile.hpp"

namespace redflow::stream {

namespace {

using Clock = std::chrono::steady_clock;

// NodeService's effects: the socket, the clock, and the hub's sends.
Result<RunResult> serve(NodeService& nodes, const RunOptions& node_options, const ClusterOptions& options, zmq::socket_t& router,
                        const std::string& endpoint) {
  net::PeerHub& hub = nodes.hub();
  const auto joined_by = Clock::now() + std::chrono::duration<double>(options.cluster.wait_s);
  auto next_tick = Clock::now(), next_progress = Clock::now(), next_sample = Clock::now();
  net::RouterSender sender(router, /*dontwait=*/true);
  std::vector<zmq::message_t> parts;
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  Status error;
  while (error.ok() && nodes.error().ok()) {
    if (Status s = net::poll_for(std::span(&item, 1), next_tick - Clock::now()); !s.ok()) error = s;
    // Bounded, so sending is never starved by a flood.
    for (int i = 0; i < 256 && nodes.error().ok() && net::receive_message(router, parts, 4); ++i)
      if (!parts.empty()) hub.on_message(parts[0].to_string(), net::part_spans(parts, 1), nodes.started() || parts.size() < 2 ? std::string() : net::peer_address(parts[1]), Clock::now());
    const auto now = Clock::now();
    nodes.tick(now);  // first: a loss the hub finds now is dated now
    if (now >= next_tick) {
      hub.on_tick(now);
      next_tick = now + hub.interval();
    }
    hub.flush(sender);
    if (!nodes.error().ok()) break;
    if (nodes.done()) {
      RunResult r = nodes.finish();
      if (!nodes.error().ok()) break;  // an output that cannot be put together
      hub.leave();
      hub.flush(sender);
      return r;
    }
    if (options.on_progress && nodes.started() && now >= next_progress) {
      options.on_progress(nodes.nodes_done(), nodes.relayed());
      next_progress = now + std::chrono::milliseconds(100);
    }
    if (node_options.on_sample && nodes.started() && now >= next_sample) {
      node_options.on_sample(nodes.relayed_streams());
      next_sample = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kSamplePeriodS));
    }
    if (hub.size() < options.cluster.min_workers && now > joined_by) error = nodes.none_came(endpoint);
  }
  // The run failed: every worker still here is told why in a REFUSED, so it
  // ends with that error, not as after a finished run (the socket then
  // lingers so they hear it before it closes).
  const Status failed = nodes.error().ok() ? error : nodes.error();
  hub.end("the stream program failed: " + failed.ToString());
  hub.flush(sender);
  return failed;
}

}  // namespace

Result<RunResult> run_cluster(const Program& program, const RunOptions& node_options, const ClusterOptions& options) {
  REDFLOW_RETURN_IF_ERROR(program.validate());
  REDFLOW_RETURN_IF_ERROR(options.cluster.validate());
  if (options.cluster.min_workers == 0) return Status::InvalidArgument("run_cluster: cluster.min_workers (the nodes) must be at least 1");
  if (!(options.cluster.heartbeat_timeout_s >= 0.5)) return Status::InvalidArgument("run_cluster: a heartbeat timeout under 0.5 s would lose healthy workers");
  auto placed = place_program(program, options.cluster.min_workers, options.place, options.profile_json, "the profile", options.seed);
  if (!placed.ok()) return placed.status();
  net::SecurityOptions security;
  security.key_file = options.cluster.key_file;
  security.authorized_keys_file = options.cluster.authorized_keys_file;
  zmq::context_t context(1);
  net::ZapAuthenticator zap(context);
  std::string bound;
  auto router = net::make_driver_router(context, options.cluster.listen, bound, security, zap);
  if (!router.ok()) return router.status();
  if (options.cluster.on_listening) options.cluster.on_listening(bound);
  NodeService nodes(program, node_options, options, placed->placement.node_of, zap.running() ? zap.public_keys() : std::vector<std::string>{});
  auto result = serve(nodes, node_options, options, *router, bound);
  router->set(zmq::sockopt::linger, 500);
  return result;
}

}  // namespace redflow::stream
