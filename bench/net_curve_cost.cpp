// What CURVE costs on the wire (docs/security.md): a DEALER streams messages
// to a ROUTER over loopback TCP, plain and then CURVE-encrypted in the same
// run, for small messages (rate) and 8 MB ones (bandwidth, the size of the
// remote-tiles issue's data nodes). Prints one JSON line per size: both
// rates and the ratio curve/plain, so the figure is a ratio measured against
// a baseline of the same run, not a time.
//   net_curve_cost [--seconds 2]
#include <fmt/format.h>
#include <unistd.h>

#include <zmq.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "net/keys.hpp"
#include "net/security.hpp"
#include "net/zap_authenticator.hpp"

using namespace redflow::net;
using Clock = std::chrono::steady_clock;

namespace {

// Messages per second of `size` bytes from DEALER to ROUTER for about `seconds`.
double rate(std::size_t size, double seconds, bool curve, const std::string& dir) {
  zmq::context_t context;
  ZapAuthenticator zap(context);
  zmq::socket_t router(context, zmq::socket_type::router);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  router.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::linger, 0);
  if (curve) {
    SecurityOptions server{.key_file = dir + "/driver.key", .authorized_keys_file = dir + "/workers.keys"};
    SecurityOptions client{.key_file = dir + "/node.key", .server_public_key_file = dir + "/driver.pub"};
    if (!secure_server(router, server, zap).ok() || !secure_client(dealer, client).ok()) return -1;
  }
  router.bind("tcp://127.0.0.1:*");
  dealer.connect(router.get(zmq::sockopt::last_endpoint));
  const std::string payload(size, 'x');
  // Credit-based flow: the receiver answers every `window`-th message, so the sender never runs far ahead.
  const int window = size >= (1 << 20) ? 4 : 1000;
  std::thread receiver([&] {
    zmq::message_t id, body;
    for (long n = 1;; ++n) {
      (void)router.recv(id);
      (void)router.recv(body);
      if (body.size() == 0) return;
      if (n % window == 0) {
        router.send(id, zmq::send_flags::sndmore);
        router.send(zmq::str_buffer("k"), zmq::send_flags::none);
      }
    }
  });
  long sent = 0;
  Clock::time_point start;
  for (bool warm = true;; warm = false) {
    start = Clock::now();
    sent = 0;
    while (std::chrono::duration<double>(Clock::now() - start).count() < (warm ? 0.2 : seconds)) {
      for (int i = 0; i < window; ++i) dealer.send(zmq::buffer(payload), zmq::send_flags::none);
      sent += window;
      zmq::message_t ack;
      (void)dealer.recv(ack);
    }
    if (!warm) break;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  dealer.send(zmq::message_t(), zmq::send_flags::none);
  receiver.join();
  return static_cast<double>(sent) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
  const std::string dir = (std::filesystem::temp_directory_path() / fmt::format("redflow_curve_cost_{}", getpid())).string();
  std::filesystem::create_directories(dir);
  auto node = generate_key_pair();
  if (!write_key_pair(dir + "/driver", *generate_key_pair(), true).ok() || !write_key_pair(dir + "/node", *node, true).ok()) return 1;
  std::FILE* f = std::fopen((dir + "/workers.keys").c_str(), "w");
  std::fprintf(f, "%s node\n", node->public_key.c_str());
  std::fclose(f);
  for (std::size_t size : {std::size_t{64}, std::size_t{4096}, std::size_t{8} << 20}) {
    const double plain = rate(size, seconds, false, dir), curve = rate(size, seconds, true, dir);
    fmt::print("{{\"bytes\": {}, \"plain_msgs_per_s\": {:.0f}, \"curve_msgs_per_s\": {:.0f}, \"plain_MB_per_s\": {:.1f}, "
               "\"curve_MB_per_s\": {:.1f}, \"curve_over_plain\": {:.3f}}}\n",
               size, plain, curve, plain * size / 1e6, curve * size / 1e6, curve / plain);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
