// The stream node role of a worker process (`redflow worker`, worker_session.hpp):
// WELCOMEd as a node by a stream driver (`redflow stream --listen`; its HELLO
// listed the operators it has), it is given its part of the program (SETUP), and
// runs it with a local Runner (runner.hpp) while its main thread is the
// process's one I/O thread (SCORE, "SCORE on Millennium" section 3): it sends
// the tokens its operators write to streams bound for other nodes, aggregated
// per node into one message (unless told not to), straight to each node's
// link socket (node_links.hpp) or through the driver for a node without one,
// fills the inboxes of streams that come here, and keeps the heartbeat.
//
// It ends on the driver's BYE: Ok when its part finished and DONE was sent;
// an error when the run ended before (another node failed or was lost), when
// REFUSED, when its part could not be built, or when the driver went silent.
#pragma once

#include <memory>
#include <string>

#include "net/security.hpp"
#include "net/worker_session.hpp"
#include "redflow/status.hpp"
#include "redflow/stream.hpp"

namespace redflow::stream {

struct StreamWorkerOptions {
  std::string connect;              // the driver's endpoint
  std::string name;                 // empty: host:pid
  unsigned threads = 0;             // the pool's threads (0: one per hardware thread)
  double connect_timeout_s = 30;    // for the WELCOME
  net::SecurityOptions security{};  // its key pair and the driver's public key (none: plain text)
};

// The node role, for a WorkerSession; `registry` outlives it. `threads`: the
// pool's threads (0: one per hardware thread).
std::unique_ptr<net::WorkerRole> make_node_role(const OperatorRegistry& registry, unsigned threads);

// A session that offers only the node role, for one driver (a rank of
// `mpirun redflow stream`).
Status run_stream_worker(const StreamWorkerOptions& options, const OperatorRegistry& registry);

}  // namespace redflow::stream
