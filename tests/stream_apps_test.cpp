// The paper's two stream applications (docs/stream-apps.md): the wavelet
// encoder on the real cameraman image equals its sequential twin byte for
// byte in both local modes, and decodes back to the image (a real, invertible
// transform); the compute-heavy application equals its sequential twin; both
// have the paper's operator counts, every operator fires, the checked-in DOT
// files are the programs, and bad PGM files are named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "redflow/stream.hpp"
#include "stream/apps/compute_heavy.hpp"
#include "stream/apps/wavelet.hpp"
#include "scratch_dir.hpp"

namespace redflow::stream {
namespace {

namespace fs = std::filesystem;

const std::string kSource = REDFLOW_SOURCE_DIR;
const char* kCameraNpz = "/usr/lib/python3/dist-packages/pywt/data/camera.npz";

struct AppModeCase {
  Mode mode;
  unsigned threads;
  const char* name;
};
const AppModeCase kAppModes[] = {{Mode::kPool, 2, "pool of 2"}, {Mode::kThreadPerOperator, 0, "thread per operator"}};

OperatorRegistry app_registry() {
  auto reg = OperatorRegistry::with_builtins();
  add_wavelet_operators(reg);
  add_compute_heavy_operators(reg);
  return reg;
}

// A scratch directory per test, removed afterwards.
class StreamAppsWavelet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_stream_apps");
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_file(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  // scripts/camera-pgm into the scratch directory; empty when python3-pywt
  // (the image's source) is not installed.
  std::string camera() const {
    if (!fs::exists(kCameraNpz)) return "";
    const std::string out = path("camera.pgm");
    const std::string cmd = kSource + "/scripts/camera-pgm " + out;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }
  fs::path dir_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A program as sorted words, to compare two regardless of the order the DOT
// reader visits nodes and edges in.
std::vector<std::string> shape(const Program& p) {
  std::vector<std::string> out;
  for (const auto& i : p.instances()) {
    std::string args;
    for (const auto& [k, v] : i.args) args += " " + k + "=" + v;
    out.push_back("op " + i.name + " " + i.op + args);
  }
  for (const auto& s : p.streams())
    out.push_back("stream " + p.instances()[s.from].name + ":" + std::to_string(s.from_port) + " -> " + p.instances()[s.to].name + ":" +
                  std::to_string(s.to_port) + " token " + std::to_string(s.token_bytes));
  std::sort(out.begin(), out.end());
  return out;
}

// Deterministic pixels with smooth areas and edges, like a photograph.
GrayImage synthetic(int w, int h) {
  GrayImage img{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
  std::uint32_t r = 12345;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      r = r * 1103515245u + 12345u;
      img.pixels[static_cast<std::size_t>(y) * w + x] = static_cast<std::uint8_t>((x * 7 + y * 3) % 200 + ((x / 5 + y / 3) % 2) * 40 + (r >> 28));
    }
  return img;
}

void expect_every_operator_fired(const RunResult& r, std::size_t count, const char* mode) {
  EXPECT_EQ(r.operators.size(), count) << mode;
  for (const auto& o : r.operators) EXPECT_GT(o.firings, 0u) << o.name << " never fired (" << mode << ")";
}

TEST_F(StreamAppsWavelet, ProgramEqualsTheSequentialEncoderOnTheCameraImage) {
  const std::string pgm = camera();
  ASSERT_FALSE(pgm.empty()) << kCameraNpz << " is missing: install python3-pywt (scripts/bootstrap does)";
  auto img = read_pgm(pgm);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  ASSERT_EQ(img->width, 512);
  ASSERT_EQ(img->height, 512);
  const Bytes expected = wavelet_encode_sequential(*img);
  const auto reg = app_registry();
  auto p = wavelet_program(reg, pgm);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->instances().size(), wavelet_operator_count());
  EXPECT_GE(p->instances().size(), 28u);
  EXPECT_LE(p->instances().size(), 32u);
  for (const auto& m : kAppModes) {
    auto r = run(*p, RunOptions{m.mode, m.threads});
    ASSERT_TRUE(r.ok()) << m.name << ": " << r.status().ToString();
    ASSERT_EQ(r->outputs[kWaveletOutput].size(), expected.size()) << m.name;
    EXPECT_TRUE(r->outputs[kWaveletOutput] == expected) << m.name << ": the encoded bytes differ";
    expect_every_operator_fired(*r, wavelet_operator_count(), m.name);
  }
}

TEST_F(StreamAppsWavelet, DecodesBackToTheCameraImage) {
  const std::string pgm = camera();
  ASSERT_FALSE(pgm.empty()) << kCameraNpz << " is missing: install python3-pywt (scripts/bootstrap does)";
  auto img = read_pgm(pgm);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  const Bytes lossless = wavelet_encode_sequential(*img, 3, 1);
  auto back = wavelet_decode_sequential(lossless);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == *img) << "step=1 must be lossless";
  // Coarser steps trade exactness for zeros: smaller, and still close.
  const Bytes lossy = wavelet_encode_sequential(*img, 3, 8);
  EXPECT_LT(lossy.size(), lossless.size() / 2);
  auto approx = wavelet_decode_sequential(lossy);
  ASSERT_TRUE(approx.ok()) << approx.status().ToString();
  double se = 0;
  for (std::size_t i = 0; i < img->pixels.size(); ++i) se += (approx->pixels[i] - img->pixels[i]) * double(approx->pixels[i] - img->pixels[i]);
  const double mse = se / img->pixels.size();
  EXPECT_LT(mse, 40.0) << "step=8 reconstruction too far from the image";
  EXPECT_GT(mse, 0.0);
}

TEST_F(StreamAppsWavelet, OddSizesArePaddedAndCropped) {
  const auto reg = app_registry();
  for (auto [w, h, levels, step] : {std::tuple{37, 13, 3, 1}, std::tuple{8, 8, 3, 3}, std::tuple{100, 9, 1, 1}, std::tuple{19, 64, 4, 2}}) {
    const GrayImage img = synthetic(w, h);
    const std::string name = "img_" + std::to_string(w) + "x" + std::to_string(h) + ".pgm";
    ASSERT_TRUE(write_pgm(img, path(name)).ok());
    auto read = read_pgm(path(name));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(*read == img);
    const Bytes expected = wavelet_encode_sequential(img, levels, step);
    auto p = wavelet_program(reg, path(name), levels, step);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->instances().size(), wavelet_operator_count(levels));
    auto r = run(*p, RunOptions{Mode::kPool, 2});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->outputs[kWaveletOutput] == expected) << w << "x" << h << " levels " << levels;
    auto back = wavelet_decode_sequential(expected);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->width, w);
    EXPECT_EQ(back->height, h);
    if (step == 1) {
      EXPECT_TRUE(*back == img) << w << "x" << h << " levels " << levels;
    }
  }
}

// The packer writes the file in image row order (docs/stream-apps.md,
// "Packer"): two images that differ only in their last group of 8 rows (3
// levels) encode to files that share all the bytes of the 7 groups before
// it, and the program gathers those bytes too. A file of whole bands would
// differ within the first band already (the last rows end every band).
TEST_F(StreamAppsWavelet, TheFileFollowsTheImageRowByRow) {
  const GrayImage a = synthetic(64, 64);
  GrayImage b = a;
  for (std::size_t i = std::size_t{56} * 64; i < b.pixels.size(); ++i) b.pixels[i] = static_cast<std::uint8_t>(255 - b.pixels[i]);
  const Bytes ea = wavelet_encode_sequential(a), eb = wavelet_encode_sequential(b);
  ASSERT_NE(ea, eb);
  const std::size_t common = static_cast<std::size_t>(std::mismatch(ea.begin(), ea.end(), eb.begin(), eb.end()).first - ea.begin());
  EXPECT_GE(common, ea.size() * 3 / 4) << "of " << ea.size() << " bytes";
  EXPECT_LT(common, ea.size());
  ASSERT_TRUE(write_pgm(b, path("late_rows.pgm")).ok());
  const auto reg = app_registry();  // the program keeps a pointer to it
  auto p = wavelet_program(reg, path("late_rows.pgm"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto r = run(*p, RunOptions{Mode::kPool, 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->outputs[kWaveletOutput] == eb);
}

TEST_F(StreamAppsWavelet, DotIsTheProgram) {
  const auto reg = app_registry();
  EXPECT_EQ(read_text(kSource + "/examples/streams/wavelet.dot"), wavelet_dot("camera.pgm")) << "regenerate examples/streams/wavelet.dot";
  auto from_file = Program::from_dot_file(kSource + "/examples/streams/wavelet.dot", reg);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_EQ(from_file->instances().size(), wavelet_operator_count());
  ASSERT_TRUE(write_pgm(synthetic(16, 16), path("camera.pgm")).ok());
  auto built = wavelet_program(reg, path("camera.pgm"));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  auto parsed = Program::from_dot(wavelet_dot(path("camera.pgm")), reg);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(shape(*parsed), shape(*built));
  // The checked-in file differs from a built program only in the path.
  auto relative = Program::from_dot(wavelet_dot("camera.pgm"), reg);
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(shape(*from_file), shape(*relative));
}

TEST_F(StreamAppsWavelet, ReadPgmAndDecodeErrorsAreNamed) {
  auto err = [&](const std::string& name, const std::string& bytes) {
    write_file(name, bytes);
    auto r = read_pgm(path(name));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  const std::string pixels(64, '\x80');
  EXPECT_EQ(err("good.pgm", "P5\n# a comment\n8 8\n255\n" + pixels), "ok");
  EXPECT_NE(err("p2.pgm", "P2\n8 8\n255\n" + pixels).find("bad magic 'P2'"), std::string::npos);
  EXPECT_NE(err("ppm.pgm", "P6\n8 8\n255\n" + pixels).find("bad magic"), std::string::npos);
  EXPECT_NE(err("short.pgm", "P5\n8 8\n255\n" + pixels.substr(10)).find("truncated data: 54 of 64 pixel bytes"), std::string::npos);
  EXPECT_NE(err("nohdr.pgm", "P5\n8 8").find("truncated header"), std::string::npos);
  EXPECT_NE(err("small.pgm", "P5\n4 8\n255\n" + pixels).find("bad size 4x8"), std::string::npos);
  EXPECT_NE(err("wide.pgm", "P5\n99999999999 8\n255\n").find("bad size"), std::string::npos);
  EXPECT_NE(err("deep.pgm", "P5\n8 8\n65535\n" + pixels + pixels).find("maxval 65535 > 255"), std::string::npos);
  auto missing = read_pgm(path("nope.pgm"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
  // The program names a bad file before it runs; a DOT program naming one
  // fails at run time, naming the source operator.
  const auto reg = app_registry();
  auto p = wavelet_program(reg, path("nope.pgm"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nope.pgm"), std::string::npos);
  EXPECT_FALSE(wavelet_program(reg, "has space.pgm").ok());
  auto dot = Program::from_dot(wavelet_dot(path("nope.pgm")), reg);
  ASSERT_TRUE(dot.ok()) << dot.status().ToString();
  auto r = run(*dot, RunOptions{Mode::kPool, 2});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'source'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("cannot open"), std::string::npos) << r.status().message();
  // Corrupt encodings are named too.
  const std::string garbage = "not an encoding";
  EXPECT_FALSE(wavelet_decode_sequential(Bytes(reinterpret_cast<const std::byte*>(garbage.data()), reinterpret_cast<const std::byte*>(garbage.data() + garbage.size()))).ok());
  Bytes enc = wavelet_encode_sequential(synthetic(16, 16));
  EXPECT_NE(wavelet_decode_sequential(Bytes(enc.begin(), enc.end() - 8)).status().message().find("truncated"), std::string::npos);
  enc.resize(enc.size() + 8);
  EXPECT_NE(wavelet_decode_sequential(enc).status().message().find("after the last band"), std::string::npos);
}

TEST(StreamAppsCha, ProgramEqualsTheSequentialComputationInBothModes) {
  const std::uint64_t blocks = 203, work = 2000;  // not a multiple of the branches: uneven branches
  const Bytes expected = cha_sequential(blocks, work);
  ASSERT_EQ(expected.size(), blocks * kChaToken);
  const auto reg = app_registry();
  auto p = cha_program(reg, blocks, work);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->instances().size(), cha_operator_count());
  EXPECT_GE(p->instances().size(), 18u);
  EXPECT_LE(p->instances().size(), 22u);
  for (const auto& m : kAppModes) {
    auto r = run(*p, RunOptions{m.mode, m.threads});
    ASSERT_TRUE(r.ok()) << m.name << ": " << r.status().ToString();
    EXPECT_TRUE(r->outputs[kChaOutput] == expected) << m.name << ": the blocks differ";
    expect_every_operator_fired(*r, cha_operator_count(), m.name);
  }
  // The kernel really depends on its work and seed.
  EXPECT_NE(cha_sequential(8, work), cha_sequential(8, work + 1));
  EXPECT_NE(cha_sequential(8, work, 2, 4), cha_sequential(8, work, 4, 4));
}

TEST(StreamAppsCha, FewerBlocksThanBranchesAndOtherShapesEnd) {
  const auto reg = app_registry();
  for (auto [blocks, branches, stages] : {std::tuple{0, 4, 4}, std::tuple{3, 4, 4}, std::tuple{50, 3, 2}, std::tuple{17, 1, 1}}) {
    auto p = cha_program(reg, blocks, 50, branches, stages);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const auto& m : kAppModes) {
      auto r = run(*p, RunOptions{m.mode, m.threads});
      ASSERT_TRUE(r.ok()) << m.name << ": " << r.status().ToString();
      EXPECT_TRUE(r->outputs[kChaOutput] == cha_sequential(blocks, 50, branches, stages)) << blocks << " blocks, " << m.name;
    }
  }
  EXPECT_FALSE(cha_program(reg, 10, 10, 0, 4).ok());
}

TEST(StreamAppsCha, DotIsTheProgram) {
  const auto reg = app_registry();
  const std::string text = read_text(kSource + "/examples/streams/compute_heavy.dot");
  auto from_file = Program::from_dot(text, reg);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_EQ(from_file->instances().size(), cha_operator_count());
  // The file is cha_dot with its modest defaults: find them in its args.
  const auto& src = from_file->instances()[from_file->find("source")];
  const auto& mix = from_file->instances()[from_file->find("b0s0")];
  const std::uint64_t blocks = std::stoull(src.args.at("blocks")), work = std::stoull(mix.args.at("work"));
  EXPECT_EQ(text, cha_dot(blocks, work));
  auto built = cha_program(reg, blocks, work);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(shape(*from_file), shape(*built));
}

}  // namespace
}  // namespace redflow::stream
