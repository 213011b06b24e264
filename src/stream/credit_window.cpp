// The credit windows of the streams between nodes (credit_window.hpp).
#include "stream/credit_window.hpp"

#include <algorithm>
#include <cstddef>

namespace redflow::stream {

std::vector<std::uint64_t> credit_windows(const Program& p, const std::vector<std::uint32_t>& node_of, std::uint64_t buffer_bytes) {
  const auto& streams = p.streams();
  std::vector<std::uint64_t> window(streams.size(), 0);
  if (buffer_bytes == 0) return window;
  for (std::size_t k = 0; k < streams.size(); ++k) {
    const auto& st = streams[k];
    if (st.from >= node_of.size() || st.to >= node_of.size() || node_of[st.from] == node_of[st.to]) continue;
    window[k] = std::max<std::uint64_t>(1, buffer_bytes / std::max<std::uint64_t>(1, st.token_bytes));
  }
  return window;
}

}  // namespace redflow::stream
