// Shared helpers of the `redflow` subcommands.
#include "cli_common.hpp"

#include "apps/apps.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace redflow::cli {

int fail(const Status& s) {
  fmt::print(stderr, "redflow: error: {}\n", s.ToString());
  return 1;
}

Result<std::vector<std::byte>> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + path + "'");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

Status write_file(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".redflow-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IOError("cannot write '" + path + "'");
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IOError("cannot write '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("cannot rename '" + tmp + "' to '" + path + "'");
  }
  return Status::Ok();
}

Result<std::pair<std::string, std::string>> split_binding(const std::string& text, const char* flag) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Status::InvalidArgument(std::string(flag) + " expects NAME=FILE, got '" + text + "'");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Status load_libs(Registry& reg, const std::vector<std::string>& libs) {
  for (const auto& lib : libs) REDFLOW_RETURN_IF_ERROR(reg.load_plugin(lib));
  return Status::Ok();
}

Registry cli_registry() { return apps::app_registry(); }

}  // namespace redflow::cli
