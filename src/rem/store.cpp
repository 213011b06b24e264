// open_store(): a store from its spec string (`--store` of `redflow rem`).
#include <charconv>

#include "rem/store_backends.hpp"

namespace redflow::rem {

namespace {

Result<std::vector<Endpoint>> parse_endpoints(const std::string& spec, std::string_view list) {
  std::vector<Endpoint> out;
  while (!list.empty()) {
    std::string_view item = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), item.size() + 1));
    auto colon = item.rfind(':');
    int port = 0;
    if (colon == std::string_view::npos || colon == 0 ||
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), port).ec != std::errc{} || port <= 0 || port > 65535)
      return Status::InvalidArgument("--store " + spec + ": '" + std::string(item) + "' is not HOST:PORT with a port in 1..65535");
    out.push_back({std::string(item.substr(0, colon)), port});
  }
  if (out.empty()) return Status::InvalidArgument("--store " + spec + ": no HOST:PORT given");
  return out;
}

}  // namespace

Result<std::unique_ptr<Store>> open_store(const std::string& spec) {
  if (spec == "inproc") return make_inproc_store();
  constexpr std::string_view kMc = "memcached://", kRedis = "redis://";
  if (spec.starts_with(kMc)) {
    auto eps = parse_endpoints(spec, std::string_view(spec).substr(kMc.size()));
    if (!eps.ok()) return eps.status();
    return make_memcached_store(*eps);
  }
  if (spec.starts_with(kRedis)) {
    auto eps = parse_endpoints(spec, std::string_view(spec).substr(kRedis.size()));
    if (!eps.ok()) return eps.status();
    if (eps->size() != 1) return Status::InvalidArgument("--store " + spec + ": redis takes exactly one HOST:PORT");
    return make_redis_store(eps->front());
  }
  return Status::InvalidArgument("--store '" + spec + "': expected inproc, memcached://HOST:PORT[,HOST:PORT...] or redis://HOST:PORT");
}

}  // namespace redflow::rem
