// Signals and ZeroMQ (src/net/sockets.hpp, retry_on_signal). A process that
// handles a signal (a Task Manager leaving on SIGTERM, the server stopping
// on SIGINT) sees ZeroMQ fail a send or a receive with EINTR whenever the
// signal lands while ZeroMQ looks at its command mailbox, even when the call
// does not wait. Such a call must be made again: a Task Manager died of the
// exception in the middle of leaving, with its tasks counted as failures.
// Here a thread signals the main thread as fast as it can while the main
// thread sends and receives a few thousand messages through the helpers
// every peer uses: nothing may be thrown, and every message arrives once,
// in order.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "net/envelope.hpp"
#include "net/sockets.hpp"

namespace redflow::net {
namespace {

std::atomic<std::uint64_t> signals_handled{0};
void count_signal(int) { signals_handled.fetch_add(1, std::memory_order_relaxed); }

// Installs the counting handler for SIGUSR1 without SA_RESTART (as a plain
// sigaction does) and puts the old one back at the end.
class CountingHandler {
 public:
  CountingHandler() {
    struct sigaction action {};
    action.sa_handler = count_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGUSR1, &action, &old_);
  }
  ~CountingHandler() { ::sigaction(SIGUSR1, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

// Sends numbered REPLY envelopes from the dealer and receives them at the
// router, mostly polling an empty socket (that is where ZeroMQ checks its
// mailbox on every call), until at least kMessages went across and
// kSignals signals were handled meanwhile.
struct Exchange {
  static constexpr std::uint64_t kMessages = 2000, kSignals = 10000;
  std::uint64_t sent = 0, received = 0, out_of_order = 0, empty_polls = 0, unreadable = 0;

  void run(zmq::socket_t& dealer, zmq::socket_t& router) {
    std::vector<zmq::message_t> parts;
    std::vector<std::byte> body(sizeof(std::uint64_t));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((received < kMessages || signals_handled.load() < kSignals || received < sent) && std::chrono::steady_clock::now() < deadline) {
      if (sent == received && (sent < kMessages || signals_handled.load() < kSignals)) {
        std::memcpy(body.data(), &sent, sizeof sent);
        if (send_envelope(dealer, EnvelopeKind::kReply, sent, body)) ++sent;
      }
      for (int i = 0; i < 16; ++i) {
        if (!receive_message(router, parts)) {
          ++empty_polls;
          continue;
        }
        Envelope e;
        wire::Error error;
        const auto spans = part_spans(parts, 1);
        std::uint64_t in_body = 0;
        if (parts.size() != 3 || !decode_envelope(spans, e, error).ok() || e.body.size() != sizeof in_body) {
          ++unreadable;
          continue;
        }
        std::memcpy(&in_body, e.body.data(), sizeof in_body);
        if (e.request != received || in_body != received) ++out_of_order;
        ++received;
      }
    }
  }
};

TEST(NetSignals, NoSendOrReceiveIsLostOrThrownWhenSignalsLandMeanwhile) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router), dealer(context, zmq::socket_type::dealer);
  router.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::routing_id, "dealer");
  router.bind("inproc://signals");
  dealer.connect("inproc://signals");

  const CountingHandler handler;
  signals_handled = 0;
  std::atomic<bool> stop{false};
  const pthread_t main_thread = pthread_self();
  std::thread signaller([&] {
    while (!stop.load()) {
      pthread_kill(main_thread, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(5));  // leave the main thread time to work
    }
  });

  Exchange x;
  EXPECT_NO_THROW(x.run(dealer, router)) << "a signal's EINTR escaped a send or a receive";
  stop = true;
  signaller.join();
  EXPECT_GE(x.sent, Exchange::kMessages) << "sends failed under signals";
  EXPECT_EQ(x.received, x.sent) << "messages were lost under signals";
  EXPECT_EQ(x.out_of_order, 0u);
  EXPECT_EQ(x.unreadable, 0u) << "a message arrived in pieces";
  // The test means something only if signals really landed among the calls.
  EXPECT_GE(signals_handled.load(), Exchange::kSignals);
  EXPECT_GT(x.empty_polls, 1000u);
}

}  // namespace
}  // namespace redflow::net
