// Checks on the attributes of a DOT file that the cgraph parse itself cannot
// make: attributes neither redflow nor Graphviz knows (a misspelt `arg=` for
// `args=`), and hints for syntax errors newcomers make (unquoted actor=i32.sort).
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "redflow/graph.hpp"
#include "redflow/status.hpp"

namespace redflow {

// Refuses the first attribute in `extra` (the node's attributes redflow does
// not interpret) that is not one of Graphviz's node attributes (label, shape,
// color, ...) nor one the redundancy transformation writes, naming the node
// and the nearest attribute of `own` (the node's redflow attributes) or of
// Graphviz's: "node 'triple': unknown attribute arg= (did you mean args=?)".
Status check_node_attributes(std::string_view where, std::string_view node, const std::map<std::string, std::string>& extra,
                             std::span<const std::string_view> own);

// Sets node.type from a DOT `type=` value ("" leaves it kNone); refuses an
// unknown type or a size that is not a whole number of elements, naming the node.
Status read_element_type(std::string_view where, DataNode& node, const std::string& text);

// A hint to append to cgraph's syntax errors, or "": a syntax error near a
// '.', '-', '/' or ':' is usually an unquoted value such as actor=i32.sort.
std::string dot_syntax_hint(std::string_view cgraph_messages);

}  // namespace redflow
