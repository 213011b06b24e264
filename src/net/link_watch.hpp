// LinkWatch: what became of a worker's connection to its driver, for the
// error of a worker that got no WELCOME. A driver with keys refuses a worker
// without one (or with an unlisted key) inside ZeroMQ's handshake, without a
// word to it; this reads the socket's monitor, so the error can say which it
// was: nothing accepted the connection, the handshake failed on keys (none
// here but some there, or the reverse), the driver refused this worker's key,
// or the handshake succeeded and no WELCOME came.
//
//   LinkWatch watch;
//   auto dealer = make_worker_dealer(context, connect, security, &watch);  // attached before connect
//   ... watch.poll(); ...   // now and then while waiting for the WELCOME
//   return no_welcome(connect, timeout_s, watch.explain(keyed));
//
// Thread-safety: none; the worker's main thread only (the socket's).
#pragma once

#include <zmq.hpp>

#include <memory>
#include <string>

namespace redflow::net {

class LinkWatch {
 public:
  // Starts watching `socket` (call before it connects: the first
  // handshake's events come at once). A failure leaves the watch blind; it
  // then explains nothing.
  void attach(zmq::context_t& context, zmq::socket_t& socket);
  // Stops the socket's monitor; call before the socket closes when its
  // context lives on (a persistent worker's next session): a monitor whose
  // reader is gone blocks the context's I/O thread on its next event.
  void detach();
  // Reads the events come so far, without blocking.
  void poll();
  // A connection whose handshake had succeeded dropped: what was sent over
  // it and not yet answered may be lost (a HELLO to a driver going away).
  bool dropped() {
    poll();
    return dropped_;
  }
  // Nothing has accepted a connection at the address yet, and ZeroMQ has
  // tried again at least once (connection refused): the worker says so at
  // once rather than at the end of its --connect-timeout.
  bool nothing_answers() {
    poll();
    return retried_ && !connected_;
  }
  // A handshake failed (keys, or the peer's authenticator refused this
  // one): ZeroMQ does not try that connection again.
  bool refused() {
    poll();
    return failed_protocol_ || failed_auth_;
  }
  // Why no WELCOME came, as far as the events tell: " (...)" to end the error
  // with, or "" when they tell nothing. `keyed`: this worker has a key.
  std::string explain(bool keyed);

 private:
  std::unique_ptr<zmq::socket_t> monitor_;  // PAIR connected to the socket's monitor
  void* socket_ = nullptr;                  // the socket watched, until detach()
  bool connected_ = false;
  bool retried_ = false;  // a connection attempt failed and is being made again
  bool succeeded_ = false;
  bool failed_protocol_ = false;  // the mechanisms differ, or the server key is not the driver's
  bool failed_auth_ = false;      // the driver's authenticator refused this key
  bool up_ = false;               // a handshake succeeded, and the connection has not dropped since
  bool dropped_ = false;
};

}  // namespace redflow::net
