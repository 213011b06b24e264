// One way to read DOT text with Graphviz's cgraph, for every DOT form redflow
// has (graphs: dot.cpp; stream programs: src/stream/program.cpp): the input
// checks of dot_input.hpp, cgraph's process-wide lock and error capture, and
// the same "cannot parse DOT: ..." message with its hints.
#pragma once

#include <graphviz/cgraph.h>

#include <functional>
#include <string>

#include "redflow/status.hpp"

namespace redflow {

// Parses `text` (named `input_name` in messages) and calls `read` with the
// graph while it is alive and the lock is held.
Status with_cgraph(const std::string& text, const std::string& input_name, const std::function<Status(Agraph_t*)>& read);

// An attribute's value on a node, edge or graph; "" when unset.
std::string cgraph_attr(void* obj, const char* name);

}  // namespace redflow
