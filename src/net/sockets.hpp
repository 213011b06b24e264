// Every ZeroMQ socket of the driver/worker link is made here, in one place,
// so that its options (linger, high-water marks, the largest message
// accepted) are the same everywhere, and so that security (CURVE keys and the
// ZAP authenticator, src/net/security*, issue 11) plugs in at one spot.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <string>

#include "net/security.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

// The driver's tile server socket: a ROUTER bound at `endpoint`
// ("tcp://127.0.0.1:*" picks a free port). `bound` is the endpoint it got
// (ZMQ_LAST_ENDPOINT), the one workers connect to. A non-loopback endpoint
// needs keys (check_listen_address); with keys the socket is a CURVE server
// whose peers `zap` (on the same context, outliving the socket) lets in.
Result<zmq::socket_t> make_driver_router(zmq::context_t& context, const std::string& endpoint, std::string& bound,
                                         const SecurityOptions& security, ZapAuthenticator& zap);

// A worker's socket: a DEALER connected to the driver's `endpoint`, a CURVE
// client when `security` names keys.
Result<zmq::socket_t> make_worker_dealer(zmq::context_t& context, const std::string& endpoint, const SecurityOptions& security);

// A socket that sends one multipart message: `parts` in order.
bool send_parts(zmq::socket_t& socket, std::initializer_list<zmq::const_buffer> parts);

}  // namespace redflow::net
