// Typed data in and out: a data node's type= (DOT), NumPy .npy inputs and
// outputs checked against it, and --print by type.
#include <cstring>

#include "cli_helpers.hpp"
#include "redflow/graph.hpp"
#include "redflow/npy.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::run_cli;

// A .npy file as NumPy 1.x writes it (version 1.0, header padded to 64 bytes), built by hand.
std::string npy_file(const std::string& descr, const std::string& shape, const void* data, std::size_t bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

const char* kCopyF64 = R"(digraph copy {
  X [kind=input,  bytes=32, type=f64];
  Y [kind=output, bytes=32, type=f64];
  c [actor="rf.collect"];
  X -> c [port=0];
  c -> Y;
})";

TEST_F(CliTest, NpyInAndOutWithTypedPrint) {
  write("g.dot", kCopyF64);
  const double xs[] = {1.5, -2.25, 3e10, 0.125};
  write("x.npy", npy_file("<f8", "(4,)", xs, sizeof xs));
  auto r = run_cli("run " + path("g.dot") + " --input X=" + path("x.npy") + " --output Y=" + path("y.npy") + " --print");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Y (4 f64):"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1.5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-2.25"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3e+10"), std::string::npos) << r.output;
  std::ifstream in(path("y.npy"), std::ios::binary);
  std::string y((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(y.size(), sizeof xs);
  EXPECT_EQ(y.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(y.find("'descr': '<f8'"), std::string::npos) << y;
  EXPECT_NE(y.find("'shape': (4,)"), std::string::npos) << y;
  EXPECT_EQ((y.size() - sizeof xs) % 64, 0u) << "header padded to 64 bytes as NumPy requires";
  EXPECT_EQ(std::memcmp(y.data() + y.size() - sizeof xs, xs, sizeof xs), 0);
}

TEST_F(CliTest, NpyDtypeAndShapeAreCheckedAgainstTheNode) {
  write("g.dot", kCopyF64);
  const std::int32_t is[] = {1, 2, 3, 4, 5, 6, 7, 8};
  write("i.npy", npy_file("<i4", "(8,)", is, sizeof is));
  auto dtype = run_cli("run " + path("g.dot") + " --input X=" + path("i.npy"));
  EXPECT_EQ(dtype.exit_code, 2) << dtype.output;
  EXPECT_NE(dtype.output.find("holds i32 values, but data node 'X' has type=f64"), std::string::npos) << dtype.output;
  const double three[] = {1, 2, 3};
  write("s.npy", npy_file("<f8", "(3,)", three, sizeof three));
  auto shape = run_cli("run " + path("g.dot") + " --input X=" + path("s.npy"));
  EXPECT_EQ(shape.exit_code, 2) << shape.output;
  EXPECT_NE(shape.output.find("shape (3) of f64 = 24 bytes, data node 'X' declares 32 bytes"), std::string::npos) << shape.output;
  write("bad.npy", "not numpy at all");
  auto bad = run_cli("run " + path("g.dot") + " --input X=" + path("bad.npy"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("not a NumPy .npy file"), std::string::npos) << bad.output;
}

TEST_F(CliTest, NpyOutputOfAnUntypedNodeIsRefusedBeforeRunning) {
  write("g.dot", R"(digraph copy { X [kind=input, bytes=8]; Y [kind=output, bytes=8]; c [actor="rf.collect"]; X -> c [port=0]; c -> Y; })");
  write_i32("x.bin", {1, 2});
  auto r = run_cli("run " + path("g.dot") + " --input X=" + path("x.bin") + " --output Y=" + path("y.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("data node 'Y' has no type="), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
}

TEST(TypedData, DotTypeIsReadCheckedAndWrittenBack) {
  auto g = redflow::Graph::from_dot_string(kCopyF64);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->data(*g->find_data("X")).type, redflow::ElementType::kF64);
  EXPECT_NE(g->to_dot().find("type=f64"), std::string::npos) << g->to_dot();
  auto bad = redflow::Graph::from_dot_string(R"(digraph g { X [kind=input, bytes=8, type=f65]; })");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("type=f65 is not one of"), std::string::npos) << bad.status().ToString();
  auto odd = redflow::Graph::from_dot_string(R"(digraph g { X [kind=input, bytes=12, type=f64]; Y [kind=output, bytes=12];
      c [actor="rf.collect"]; X -> c [port=0]; c -> Y; })");
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  auto s = odd->validate_structure();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("data node 'X': bytes=12 is not a whole number of f64 elements"), std::string::npos) << s.ToString();
}

TEST(TypedData, NpyRoundTrip) {
  const float fs[] = {1.0f, 2.5f};
  auto file = redflow::to_npy(redflow::ElementType::kF32, std::as_bytes(std::span(fs)));
  auto a = redflow::parse_npy(file);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->type, redflow::ElementType::kF32);
  EXPECT_EQ(a->shape, std::vector<std::size_t>{2});
  ASSERT_EQ(a->data.size(), sizeof fs);
  EXPECT_EQ(std::memcmp(a->data.data(), fs, sizeof fs), 0);
}

}  // namespace
