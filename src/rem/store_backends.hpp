// Constructors of the networked store backends (memcached, Redis), called by
// open_store() after it has parsed the endpoints.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "redflow/rem.hpp"

namespace redflow::rem {

struct Endpoint {
  std::string host;
  int port;
};

Result<std::unique_ptr<Store>> make_memcached_store(const std::vector<Endpoint>& servers);
Result<std::unique_ptr<Store>> make_redis_store(const Endpoint& server);

}  // namespace redflow::rem
