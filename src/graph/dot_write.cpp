// Extended DOT (docs/dot.md), writing: Graph::to_dot and
// Graph::write_dot_file. Every name and string is quoted, so any graph that
// validates writes back to DOT that dot.cpp reads as the same graph.
#include <fmt/format.h>
#include <sys/stat.h>  // fchmod
#include <unistd.h>    // mkstemp, write, fsync, rename

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "graph/dot_input.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

// The shortest text that reads back as exactly `v`.
std::string format_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
  return ec == std::errc() ? std::string(buf, end) : fmt::format("{}", v);
}

// A DOT quoted string. A value ending in a backslash cannot be expressed in
// DOT (the backslash would escape the closing quote); see docs/dot.md.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

void append_extra(std::string& out, const std::map<std::string, std::string>& extra) {
  for (const auto& [key, value] : extra) out += ", " + quote(key) + "=" + quote(value);
}

// DOT text for `g`; `files` overrides constants' file attributes by data id.
std::string dot_text(const Graph& g, const std::map<DataId, std::string>& files) {
  std::string out = "digraph " + quote(g.name()) + " {\n";
  for (DataId d = 0; d < g.data().size(); ++d) {
    const DataNode& n = g.data(d);
    out += fmt::format("  {} [kind={}, bytes={}", quote(n.name), to_string(n.kind), n.bytes);
    auto file = files.find(d);
    const std::string& path = file != files.end() ? file->second : n.file;
    if (!path.empty()) out += ", file=" + quote(path);
    if (n.type != ElementType::kNone) out += ", type=" + std::string(to_string(n.type));
    append_extra(out, n.extra.map());
    out += "];\n";
  }
  for (const ActorNode& a : g.actors()) {
    out += "  " + quote(a.name) + " [actor=" + quote(a.function);
    if (!a.args.empty()) out += ", args=" + quote(a.args);
    if (a.work != 0) out += ", work=" + quote(format_double(a.work));
    if (a.redundancy) out += ", redundancy=" + quote(to_string(*a.redundancy));
    append_extra(out, a.extra.map());
    out += "];\n";
  }
  for (const ActorNode& a : g.actors()) {
    for (std::uint32_t port = 0; port < a.inputs.size(); ++port) {
      if (a.inputs[port] >= g.data().size()) continue;  // a dangling id has no name to write
      out += fmt::format("  {} -> {} [port={}];\n", quote(g.data(a.inputs[port]).name), quote(a.name), port);
    }
    for (DataId d : a.outputs)
      if (d < g.data().size()) out += fmt::format("  {} -> {};\n", quote(a.name), quote(g.data(d).name));
  }
  out += "}\n";
  return out;
}

// Writes `bytes` to a temporary file beside `path` and renames it over
// `path`, so readers see the old file or the new one, never half of one.
Status write_file_atomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return dot::errno_error("cannot create a file beside", path);
  auto fail = [&](const char* what) {
    Status s = dot::errno_error(what, path);
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) return fail("cannot set permissions of");
  if (::fsync(fd) != 0) return fail("cannot sync");
  if (::close(fd) != 0) {
    Status s = dot::errno_error("cannot close", path);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = dot::errno_error("cannot rename a temporary file to", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

// A file name for a constant's contents: its node name with characters that
// are unsafe in file names replaced, made unique among `taken`.
std::string bin_file_name(const std::string& node, std::set<std::string>& taken) {
  std::string base;
  for (char c : node) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  if (base.empty() || base[0] == '.') base = "_" + base;
  std::string name = base + ".bin";
  for (int i = 2; taken.count(name) != 0; ++i) name = fmt::format("{}.{}.bin", base, i);
  taken.insert(name);
  return name;
}

bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  fs::path pa = fs::weakly_canonical(a, ec1), pb = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && pa == pb;
}

}  // namespace

std::string Graph::to_dot() const { return dot_text(*this, {}); }

// Constants without a file get NAME.bin beside the DOT file. Constants whose
// relative file belongs to another directory (base_dir) are referenced by
// absolute path so the written DOT still finds them.
Status Graph::write_dot_file(const std::string& path) const {
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir.assign(1, '.');  // not = ".": GCC 12 -Wrestrict false positive in Release
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::IOError(fmt::format("cannot write DOT file '{}': directory '{}' does not exist", path, dir));
  }
  std::map<DataId, std::string> files;
  std::set<std::string> taken;
  const bool moved = !same_directory(dir, base_dir_);
  for (const DataNode& n : data_)
    if (!n.file.empty()) taken.insert(n.file);  // never overwrite a file another constant names
  for (DataId d = 0; d < data_.size(); ++d) {
    const DataNode& n = data_[d];
    if (n.kind != DataKind::kConstant) continue;
    if (n.file.empty()) {
      if (n.contents.size() != n.bytes) {
        return Status::InvalidGraph(fmt::format("node '{}': constant has no file and {} bytes of contents, but "
                                                "bytes={}; nothing consistent to write",
                                                n.name, n.contents.size(), n.bytes));
      }
      std::string name = bin_file_name(n.name, taken);
      std::string_view bytes(reinterpret_cast<const char*>(n.contents.data()), n.contents.size());
      REDFLOW_RETURN_IF_ERROR(write_file_atomically((fs::path(dir) / name).string(), bytes));
      files[d] = name;
    } else if (moved && fs::path(n.file).is_relative()) {
      files[d] = fs::absolute(fs::path(base_dir_) / n.file, ec).lexically_normal().string();
    }
  }
  return write_file_atomically(path, dot_text(*this, files));
}

}  // namespace redflow
