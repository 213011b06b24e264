// RefusalLog: which refusals from one peer are worth a log line. A peer that
// keeps sending what is refused (a stranger that reconnects every 100 ms, a
// flood of malformed messages, a man in the middle) must not fill the log: its
// first refusal is logged in full, then one line with the count at the 10th,
// the 100th and every 1000th, and what was counted but not logged is summed
// up once at the end (unlogged()): a bounded number of lines, and the count
// stays exact.
//
//   RefusalLog log;
//   if (const std::uint64_t n = log.refuse(peer)) spdlog::warn("refused ... from {}: {}{}", peer, why, RefusalLog::times(n));
//   ...
//   for (const auto& [peer, n] : log.unlogged()) spdlog::warn("refused {} message(s) from {} in all", n, peer);
//
// Thread-safety: none; its owner's thread or lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redflow::net {

class RefusalLog {
 public:
  // Counts one refusal from `peer` (an address or a worker's name); returns
  // the peer's count when this one is to be logged, 0 when only counted.
  std::uint64_t refuse(const std::string& peer);
  // " (10 times)" for a count above 1, "" for the first: the tail of a line.
  static std::string times(std::uint64_t n);
  // Peers whose latest refusals were counted but not logged, with their
  // totals; each is then taken as logged. For a summary at the end.
  std::vector<std::pair<std::string, std::uint64_t>> unlogged();
  // The total from `peer` so far (0 if none).
  std::uint64_t count(const std::string& peer) const;

 private:
  // Peers kept at most: past it, peers with nothing unlogged are forgotten.
  static constexpr std::size_t kMaxPeers = 4096;
  struct Count {
    std::uint64_t total = 0;
    std::uint64_t logged = 0;  // the total when it was last logged
  };
  std::map<std::string, Count> peers_;
};

}  // namespace redflow::net
