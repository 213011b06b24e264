// The ZAP handler (zap_authenticator.hpp): request and reply frames per
// ZeroMQ RFC 27 (version, request id, domain, address, routing id,
// mechanism, credentials; reply version, request id, status, text, user id,
// metadata).
#include "net/zap_authenticator.hpp"

#include <spdlog/spdlog.h>
#include <fmt/format.h>

#include <array>

namespace redflow::net {

namespace {
constexpr std::size_t kKeptRefusals = 64;
}

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context)
    : context_(context), stop_endpoint_(fmt::format("inproc://redflow.zap.stop.{}", static_cast<const void*>(this))) {}

ZapAuthenticator::~ZapAuthenticator() {
  if (!thread_.joinable()) return;
  try {
    zmq::socket_t stop(context_, zmq::socket_type::pair);
    stop.connect(stop_endpoint_);
    stop.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    spdlog::error("ZAP authenticator: cannot signal its thread to stop: {}", e.what());
  }
  thread_.join();
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
    zmq::socket_t stop(context_, zmq::socket_type::pair);
    stop.bind(stop_endpoint_);
    thread_ = std::thread(&ZapAuthenticator::serve, this, std::move(handler), std::move(stop));
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
      spdlog::info("accepted worker '{}' (key {}) from {}", it->second, key_prefix(key), address);
      return {"200", it->second};
    }
  ++refused_;
  const std::string prefix = key.empty() ? "(none)" : key_prefix(key);
  spdlog::warn("refused a {} peer from {}: key {} is not in authorized keys {}", mechanism, address, prefix, source_);
  if (refusals_.size() == kKeptRefusals) refusals_.erase(refusals_.begin());
  refusals_.push_back({mechanism, prefix, address});
  return {"400", ""};
}

void ZapAuthenticator::serve(zmq::socket_t handler, zmq::socket_t stop) {
  std::array<zmq::pollitem_t, 2> items{{{handler.handle(), 0, ZMQ_POLLIN, 0}, {stop.handle(), 0, ZMQ_POLLIN, 0}}};
  try {
    for (;;) {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
      if (items[1].revents & ZMQ_POLLIN) return;
      if (!(items[0].revents & ZMQ_POLLIN)) continue;
      std::vector<std::string> frames;
      do {
        zmq::message_t m;
        if (!handler.recv(m, zmq::recv_flags::none)) break;
        frames.push_back(m.to_string());
      } while (handler.get(zmq::sockopt::rcvmore));
      // A request libzmq itself sends always has 7 frames or more (PLAIN: 8).
      std::pair<std::string, std::string> answer{"500", ""};
      if (frames.size() >= 6 && frames[0] == "1.0")
        answer = decide(frames[5], frames.size() > 6 ? frames[6] : std::string(), frames[3]);
      const std::string request_id = frames.size() > 1 ? frames[1] : std::string();
      const std::string text = answer.first == "200" ? "OK" : "key not authorized";
      handler.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
      handler.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
      handler.send(zmq::buffer(answer.first), zmq::send_flags::sndmore);
      handler.send(zmq::buffer(text), zmq::send_flags::sndmore);
      handler.send(zmq::buffer(answer.second), zmq::send_flags::sndmore);
      handler.send(zmq::message_t(), zmq::send_flags::none);
    }
  } catch (const zmq::error_t& e) {
    // ETERM: the context is closing under us, the normal end when the owner forgot to stop first.
    if (e.num() != ETERM) spdlog::error("ZAP authenticator stopped: {}", e.what());
  }
}

}  // namespace redflow::net
