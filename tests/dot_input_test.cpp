// The DOT reader against hostile input: redflow's limits (size, token
// length, nesting), text cgraph would silently drop (after the graph, after
// a NUL byte), and parses that must not disturb the next parse in the same
// process. Each case here was found by fuzzing (docs/testing.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "graph/dot_input.hpp"
#include "expect_status.hpp"
#include "redflow/graph.hpp"

namespace redflow {
namespace {

const std::string kValid = "digraph ok { a [kind=input, bytes=4]; }";

using testing::parse_status;

// A DOT text refused: kInvalidGraph, with a message naming every one of `parts`.
void expect_graph_error_naming(const Status& s, std::initializer_list<std::string> parts) {
  EXPECT_EQ(s.code(), Status::Code::kInvalidGraph) << s.ToString();
  testing::expect_error_naming(s, parts);
}

// The valid graph parses, with its name, right after `bad` was refused.
void expect_next_parse_clean(const std::string& bad) {
  SCOPED_TRACE("after parsing '" + bad + "'");
  EXPECT_FALSE(parse_status(bad).ok());
  Result<Graph> g = Graph::from_dot_string(kValid);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), "ok");
  EXPECT_EQ(g->data().size(), 1u);
}

TEST(DotInputTest, TextAfterTheGraphIsAnErrorNamingIt) {
  expect_graph_error_naming(parse_status("digraph a {} x"), {"after the graph's closing '}'", "'x'", "line 1"});
  expect_graph_error_naming(parse_status("digraph a {\n}\n\ndigraph b {}"), {"after the graph", "'digraph b {}'", "line 4"});
  // Comments and white space after the graph are fine.
  EXPECT_TRUE(parse_status(kValid + "  // done\n/* really */ # yes\n\n").ok());
}

TEST(DotInputTest, AFailedParseLeavesTheNextParseClean) {
  // Each of these once broke every later parse in the process (cgraph's
  // lexer kept the rest of the input, or stayed inside a string/comment).
  for (const std::string bad : {"digraph a {} x", "\"", "<", "/*", "digraph a { x [label=\"open] }",
                                "digraph a { x [label=<b>] } <", "digraph { a -> }", "digraph a {}\ndigraph b {}"}) {
    expect_next_parse_clean(bad);
  }
}

TEST(DotInputTest, AValidParseEndingInACommentLeavesTheNextParseClean) {
  // cgraph stops reading after the graph's '}' and keeps the rest in its
  // lexer: a trailing // comment then swallowed the next input.
  ASSERT_TRUE(parse_status(kValid + " // the end").ok());
  Result<Graph> g = Graph::from_dot_string("digraph next { b [kind=output, bytes=8]; }");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), "next");
}

TEST(DotInputTest, UnterminatedStringsAndCommentsNameTheirLine) {
  expect_graph_error_naming(parse_status("digraph a {\n x [label=\"open]\n}"), {"unterminated quoted string", "line 2"});
  expect_graph_error_naming(parse_status("digraph a {\n\n x [label=<b<i>>]; y [label=<open] }"),
                      {"unterminated <...> string", "line 3"});
  expect_graph_error_naming(parse_status("digraph a { x }\n/* never closed"), {"unterminated /* comment", "line 2"});
}

TEST(DotInputTest, ANulByteIsAnErrorNotTheEndOfTheInput) {
  // agmemread() stops at a NUL; the rest of the graph must not vanish silently.
  const char raw[] = "digraph a {\n x [kind=input, bytes=1]\0 y [kind=nonsense] }";
  const std::string text(raw, sizeof(raw) - 1);
  expect_graph_error_naming(parse_status(text), {"NUL byte", "line 2"});
}

TEST(DotInputTest, DeepNestingIsRefusedWithTheLimitNamed) {
  // About 3,330 levels made cgraph report "memory exhausted" and return the
  // part of the graph before the nesting: redflow printed "valid".
  std::string deep = "digraph a {\n";
  for (int i = 0; i < 3400; ++i) deep += "subgraph {";
  deep += " x [kind=input, bytes=1] ";
  for (int i = 0; i < 3400; ++i) deep += "}";
  deep += "\n y [kind=input, bytes=1] }";
  expect_graph_error_naming(parse_status(deep), {"nested more than", std::to_string(dot::kMaxDotNesting), "kMaxDotNesting"});
  // Up to the limit, nesting is fine and every node is read.
  std::string ok = "digraph a {";
  for (std::size_t i = 1; i < dot::kMaxDotNesting; ++i) ok += "{";
  ok += " x [kind=input, bytes=1] ";
  for (std::size_t i = 1; i < dot::kMaxDotNesting; ++i) ok += "}";
  ok += " y [kind=input, bytes=1] }";
  Result<Graph> g = Graph::from_dot_string(ok);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->data().size(), 2u);
}

TEST(DotInputTest, OversizedTokensAreRefusedBeforeParsing) {
  const std::string big(dot::kMaxDotTokenBytes + 1, 'a');
  expect_graph_error_naming(parse_status("digraph a { x [label=\"" + big + "\"] }"),
                      {"quoted string of", "kMaxDotTokenBytes", std::to_string(dot::kMaxDotTokenBytes)});
  expect_graph_error_naming(parse_status("digraph a {\n x [label=<" + big + ">] }"), {"HTML string", "line 2"});
  expect_graph_error_naming(parse_status("digraph a { x [label=" + big + "] }"), {"identifier of"});
  // "a" + "a" + ... is one token to cgraph, copied once per '+'.
  std::string chain = "digraph a { x [label=\"a\"";
  while (chain.size() < dot::kMaxDotTokenBytes + 100) chain += " +\n \"aaaa\"";
  expect_graph_error_naming(parse_status(chain + "] }"), {"quoted string of", "line 1"});
  // A token just under the limit is read whole.
  const std::string fits(dot::kMaxDotTokenBytes - 2, 'b');
  Result<Graph> g = Graph::from_dot_string("digraph a { x [kind=input, bytes=1, label=\"" + fits + "\"] }");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->data(0).extra.at("label"), fits);
}

TEST(DotInputTest, OversizedFilesAreRefusedBeforeReading) {
  const std::string path = ::testing::TempDir() + "/redflow_huge_" + std::to_string(::getpid()) + ".dot";
  { std::ofstream(path) << kValid; }
  std::filesystem::resize_file(path, dot::kMaxDotInputBytes + 1);  // sparse: nothing is written
  Status s = Graph::from_dot_file(path).status();
  std::filesystem::remove(path);
  expect_graph_error_naming(s, {path, std::to_string(dot::kMaxDotInputBytes + 1) + " bytes", "kMaxDotInputBytes"});
  expect_graph_error_naming(dot::check_dot_size(dot::kMaxDotInputBytes + 1, "<string>"), {"<string>", "kMaxDotInputBytes"});
  EXPECT_TRUE(dot::check_dot_size(dot::kMaxDotInputBytes, "<string>").ok());
}

}  // namespace
}  // namespace redflow
