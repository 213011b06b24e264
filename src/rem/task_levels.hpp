// The levels of a REM program's partial order, shared by coalescing and by
// the automatic choice of how much to coalesce.
#pragma once

#include <cstdint>
#include <vector>

#include "redflow/rem.hpp"

namespace redflow::rem {

// Level of each task (longest path from a source task), by TaskId. Only
// for a validated program.
std::vector<std::uint32_t> task_levels(const Program& program);

}  // namespace redflow::rem
