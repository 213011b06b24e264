// Running the real `redflow` command from tests: a process per call, a fresh
// directory per test. Shared by every CLI test file.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "spawn_process.hpp"
#include "scratch_dir.hpp"

namespace redflow::testing {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// Runs `redflow ARGS` (through the shell, with `env`'s VAR=VALUE words
// before it, if any) and returns its exit status and its stdout and stderr.
// Bounded: a command still running after 120 s is killed, its status is -1
// and its output says so and names it, so a test that hangs names the
// command instead of timing out mute.
inline RunResult run_cli(const std::string& args, const std::string& env = "") {
  // Appended, not `a + b + c`: GCC 12 at -O1 reports a false -Warray-bounds
  // in the inlined operator+ chain.
  std::string cmd = env;
  cmd.append(" timeout -k 5 120 ").append(REDFLOW_CLI).append(" ").append(args).append(" 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 124 || WEXITSTATUS(status) == 137)) {
    out.append("\n[run_cli: killed after 120 s: redflow ").append(args).append("]\n");
    return {-1, out};
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_cli");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) { std::ofstream(path(name), std::ios::binary) << text; }
  std::vector<std::int32_t> read_i32(const std::string& name) {
    std::ifstream in(path(name), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::int32_t> v(bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);  // a missing file reads as none (and memcpy takes no null)
    return v;
  }
  void write_i32(const std::string& name, const std::vector<std::int32_t>& v) {
    std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  }
  fs::path dir_;
};

// Starts `redflow ARGS` in the background, its stdout and stderr appended to
// `log`, and returns its pid (the caller waits for it).
inline pid_t spawn_cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv{REDFLOW_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const pid_t pid = spawn_process(std::move(argv), {.out_fd = fd, .err_fd = fd});
  if (fd >= 0) ::close(fd);
  return pid;
}

inline const std::string kDemo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";

}  // namespace redflow::testing
