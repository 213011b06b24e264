// libFuzzer target: the server's journal (src/server/journal.*) opened on any
// file contents. Whatever it accepts must take an append and open again with
// no torn tail and one more job; whatever it refuses must be an error naming
// the journal, leaving the file as it was.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "server/journal.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "server_journal_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::string journal_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace redflow::server;
  static const std::string dir = "/tmp/redflow_server_journal_fuzz_" + std::to_string(getpid());
  static const std::string path = dir + "/journal";
  std::filesystem::create_directories(dir);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::size_t jobs = 0;
  {
    JobTable table;
    std::string endpoint;
    auto j = Journal::open(dir, table, endpoint);
    if (!j.ok()) {
      if (j.status().message().find("journal '" + path + "'") == std::string::npos) fail("an error that does not name the journal", j.status().ToString());
      if (journal_bytes(path) != bytes) fail("a refused journal was changed", j.status().ToString());
      return 0;
    }
    if ((*j)->torn_bytes() > size) fail("more torn bytes than the file had", "");
    jobs = table.all().size();
    const std::uint64_t id = table.submit({"run", "g.dot"}, "/w");
    if (!(*j)->submitted(*table.find(id)).ok()) fail("cannot append to an accepted journal", "");
  }
  JobTable table;
  std::string endpoint;
  auto again = Journal::open(dir, table, endpoint);
  if (!again.ok()) fail("a journal it wrote does not open again", again.status().ToString());
  if ((*again)->torn_bytes() != 0) fail("a journal it wrote has a torn tail", "");
  if (table.all().size() != jobs + 1) fail("the appended job is not read back", std::to_string(table.all().size()));
  return 0;
}
