// libFuzzer target: the SPITS commit log reader (CommitLog::open) on any file
// contents. Whatever it accepts must take an append and read back the same
// on the next open, with no torn tail left; whatever it refuses must be a
// named error that leaves the file as it was.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "spits/commit_log.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "spits_commit_log_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/redflow_spits_log_fuzz_" + std::to_string(getpid());
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  using redflow::spits::CommitLog;
  {
    auto log = CommitLog::open(path, 42);
    if (!log.ok()) {
      if (log.status().message().find("commit log '") == std::string::npos) fail("an error that does not name the log", log.status().ToString());
      if (slurp(path) != bytes) fail("a refused log was changed", log.status().ToString());
      std::remove(path.c_str());
      return 0;
    }
    if ((*log)->torn_bytes() > size) fail("more torn bytes than the file had", "");
    if (!(*log)->committed(1u << 20, 7).ok()) fail("cannot append to an accepted log", "");
  }
  auto again = CommitLog::open(path, 42);
  if (!again.ok()) fail("a log it wrote does not open again", again.status().ToString());
  if ((*again)->torn_bytes() != 0) fail("a log it wrote has a torn tail", "");
  auto it = (*again)->entries().find(1u << 20);
  if (it == (*again)->entries().end() || it->second.state != CommitLog::State::kCommitted || it->second.task_hash != 7)
    fail("the appended record did not read back", "");
  std::remove(path.c_str());
  return 0;
}
