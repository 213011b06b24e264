// The actors only the differential tester uses, on top of the built-ins and
// the application actors:
//   dt.mix      any number of inputs of any sizes (0 bytes included), any
//               output size: out[i] = salt + sum_k (k + 1) * in_k[i mod |in_k|]
//               over bytes (wrapping). Sensitive to every input byte and to
//               port order, so a wrong or stale input shows in the output.
//   dt.fail_if  input 0 is the 4-byte graph input FAIL; if its first byte is
//               not 0 the actor calls ctx.fail(), otherwise it is dt.mix of
//               its other inputs. Lets a case alternate failing and clean
//               executions of one loaded graph.
// Both are pure, allocate nothing on success and write their whole output.
// The file is also built as a plugin (redflow_difftest_actors.so) so that a
// reproducer's graph runs with `redflow run --lib`.
#pragma once

#include "redflow/registry.hpp"

namespace redflow::difftest {

inline constexpr const char* kFailInput = "FAIL";  // the graph input dt.fail_if reads on port 0

void register_difftest_actors(Registry& reg);

}  // namespace redflow::difftest
