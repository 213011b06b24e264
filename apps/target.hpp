// Target: the machine an application graph is cut for. The paper's rule
// (section 6.1) is that every data node a compute tile touches fits one slot,
// and that the graph has enough parallel actors for the tiles; generators
// choose their block sizes from this.
#pragma once

#include <cstddef>

namespace redflow::apps {

struct Target {
  std::size_t slot_bytes = std::size_t{8} << 20;  // RuntimeOptions::slot_bytes
  unsigned slots = 16;                            // RuntimeOptions::slots
  unsigned tiles = 2;                             // compute tiles the graph should keep busy
};

}  // namespace redflow::apps
