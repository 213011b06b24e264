// RefusalLog (refusal_log.hpp): the 1st, 10th, 100th and every 1000th
// refusal from a peer are logged; the rest are counted.
#include "net/refusal_log.hpp"

namespace redflow::net {

std::uint64_t RefusalLog::refuse(const std::string& peer) {
  if (peers_.size() >= kMaxPeers && !peers_.contains(peer))
    for (auto it = peers_.begin(); it != peers_.end();) it = it->second.total == it->second.logged ? peers_.erase(it) : std::next(it);
  Count& c = peers_[peer];
  const std::uint64_t n = ++c.total;
  if (n != 1 && n != 10 && n != 100 && n % 1000 != 0) return 0;
  c.logged = n;
  return n;
}

std::string RefusalLog::times(std::uint64_t n) { return n <= 1 ? std::string() : " (" + std::to_string(n) + " times)"; }

std::vector<std::pair<std::string, std::uint64_t>> RefusalLog::unlogged() {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (auto& [peer, c] : peers_)
    if (c.total != c.logged) {
      out.emplace_back(peer, c.total);
      c.logged = c.total;
    }
  return out;
}

std::uint64_t RefusalLog::count(const std::string& peer) const {
  const auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.total;
}

}  // namespace redflow::net
