// Unknown-attribute checks and syntax-error hints for the DOT reader
// (dot.cpp): a misspelt attribute must be refused, not silently kept.
#include "graph/dot_attributes.hpp"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "graph/suggest.hpp"

namespace redflow {
namespace {

// Graphviz's node attributes (graphviz.org/doc/info/attrs.html, "N" column):
// a redflow graph may be drawn with `dot`, so these stay allowed and are kept.
constexpr std::string_view kGraphvizNodeAttrs[] = {
    "area",      "class",       "color",      "colorscheme", "comment",  "distortion", "fillcolor", "fixedsize", "fontcolor",
    "fontname",  "fontsize",    "gradientangle", "group",    "height",   "href",       "id",        "image",     "imagepos",
    "imagescale", "label",      "labelloc",   "layer",       "margin",   "nojustify",  "ordering",  "orientation", "penwidth",
    "peripheries", "pin",       "pos",        "rects",       "regular",  "root",       "samplepoints", "shape",  "shapefile",
    "showboxes", "sides",       "skew",       "sortv",       "style",    "target",     "tooltip",   "URL",       "vertices",
    "width",     "xlabel",      "xlp",        "z"};

// Written by the redundancy transformation (`redflow graph --redundancy ...
// --emit dot`), so its output reads back.
constexpr std::string_view kTransformAttrs[] = {"replica_of", "replica", "compare_of"};

// Words newcomers use for redflow's attributes, which edit distance misses
// (`size` is nearer to `file` than to `bytes`).
constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
    {"size", "bytes"},     {"length", "bytes"}, {"nbytes", "bytes"},  {"len", "bytes"},   {"cost", "work"},
    {"ops", "work"},       {"function", "actor"}, {"func", "actor"},  {"fn", "actor"},    {"path", "file"},
    {"argument", "args"},  {"arguments", "args"}, {"params", "args"}, {"dtype", "type"},  {"elem", "type"}};

bool contains(std::span<const std::string_view> set, std::string_view name) {
  for (std::string_view s : set)
    if (s == name) return true;
  return false;
}

}  // namespace

Status check_node_attributes(std::string_view where, std::string_view node, const std::map<std::string, std::string>& extra,
                             std::span<const std::string_view> own) {
  for (const auto& [key, value] : extra) {
    if (contains(kGraphvizNodeAttrs, key) || contains(kTransformAttrs, key)) continue;
    // Prefer redflow's own attributes: `arg` is a typo of `args`, not of Graphviz's `area`.
    std::string best;
    for (const auto& [word, meant] : kSynonyms)
      if (word == key && contains(own, meant)) best = std::string(meant);
    std::vector<std::string> mine(own.begin(), own.end());
    if (best.empty()) best = nearest_name(key, mine);
    if (best.empty()) best = nearest_name(key, std::vector<std::string>(std::begin(kGraphvizNodeAttrs), std::end(kGraphvizNodeAttrs)));
    std::string known;
    for (std::string_view k : own) known += (known.empty() ? "" : ", ") + std::string(k);
    return Status::InvalidGraph(fmt::format("{}node '{}': unknown attribute {}=\"{}\"{}; this node takes {} and Graphviz's own "
                                            "attributes (label, shape, color, ...; docs/dot.md)",
                                            where, node, key, value, best.empty() ? "" : fmt::format(" (did you mean {}=?)", best),
                                            known));
  }
  return Status::Ok();
}

Status read_element_type(std::string_view where, DataNode& node, const std::string& text) {
  if (text.empty()) return Status::Ok();
  std::optional<ElementType> type = parse_element_type(text);
  if (!type)
    return Status::InvalidGraph(fmt::format("{}node '{}': type={} is not one of i8, u8, i16, u16, i32, u32, i64, u64, f32, f64", where,
                                            node.name, text));
  node.type = *type;
  return Status::Ok();  // the size check is validate_structure()'s, for C++ graphs too
}

std::string dot_syntax_hint(std::string_view cgraph_messages) {
  for (char c : {'.', '-', '/', ':'}) {
    if (cgraph_messages.find(fmt::format("near '{}'", c)) != std::string_view::npos)
      return " (values with '.', '-', '/' or ':' must be quoted: actor=\"i32.sort\", file=\"data/b.bin\")";
  }
  return "";
}

}  // namespace redflow
