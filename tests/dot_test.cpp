// Extended DOT: round trips between Graph and DOT text/files, and every error
// the reader reports, each naming the node at fault.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "expect_status.hpp"
#include "redflow/graph.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("redflow_dot_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

std::vector<std::byte> i32_bytes(std::initializer_list<std::int32_t> values) {
  std::vector<std::byte> out(values.size() * sizeof(std::int32_t));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

// Equal as far as DOT can say: names, kinds, sizes, files, contents,
// functions, args, work, ports, outputs and extra attributes.
void expect_same_graph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.data().size(), b.data().size());
  for (DataId d = 0; d < a.data().size(); ++d) {
    SCOPED_TRACE("data node " + a.data(d).name);
    const DataNode& x = a.data(d);
    const DataNode& y = b.data(d);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.file, y.file);
    EXPECT_EQ(x.contents, y.contents);
    EXPECT_EQ(x.producers, y.producers);
    ASSERT_EQ(x.consumers.size(), y.consumers.size());
    for (std::size_t i = 0; i < x.consumers.size(); ++i) {
      EXPECT_EQ(x.consumers[i].actor, y.consumers[i].actor);
      EXPECT_EQ(x.consumers[i].port, y.consumers[i].port);
    }
    EXPECT_EQ(x.extra, y.extra);
  }
  ASSERT_EQ(a.actors().size(), b.actors().size());
  for (ActorId i = 0; i < a.actors().size(); ++i) {
    SCOPED_TRACE("actor " + a.actor(i).name);
    const ActorNode& x = a.actor(i);
    const ActorNode& y = b.actor(i);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.function, y.function);
    EXPECT_EQ(x.args, y.args);
    EXPECT_EQ(x.work, y.work);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.extra, y.extra);
  }
}

// The docs/dot.md example pipeline: out = (a + b) * k, four i32 each.
Graph pipeline_graph() {
  Graph g("pipeline");
  DataId a = g.input("a", 16);
  DataId b = g.input("b", 16);
  DataId k = g.constant("k", i32_bytes({1, 2, 3, 4}));
  DataId sum = g.inner("sum", 16);
  DataId out = g.output("out", 16);
  g.actor("add", "i32.add", {a, b}, sum).work(4);
  g.actor("mul", "i32.mul", {sum, k}, out).work(8e9).args("elem=4, note=\"x\"");
  g.mutable_data(a).extra["label"] = "first \"input\"";
  g.mutable_actor(1).extra["color"] = "red";
  return g;
}

using testing::expect_error_naming;
using testing::parse_status;

TEST(DotTest, CppGraphRoundTripsThroughDotString) {
  TempDir dir;
  Graph g = pipeline_graph();
  // A DOT constant lives in a file, so give the C++ constant one.
  DataNode& k = g.mutable_data(*g.find_data("k"));
  k.file = "k.bin";
  write_file(dir.file("k.bin"), std::string(reinterpret_cast<const char*>(k.contents.data()), k.contents.size()));
  g.set_base_dir(dir.path().string());

  Result<Graph> back = Graph::from_dot_string(g.to_dot(), dir.path().string());
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << g.to_dot();
  expect_same_graph(g, *back);
  EXPECT_EQ(back->actor(1).work, 8e9);
  EXPECT_EQ(back->actor(1).args, "elem=4, note=\"x\"");
  EXPECT_EQ(back->data(0).extra.at("label"), "first \"input\"");
  EXPECT_TRUE(back->validate_structure().ok());
}

TEST(DotTest, DotTextRoundTripsThroughGraph) {
  TempDir dir;
  write_file(dir.file("w.bin"), "12345678");
  // Declarations interleaved, edges before nodes, ports out of order, a
  // default attribute, comments, quoted names and unknown attributes.
  const std::string text = R"(
    /* a comment */
    digraph "two stage" {
      node [shape=box];
      "x y" -> scale [port=1];
      w -> scale [port=0];   // constant first
      scale [actor="f.scale", args="factor=2", work=1.5e6, tooltip="say \"hi\""];
      w [kind=constant, bytes=8, file="w.bin"];
      "x y" [kind=input, bytes=8];
      scale -> mid;
      mid [kind=inner, bytes=8];
      mid -> sink [port=0];
      mid -> sink [port=1];
      sink [actor="f.add"];
      sink -> result;
      result [kind=output, bytes=8, label="R"];
    })";
  Result<Graph> g1 = Graph::from_dot_string(text, dir.path().string());
  ASSERT_TRUE(g1.ok()) << g1.status().ToString();
  EXPECT_EQ(g1->name(), "two stage");
  ASSERT_EQ(g1->data().size(), 4u);
  ASSERT_EQ(g1->actors().size(), 2u);
  const ActorNode& scale = g1->actor(*g1->find_actor("scale"));
  EXPECT_EQ(scale.function, "f.scale");
  EXPECT_EQ(scale.args, "factor=2");
  EXPECT_EQ(scale.work, 1.5e6);
  EXPECT_EQ(scale.inputs, (std::vector<DataId>{*g1->find_data("w"), *g1->find_data("x y")}));
  EXPECT_EQ(scale.extra.at("tooltip"), "say \"hi\"");
  EXPECT_EQ(scale.extra.at("shape"), "box");
  const ActorNode& sink = g1->actor(*g1->find_actor("sink"));
  EXPECT_EQ(sink.inputs, (std::vector<DataId>{*g1->find_data("mid"), *g1->find_data("mid")}));
  EXPECT_EQ(g1->data(*g1->find_data("w")).contents, bytes_of("12345678"));
  EXPECT_EQ(g1->data(*g1->find_data("result")).extra.at("label"), "R");
  EXPECT_TRUE(g1->validate_structure().ok()) << g1->validate_structure().ToString();

  const std::string dot = g1->to_dot();
  Result<Graph> g2 = Graph::from_dot_string(dot, dir.path().string());
  ASSERT_TRUE(g2.ok()) << g2.status().ToString() << "\n" << dot;
  expect_same_graph(*g1, *g2);
  EXPECT_EQ(g2->to_dot(), dot);
}

TEST(DotTest, WorkAcceptsUnquotedExponents) {
  // DOT's own lexer has no exponents; redflow accepts them anyway.
  const std::string text = R"(digraph g {
      i [kind=input, bytes=4]; o [kind=output, bytes=4]; o2 [kind=output, bytes=4];
      f [actor="f", work=8e9, args="scale=1e5"];  // comment with work=2e3
      h [actor="f", work = 1.5E-3];
      i -> f [port=0]; f -> o; i -> h [port=0]; h -> o2; })";
  Result<Graph> g = Graph::from_dot_string(text);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->actor(0).work, 8e9);
  EXPECT_EQ(g->actor(0).args, "scale=1e5");
  EXPECT_EQ(g->actor(1).work, 1.5e-3);
}

TEST(DotTest, DocumentedExampleParsesAndValidates) {
  // The first ```dot block of docs/dot.md, so the reference cannot drift.
  std::ifstream in(std::string(REDFLOW_SOURCE_DIR) + "/docs/dot.md");
  ASSERT_TRUE(in) << "docs/dot.md not found";
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t begin = doc.find("```dot\n");
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = doc.find("```", begin + 7);
  const std::string example = doc.substr(begin + 7, end - begin - 7);

  TempDir dir;
  write_file(dir.file("k.bin"), std::string(16, '\1'));
  Result<Graph> g = Graph::from_dot_string(example, dir.path().string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), "pipeline");
  EXPECT_EQ(g->data().size(), 5u);
  EXPECT_EQ(g->actors().size(), 2u);
  EXPECT_EQ(g->actor(1).extra.at("color"), "red");
  EXPECT_TRUE(g->validate_structure().ok()) << g->validate_structure().ToString();
}

TEST(DotTest, AnonymousDigraphKeepsDefaultName) {
  Result<Graph> g = Graph::from_dot_string("digraph { a [kind=input, bytes=0]; }");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), Graph().name());
}

TEST(DotTest, FromDotFileResolvesConstantsBesideTheDotFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "data");
  write_file(dir.file("data/k.bin"), "abcd");
  write_file(dir.file("g.dot"), R"(digraph g {
    x [kind=input, bytes=4]; k [kind=constant, bytes=4, file="data/k.bin"];
    f [actor="i32.add"]; y [kind=output, bytes=4];
    x -> f [port=0]; k -> f [port=1]; f -> y; })");
  Result<Graph> g = Graph::from_dot_file(dir.file("g.dot"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->base_dir(), dir.path().string());
  EXPECT_EQ(g->data(*g->find_data("k")).contents, bytes_of("abcd"));
  EXPECT_EQ(g->data(*g->find_data("k")).file, "data/k.bin");
}

TEST(DotTest, FromDotFileMissingFileIsIOError) {
  TempDir dir;
  Result<Graph> g = Graph::from_dot_file(dir.file("nope.dot"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Status::Code::kIOError);
  EXPECT_NE(g.status().message().find("nope.dot"), std::string::npos);
}

TEST(DotTest, WriteDotFileWritesConstantBinBesideAndReadsBack) {
  TempDir dir;
  Graph g = pipeline_graph();
  ASSERT_TRUE(g.write_dot_file(dir.file("p.dot")).ok());
  ASSERT_TRUE(fs::exists(dir.file("k.bin")));
  EXPECT_EQ(fs::file_size(dir.file("k.bin")), 16u);
  for (const auto& entry : fs::directory_iterator(dir.path()))  // no temporary files left behind
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();

  Result<Graph> back = Graph::from_dot_file(dir.file("p.dot"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->data(*back->find_data("k")).file, "k.bin");
  // Apart from the file name the writer chose, the graphs are equal.
  g.mutable_data(*g.find_data("k")).file = "k.bin";
  expect_same_graph(g, *back);
}

TEST(DotTest, WriteDotFileReferencesConstantsOfAnotherDirectory) {
  TempDir src, dst;
  write_file(src.file("w.bin"), "wxyz");
  const std::string text = R"(digraph g { w [kind=constant, bytes=4, file="w.bin"]; f [actor="id"];
                              o [kind=output, bytes=4]; w -> f [port=0]; f -> o; })";
  Result<Graph> g = Graph::from_dot_string(text, src.path().string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(g->write_dot_file(dst.file("g.dot")).ok());
  Result<Graph> back = Graph::from_dot_file(dst.file("g.dot"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->data(0).contents, bytes_of("wxyz"));
}

TEST(DotTest, WriteDotFileIntoMissingDirectoryFailsAndLeavesNothing) {
  TempDir dir;
  const fs::path missing = dir.path() / "no" / "such";
  Status s = pipeline_graph().write_dot_file((missing / "p.dot").string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("p.dot"), std::string::npos) << s.ToString();
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(DotTest, WriteDotFileReplacesAnExistingFile) {
  TempDir dir;
  write_file(dir.file("p.dot"), "old");
  ASSERT_TRUE(pipeline_graph().write_dot_file(dir.file("p.dot")).ok());
  EXPECT_TRUE(Graph::from_dot_file(dir.file("p.dot")).ok());
}

// --- errors -----------------------------------------------------------------

TEST(DotErrorTest, MalformedSyntaxReportsLine) {
  Status s = parse_status("digraph g {\n  a [kind=input, bytes=4];\n  a -> -> b;\n}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidGraph);
  EXPECT_NE(s.message().find("syntax error"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("line 3"), std::string::npos) << s.ToString();
  // cgraph's parser recovers: the next parse works.
  EXPECT_TRUE(parse_status("digraph g { a [kind=input, bytes=4]; }").ok());
}

TEST(DotErrorTest, MalformedSyntaxInFileNamesTheFile) {
  TempDir dir;
  write_file(dir.file("bad.dot"), "digraph g {\n a [kind=input bytes=4\n}");
  Result<Graph> g = Graph::from_dot_file(dir.file("bad.dot"));
  expect_error_naming(g.status(), {"bad.dot", "line"});
}

TEST(DotErrorTest, EmptyInputIsAnError) { EXPECT_FALSE(parse_status("").ok()); }

TEST(DotErrorTest, UndirectedGraphRejected) {
  expect_error_naming(parse_status("graph flat { a [kind=input, bytes=4]; }"), {"flat", "undirected"});
}

TEST(DotErrorTest, UnknownKindNamesNode) {
  expect_error_naming(parse_status("digraph g { weird [kind=temporary, bytes=4]; }"), {"weird", "temporary"});
}

TEST(DotErrorTest, NodeWithoutKindOrActorNamesNode) {
  expect_error_naming(parse_status("digraph g { a [kind=input, bytes=4]; a -> ghost [port=0]; }"), {"ghost"});
}

TEST(DotErrorTest, NodeWithBothKindAndActorNamesNode) {
  expect_error_naming(parse_status("digraph g { both [kind=inner, bytes=4, actor=\"f\"]; }"), {"both"});
}

TEST(DotErrorTest, BytesNotANumberNamesNodeAndAttribute) {
  expect_error_naming(parse_status("digraph g { a [kind=input, bytes=abc]; }"), {"'a'", "bytes", "abc"});
  expect_error_naming(parse_status("digraph g { a [kind=input, bytes=\"4x\"]; }"), {"'a'", "bytes"});
}

TEST(DotErrorTest, NegativeBytesNamesNodeAndAttribute) {
  expect_error_naming(parse_status("digraph g { neg [kind=input, bytes=-4]; }"), {"neg", "bytes", "-4"});
}

TEST(DotErrorTest, MissingBytesNamesNode) {
  expect_error_naming(parse_status("digraph g { nobytes [kind=input]; }"), {"nobytes", "bytes"});
}

TEST(DotErrorTest, BadWorkNamesActorAndAttribute) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; f [actor=\"g\", work=lots]; o [kind=output, bytes=4];"
      " i -> f [port=0]; f -> o; }";
  expect_error_naming(parse_status(text), {"'f'", "work", "lots"});
}

TEST(DotErrorTest, ActorAttributeOnDataNodeNamesNode) {
  expect_error_naming(parse_status("digraph g { d [kind=input, bytes=4, work=5]; }"), {"'d'", "work"});
}

TEST(DotErrorTest, DataToDataEdgeNamesBothEnds) {
  expect_error_naming(parse_status("digraph g { src [kind=input, bytes=4]; dst [kind=output, bytes=4]; "
                                   "src -> dst; }"),
                      {"src", "dst"});
}

TEST(DotErrorTest, ActorToActorEdgeNamesBothEnds) {
  expect_error_naming(parse_status("digraph g { first [actor=\"f\"]; second [actor=\"f\"]; first -> second; }"),
                      {"first", "second"});
}

TEST(DotErrorTest, EdgeIntoActorWithoutPortNamesActor) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; portless [actor=\"f\"]; o [kind=output, bytes=4];"
      " i -> portless; portless -> o; }";
  expect_error_naming(parse_status(text), {"portless", "port"});
}

TEST(DotErrorTest, BadPortNamesActor) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; f [actor=\"f\"]; o [kind=output, bytes=4];"
      " i -> f [port=first]; f -> o; }";
  expect_error_naming(parse_status(text), {"'f'", "first"});
}

TEST(DotErrorTest, DuplicatePortNamesActorAndPort) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; j [kind=input, bytes=4]; twice [actor=\"f\"];"
      " o [kind=output, bytes=4]; i -> twice [port=0]; j -> twice [port=0]; twice -> o; }";
  expect_error_naming(parse_status(text), {"twice", "port 0"});
}

TEST(DotErrorTest, MissingPortNamesActorAndPort) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; j [kind=input, bytes=4]; gappy [actor=\"f\"];"
      " o [kind=output, bytes=4]; i -> gappy [port=0]; j -> gappy [port=2]; gappy -> o; }";
  expect_error_naming(parse_status(text), {"gappy", "port 1"});
}

TEST(DotErrorTest, PortOnOutputEdgeRejected) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; f [actor=\"f\"]; o [kind=output, bytes=4];"
      " i -> f [port=0]; f -> o [port=0]; }";
  expect_error_naming(parse_status(text), {"'f'", "'o'", "port"});
}

TEST(DotErrorTest, ActorWithoutOutputNamesActor) {
  expect_error_naming(parse_status("digraph g { i [kind=input, bytes=4]; sinkless [actor=\"f\"]; "
                                   "i -> sinkless [port=0]; }"),
                      {"sinkless", "0 output"});
}

TEST(DotErrorTest, ActorWithTwoOutputsNamesActor) {
  const std::string text =
      "digraph g { i [kind=input, bytes=4]; forked [actor=\"f\"]; o [kind=output, bytes=4];"
      " p [kind=output, bytes=4]; i -> forked [port=0]; forked -> o; forked -> p; }";
  expect_error_naming(parse_status(text), {"forked", "2 output"});
}

TEST(DotErrorTest, ConstantWithoutFileNamesNode) {
  expect_error_naming(parse_status("digraph g { k [kind=constant, bytes=4]; }"), {"'k'", "file"});
}

TEST(DotErrorTest, FileOnNonConstantNamesNode) {
  expect_error_naming(parse_status("digraph g { d [kind=input, bytes=4, file=\"d.bin\"]; }"), {"'d'", "file"});
}

TEST(DotErrorTest, ConstantFileMissingNamesNodeAndFile) {
  TempDir dir;
  Status s = parse_status("digraph g { weights [kind=constant, bytes=4, file=\"absent.bin\"]; }", dir.path().string());
  expect_error_naming(s, {"weights", "absent.bin"});
  EXPECT_EQ(s.code(), Status::Code::kIOError);
}

TEST(DotErrorTest, ConstantFileWrongSizeNamesNodeAndFile) {
  TempDir dir;
  write_file(dir.file("short.bin"), "abc");
  Status s = parse_status("digraph g { weights [kind=constant, bytes=4, file=\"short.bin\"]; }", dir.path().string());
  expect_error_naming(s, {"weights", "short.bin", "3 bytes", "bytes=4"});
}

TEST(DotErrorTest, SemanticErrorInFileNamesTheFile) {
  TempDir dir;
  write_file(dir.file("kinds.dot"), "digraph g { odd [kind=strange, bytes=1]; }");
  expect_error_naming(Graph::from_dot_file(dir.file("kinds.dot")).status(), {"kinds.dot", "odd"});
}

TEST(DotTest, ParsesConcurrentlyFromManyThreads) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        // Every other parse is a syntax error, which must not leak into the others.
        const bool bad = (i + t) % 2 == 0;
        Status s = parse_status(bad ? "digraph { a -> }" : "digraph g { a [kind=input, bytes=1]; }");
        if (s.ok() == bad) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace redflow
