// Where a worker listens for other workers, and how it dials them (peer_socket.hpp).
#include "net/peer_socket.hpp"

#include "net/sockets.hpp"

namespace redflow::net {

Result<std::unique_ptr<PeerSocket>> PeerSocket::open(zmq::context_t& context, const std::string& driver_endpoint, const SecurityOptions& security) {
  std::unique_ptr<PeerSocket> p(new PeerSocket(context));
  p->security_ = security;
  const bool keyed = !security.key_file.empty();
  if (!keyed && endpoint_host(driver_endpoint).rfind("127.", 0) != 0) return p;
  const std::string bind = keyed ? "tcp://0.0.0.0:*" : "tcp://127.0.0.1:*";
  if (keyed) {
    auto pair = read_secret_key_file(security.key_file);
    if (!pair.ok()) return pair.status();
    p->key_pair_ = *pair;
    p->zap_ = std::make_unique<ZapAuthenticator>(context);
    // Until WELCOME lists the driver's workers, only this worker's own key gets in (an empty list is refused).
    REDFLOW_RETURN_IF_ERROR(p->zap_->start({AuthorizedKey{p->key_pair_.public_key, "self", 0}}, "this worker's key"));
  }
  auto router = make_peer_router(context, bind, p->key_pair_, p->zap_.get());
  if (!router.ok()) return router.status();
  p->router_ = std::move(router->first);
  const std::string& bound = router->second;
  p->port_ = static_cast<std::uint32_t>(std::stoul(bound.substr(bound.rfind(':') + 1)));
  return p;
}

Status PeerSocket::admit(const std::vector<std::string>& keys) {
  if (!zap_ || keys.empty()) return Status::Ok();
  std::vector<AuthorizedKey> list;
  for (const std::string& k : keys) list.push_back(AuthorizedKey{k, "peer " + key_prefix(k), 0});
  return zap_->start(list, "the driver's authorized keys");
}

Result<zmq::socket_t> PeerSocket::dial(const std::string& endpoint, const std::string& public_key, bool immediate, LinkWatch* watch) const {
  SecurityOptions client;
  if (!public_key.empty()) {
    client.key_file = security_.key_file;
    client.server_public_key = public_key;
  }
  return make_worker_dealer(context_, endpoint, client, watch, immediate);
}

std::string peer_endpoint(const std::string& address, std::uint32_t port) {
  if (address.empty() || port == 0) return {};
  return "tcp://" + (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace redflow::net
