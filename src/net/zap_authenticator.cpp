// The ZAP handler (zap_authenticator.hpp): request and reply frames per
// ZeroMQ RFC 27 (version, request id, domain, address, routing id,
// mechanism, credentials; reply version, request id, status, text, user id,
// metadata).
#include "net/zap_authenticator.hpp"

#include <spdlog/spdlog.h>
#include <fmt/format.h>

#include <array>
#include <cstring>

#include "net/sockets.hpp"

namespace redflow::net {

namespace {
constexpr std::size_t kKeptRefusals = 64;
}

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context)
    : context_(context), control_endpoint_(fmt::format("inproc://redflow.zap.control.{}", static_cast<const void*>(this))) {}

ZapAuthenticator::~ZapAuthenticator() {
  if (!thread_.joinable()) return;
  try {
    zmq::socket_t control(context_, zmq::socket_type::push);
    control.connect(control_endpoint_);
    control.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    spdlog::error("ZAP authenticator: cannot signal its thread to stop: {}", e.what());
  }
  thread_.join();
  std::lock_guard lock(mu_);
  for (const auto& [peer, n] : refusal_log_.unlogged()) spdlog::warn("refused {} in all: {} time(s)", peer, n);
}

Status ZapAuthenticator::start(const std::vector<AuthorizedKey>& keys, const std::string& source) {
  if (keys.empty())
    return Status::InvalidArgument(fmt::format("authorized keys {}: no key listed, so no worker could connect", source));
  {
    std::lock_guard lock(mu_);
    names_.clear();
    for (const auto& k : keys) names_[k.public_key] = k.name;
    source_ = source;
  }
  if (thread_.joinable()) return Status::Ok();
  try {
    zmq::socket_t handler(context_, zmq::socket_type::rep);
    handler.bind("inproc://zeromq.zap.01");
    zmq::socket_t control(context_, zmq::socket_type::pull);
    control.bind(control_endpoint_);
    // spdlog makes its registry on first use; make it here, before the thread
    // that logs starts, so that the start orders the two (ThreadSanitizer
    // cannot see the guard inside the uninstrumented libspdlog).
    spdlog::default_logger_raw();
    thread_ = std::thread(&ZapAuthenticator::serve, this, std::move(handler), std::move(control));
  } catch (const zmq::error_t& e) {
    return Status::Internal(fmt::format("ZAP authenticator: cannot bind inproc://zeromq.zap.01 ({}); one authenticator per context",
                                        e.what()));
  }
  return Status::Ok();
}

std::vector<ZapAuthenticator::Refusal> ZapAuthenticator::recent_refusals() const {
  std::lock_guard lock(mu_);
  return refusals_;
}

std::pair<std::string, std::string> ZapAuthenticator::decide(const std::string& mechanism, const std::string& credentials,
                                                             const std::string& address) {
  std::string key;
  if (mechanism == "CURVE" && credentials.size() == 32) {
    std::array<char, 41> z85{};
    zmq_z85_encode(z85.data(), reinterpret_cast<const std::uint8_t*>(credentials.data()), 32);
    key = z85.data();
  }
  std::lock_guard lock(mu_);
  if (!key.empty())
    if (auto it = names_.find(key); it != names_.end()) {
      ++accepted_;
      spdlog::debug("accepted worker '{}' (key {}) from {}", it->second, key_prefix(key), address);
      return {"200", it->second};
    }
  refuse({mechanism, key.empty() ? "(none)" : key_prefix(key), address});
  return {"400", ""};
}

void ZapAuthenticator::refuse(Refusal r) {
  // Called with mu_ held.
  ++refused_;
  // A refused peer reconnects every 100 ms or so: log its 1st, 10th, 100th... refusal, not each one.
  const bool handshake = r.mechanism == "handshake";
  const std::uint64_t n = refusal_log_.refuse(handshake ? "a peer on " + r.address + " (failed handshake)"
                                                        : "a " + r.mechanism + " peer from " + r.address + " with key " + r.key_prefix);
  const bool log = n != 0;
  const std::string times = RefusalLog::times(n);
  if (log && handshake)
    spdlog::warn("refused a peer on {}: its handshake failed (plain text, another mechanism, or a key without its secret half){}",
                 r.address, times);
  else if (log)
    spdlog::warn("refused a {} peer from {}: key {} is not in authorized keys {}{}", r.mechanism, r.address, r.key_prefix, source_, times);
  if (refusals_.size() == kKeptRefusals) refusals_.erase(refusals_.begin());
  refusals_.push_back(std::move(r));
}

std::vector<std::string> ZapAuthenticator::public_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> keys;
  for (const auto& [key, name] : names_) keys.push_back(key);
  return keys;
}

Status ZapAuthenticator::watch(zmq::socket_t& socket) {
  if (!running()) return Status::Internal("ZapAuthenticator::watch before start()");
  const std::string endpoint = fmt::format("inproc://redflow.zap.monitor.{}.{}", static_cast<const void*>(this), watched_++);
  // Failures before the ZAP question; ZAP's own refusals (HANDSHAKE_FAILED_AUTH) are counted in decide().
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0)
    return Status::Internal(fmt::format("cannot monitor the socket's handshakes: {}", zmq_strerror(zmq_errno())));
  try {
    zmq::socket_t control(context_, zmq::socket_type::push);
    control.connect(control_endpoint_);
    control.send(zmq::buffer("watch " + endpoint), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    return Status::Internal(fmt::format("cannot hand the socket monitor to the authenticator: {}", e.what()));
  }
  return Status::Ok();
}

void ZapAuthenticator::handshake_failed(const zmq::message_t& event, const std::string& endpoint) {
  if (event.size() < 2) return;
  std::uint16_t id = 0;
  std::memcpy(&id, event.data(), sizeof id);
  if (id != ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && id != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) return;
  std::lock_guard lock(mu_);
  refuse({"handshake", "(none)", endpoint});
}

void ZapAuthenticator::serve(zmq::socket_t handler, zmq::socket_t control) {
  std::vector<zmq::socket_t> monitors;  // PAIRs connected to the watched sockets' monitors
  try {
    for (;;) {
      std::vector<zmq::pollitem_t> items{{handler.handle(), 0, ZMQ_POLLIN, 0}, {control.handle(), 0, ZMQ_POLLIN, 0}};
      for (auto& m : monitors) items.push_back({m.handle(), 0, ZMQ_POLLIN, 0});
      retry_on_signal([&] { return zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1)); });
      if (items[1].revents & ZMQ_POLLIN) {
        zmq::message_t command;
        (void)retry_on_signal([&] { return control.recv(command); });
        const std::string text = command.to_string();
        if (text == "stop") return;
        if (text.rfind("watch ", 0) == 0) {
          monitors.emplace_back(context_, zmq::socket_type::pair);
          monitors.back().connect(text.substr(6));
        }
        continue;  // the poll list changed
      }
      for (std::size_t i = 2; i < items.size(); ++i) {
        if (!(items[i].revents & ZMQ_POLLIN)) continue;
        zmq::message_t event, address;
        (void)retry_on_signal([&] { return monitors[i - 2].recv(event); });
        if (monitors[i - 2].get(zmq::sockopt::rcvmore)) (void)retry_on_signal([&] { return monitors[i - 2].recv(address); });
        handshake_failed(event, address.to_string());
      }
      if (items[0].revents & ZMQ_POLLIN) answer(handler);
    }
  } catch (const zmq::error_t& e) {
    // ETERM: the context is closing under us, the normal end when the owner forgot to stop first.
    if (e.num() != ETERM) spdlog::error("ZAP authenticator stopped: {}", e.what());
  }
}

void ZapAuthenticator::answer(zmq::socket_t& handler) {
  std::vector<std::string> frames;
  do {
    zmq::message_t m;
    if (!retry_on_signal([&] { return handler.recv(m, zmq::recv_flags::none); })) break;
    frames.push_back(m.to_string());
  } while (handler.get(zmq::sockopt::rcvmore));
  // A request libzmq itself sends always has 7 frames or more (PLAIN: 8).
  std::pair<std::string, std::string> reply{"500", ""};
  if (frames.size() >= 6 && frames[0] == "1.0") reply = decide(frames[5], frames.size() > 6 ? frames[6] : std::string(), frames[3]);
  const std::string request_id = frames.size() > 1 ? frames[1] : std::string();
  const std::string text = reply.first == "200" ? "OK" : "key not authorized";
  send_parts(handler, {zmq::str_buffer("1.0"), zmq::buffer(request_id), zmq::buffer(reply.first), zmq::buffer(text),
                       zmq::buffer(reply.second), zmq::const_buffer()});
}

}  // namespace redflow::net
