// Misspelt DOT attributes are refused with a "did you mean", Graphviz's own
// attributes stay allowed, and an unquoted dotted value gets a quoting hint.
#include <gtest/gtest.h>

#include "redflow/graph.hpp"

namespace {

redflow::Status parse(const std::string& text) { return redflow::Graph::from_dot_string(text).status(); }

TEST(DotAttributes, MisspeltActorAttributeIsRefusedWithASuggestion) {
  auto s = parse(R"(digraph g { X [kind=input, bytes=16]; Y [kind=output, bytes=16];
    triple [actor="i32.add", arg="k=3"]; X -> triple [port=0]; X -> triple [port=1]; triple -> Y; })");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 'triple': unknown attribute arg=\"k=3\" (did you mean args=?)"), std::string::npos) << s.ToString();
}

TEST(DotAttributes, MisspeltDataAttributeIsRefusedWithASuggestion) {
  auto s = parse(R"(digraph g { X [kind=input, bytes=16, size=8]; Y [kind=output, bytes=16];
    a [actor="i32.add"]; X -> a [port=0]; X -> a [port=1]; a -> Y; })");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 'X': unknown attribute size=\"8\" (did you mean bytes=?)"), std::string::npos) << s.ToString();
  s = parse(R"(digraph g { X [kind=input, bytes=16]; Y [kind=output, bytes=16];
    a [actor="i32.add", wrok=5]; X -> a [port=0]; X -> a [port=1]; a -> Y; })");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("(did you mean work=?)"), std::string::npos) << s.ToString();
}

TEST(DotAttributes, GraphvizAttributesStayAllowed) {
  auto g = redflow::Graph::from_dot_string(R"(digraph g { X [kind=input, bytes=16, label="x", shape=box, color=blue];
    Y [kind=output, bytes=16, style=filled]; a [actor="i32.add", tooltip="sum", fillcolor=red];
    X -> a [port=0]; X -> a [port=1]; a -> Y; })");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->data(0).extra.at("shape"), "box");
}

TEST(DotAttributes, UnquotedDottedValueGetsAQuotingHint) {
  auto s = parse("digraph g {\n X [kind=input, bytes=16];\n Y [kind=output, bytes=16];\n a [actor=i32.sort];\n X -> a [port=0];\n a -> Y;\n}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("must be quoted: actor=\"i32.sort\""), std::string::npos) << s.ToString();
}

}  // namespace
