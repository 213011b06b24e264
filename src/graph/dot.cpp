// Extended DOT (docs/dot.md): reading a Graph with Graphviz cgraph and writing
// one back as DOT text. Reading checks what only the DOT form can get wrong
// (node kinds, numbers, ports, edge directions, constant files); the rest is
// left to Graph::validate_structure().
#include <fmt/format.h>
#include <graphviz/cgraph.h>
#include <sys/stat.h>  // fchmod
#include <unistd.h>    // mkstemp, write, fsync, rename

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string_view>

#include "graph/dot_attributes.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// cgraph plumbing. cgraph keeps its parser state, input file name and error
// callback in globals, so every use of it is serialised by one mutex.

std::mutex& cgraph_mutex() {
  static std::mutex mu;
  return mu;
}

// Where the error callback appends; only touched with cgraph_mutex() held.
std::string* g_cgraph_messages = nullptr;

int collect_cgraph_message(char* msg) {
  if (g_cgraph_messages != nullptr && msg != nullptr) g_cgraph_messages->append(msg);
  return 0;
}

// Holds the cgraph lock for one parse and captures cgraph's messages (which
// it would otherwise print on stderr) instead of letting them escape.
class CgraphSession {
 public:
  explicit CgraphSession(const std::string& input_name) : lock_(cgraph_mutex()), input_name_(input_name) {
    g_cgraph_messages = &messages_;
    previous_ = agseterrf(collect_cgraph_message);
    // Names the input in syntax errors and resets cgraph's line counter.
    agsetfile(input_name_.data());
  }
  ~CgraphSession() {
    agsetfile(nullptr);  // cgraph would keep pointing at input_name_
    agseterrf(previous_);
    g_cgraph_messages = nullptr;
  }
  CgraphSession(const CgraphSession&) = delete;
  CgraphSession& operator=(const CgraphSession&) = delete;

  // cgraph's messages as one line, without its "Error: " prefixes.
  std::string messages() const {
    std::string out;
    std::string_view rest = messages_;
    while (!rest.empty()) {
      std::size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      for (std::string_view prefix : {"Error: ", "Warning: "})
        if (line.starts_with(prefix)) line.remove_prefix(prefix.size());
      if (line.empty()) continue;
      if (!out.empty()) out += "; ";
      out += line;
    }
    return out.empty() ? "no graph found in the input" : out;
  }

 private:
  std::lock_guard<std::mutex> lock_;
  std::string input_name_;  // agsetfile keeps the pointer, so it lives here
  std::string messages_;
  agusererrf previous_ = nullptr;
};

// Closes a cgraph graph when it goes out of scope.
struct AgraphCloser {
  void operator()(Agraph_t* g) const {
    if (g != nullptr) agclose(g);
  }
};
using AgraphPtr = std::unique_ptr<Agraph_t, AgraphCloser>;

// An attribute's value; "" when the graph declares it but this object does
// not set it, and when nothing in the graph declares it.
std::string attr(void* obj, const char* name) {
  const char* v = agget(obj, const_cast<char*>(name));
  return v == nullptr ? std::string() : std::string(v);
}

// ---------------------------------------------------------------------------
// Numbers.

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// A finite, non-negative double; accepts 8e9 and 1.5e6 as well as 42.
std::optional<double> parse_work(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::string format_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
  return ec == std::errc() ? std::string(buf, end) : fmt::format("{}", v);
}

// ---------------------------------------------------------------------------
// Reading.

// The attributes redflow interprets; everything else on a node goes to `extra`.
constexpr std::string_view kDataAttrs[] = {"kind", "bytes", "file", "type"};
constexpr std::string_view kActorAttrs[] = {"actor", "args", "work", "redundancy"};

bool is_one_of(std::string_view name, std::span<const std::string_view> set) {
  for (std::string_view s : set)
    if (s == name) return true;
  return false;
}

// State of one DOT parse: the cgraph graph, where its relative paths start,
// and a prefix naming the DOT file in messages.
class DotReader {
 public:
  DotReader(Agraph_t* g, std::string base_dir, std::string where)
      : g_(g), base_dir_(std::move(base_dir)), where_(std::move(where)) {}

  Result<Graph> read();

 private:
  Status error(const std::string& msg) const { return Status::InvalidGraph(where_ + msg); }
  Status node_error(std::string_view node, const std::string& msg) const {
    return error(fmt::format("node '{}': {}", node, msg));
  }

  Status read_nodes();
  Status read_data_node(Agnode_t* n, const std::string& kind_text);
  Status read_actor_node(Agnode_t* n);
  Status load_constant(DataNode& node) const;
  std::map<std::string, std::string> extra_attrs(Agnode_t* n, std::span<const std::string_view> known,
                                                 std::span<const std::string_view> misplaced,
                                                 std::string* misplaced_name) const;
  Status read_edges();
  Status read_edge(Agedge_t* e);
  Status check_ports();

  Agraph_t* g_;
  std::string base_dir_;
  std::string where_;
  Graph graph_;
  std::map<std::string, DataId, std::less<>> data_ids_;
  std::map<std::string, std::size_t, std::less<>> actor_index_;  // into actors_
  std::vector<ActorNode> actors_;
  // Per actor: input port -> data node, as the edges give them.
  std::vector<std::map<std::uint32_t, DataId>> ports_;
};

Result<Graph> DotReader::read() {
  if (!agisdirected(g_)) {
    return error(fmt::format("graph '{}' is undirected; redflow graphs are written 'digraph NAME {{ ... }}'",
                             agnameof(g_)));
  }
  const char* name = agnameof(g_);
  // cgraph names an anonymous graph "%N"; keep redflow's default then.
  if (name != nullptr && name[0] != '%') graph_.set_name(name);
  graph_.set_base_dir(base_dir_);
  REDFLOW_RETURN_IF_ERROR(read_nodes());
  REDFLOW_RETURN_IF_ERROR(read_edges());
  REDFLOW_RETURN_IF_ERROR(check_ports());
  for (ActorNode& actor : actors_) graph_.add_actor(std::move(actor));
  return std::move(graph_);
}

// Data nodes are added to the Graph as they come; actors wait until their
// edges are known because add_actor() links producers and consumers.
Status DotReader::read_nodes() {
  for (Agnode_t* n = agfstnode(g_); n != nullptr; n = agnxtnode(g_, n)) {
    const std::string name = agnameof(n);
    const std::string actor = attr(n, "actor");
    const std::string kind = attr(n, "kind");
    if (!actor.empty() && !kind.empty()) {
      return node_error(name, fmt::format("has both actor=\"{}\" and kind={}; a node is either an actor or a data node",
                                          actor, kind));
    }
    if (!actor.empty()) {
      REDFLOW_RETURN_IF_ERROR(read_actor_node(n));
    } else if (!kind.empty()) {
      REDFLOW_RETURN_IF_ERROR(read_data_node(n, kind));
    } else {
      return node_error(name, "has neither actor=\"FUNCTION\" (an actor) nor kind=input|output|constant|inner "
                              "(a data node)");
    }
  }
  return Status::Ok();
}

// Node attributes outside `known`. A non-empty one in `misplaced` (an actor
// attribute on a data node, or the other way round) is reported instead.
std::map<std::string, std::string> DotReader::extra_attrs(Agnode_t* n, std::span<const std::string_view> known,
                                                          std::span<const std::string_view> misplaced,
                                                          std::string* misplaced_name) const {
  std::map<std::string, std::string> extra;
  for (Agsym_t* sym = agnxtattr(g_, AGNODE, nullptr); sym != nullptr; sym = agnxtattr(g_, AGNODE, sym)) {
    std::string_view key = sym->name;
    if (is_one_of(key, known)) continue;
    const char* value = agxget(n, sym);
    if (value == nullptr || value[0] == '\0') continue;
    if (is_one_of(key, misplaced)) {
      if (misplaced_name->empty()) *misplaced_name = std::string(key);
      continue;
    }
    extra.emplace(std::string(key), value);
  }
  return extra;
}

Status DotReader::read_data_node(Agnode_t* n, const std::string& kind_text) {
  DataNode node;
  node.name = agnameof(n);
  std::optional<DataKind> kind = parse_data_kind(kind_text);
  if (!kind) {
    return node_error(node.name, fmt::format("kind={} is not one of input, output, constant, inner", kind_text));
  }
  node.kind = *kind;
  const std::string bytes = attr(n, "bytes");
  if (bytes.empty()) return node_error(node.name, "data node has no bytes= attribute (its size in bytes)");
  std::optional<std::uint64_t> size = parse_u64(bytes);
  if (!size) {
    return node_error(node.name, fmt::format("bytes=\"{}\" is not a non-negative integer number of bytes", bytes));
  }
  node.bytes = *size;
  REDFLOW_RETURN_IF_ERROR(read_element_type(where_, node, attr(n, "type")));
  node.file = attr(n, "file");
  if (node.kind == DataKind::kConstant && node.file.empty()) {
    return node_error(node.name, "constant has no file=\"PATH\" attribute holding its bytes");
  }
  if (node.kind != DataKind::kConstant && !node.file.empty()) {
    return node_error(node.name, fmt::format("file=\"{}\" is only allowed on constants, but kind={}", node.file,
                                             kind_text));
  }
  std::string misplaced;
  node.extra = extra_attrs(n, kDataAttrs, kActorAttrs, &misplaced);
  if (!misplaced.empty()) {
    return node_error(node.name, fmt::format("{}= is an actor attribute, but this is a data node (kind={})",
                                             misplaced, kind_text));
  }
  REDFLOW_RETURN_IF_ERROR(check_node_attributes(where_, node.name, node.extra, kDataAttrs));
  if (node.kind == DataKind::kConstant) REDFLOW_RETURN_IF_ERROR(load_constant(node));
  std::string name = node.name;  // add_data() takes the node
  data_ids_.emplace(std::move(name), graph_.add_data(std::move(node)));
  return Status::Ok();
}

// Reads a constant's file (relative to the DOT file's directory), which must
// hold exactly `bytes` bytes.
Status DotReader::load_constant(DataNode& node) const {
  fs::path path = node.file;
  if (path.is_relative()) path = fs::path(base_dir_) / path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IOError(where_ + fmt::format("node '{}': cannot open constant file '{}': {}", node.name,
                                                path.string(), std::strerror(errno)));
  }
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    return Status::IOError(where_ + fmt::format("node '{}': cannot read constant file '{}': {}", node.name,
                                                path.string(), ec.message()));
  }
  if (size != node.bytes) {
    return node_error(node.name, fmt::format("constant file '{}' holds {} bytes, but the node declares bytes={}",
                                             path.string(), size, node.bytes));
  }
  node.contents.resize(node.bytes);
  if (node.bytes > 0 && !in.read(reinterpret_cast<char*>(node.contents.data()),
                                 static_cast<std::streamsize>(node.bytes))) {
    return Status::IOError(where_ + fmt::format("node '{}': short read from constant file '{}'", node.name,
                                                path.string()));
  }
  return Status::Ok();
}

Status DotReader::read_actor_node(Agnode_t* n) {
  ActorNode node;
  node.name = agnameof(n);
  node.function = attr(n, "actor");
  node.args = attr(n, "args");
  const std::string work = attr(n, "work");
  if (!work.empty()) {
    std::optional<double> w = parse_work(work);
    if (!w) return node_error(node.name, fmt::format("work=\"{}\" is not a non-negative number (e.g. 8e9)", work));
    node.work = *w;
  }
  if (const std::string r = attr(n, "redundancy"); !r.empty()) {
    node.redundancy = parse_redundancy(r);
    if (!node.redundancy)
      return node_error(node.name, fmt::format("redundancy=\"{}\" is not one of none, 2x-same, 3x-same, 2x-diff, 3x-diff", r));
  }
  std::string misplaced;
  node.extra = extra_attrs(n, kActorAttrs, kDataAttrs, &misplaced);
  if (!misplaced.empty()) {
    return node_error(node.name, fmt::format("{}= is a data node attribute, but this is an actor (actor=\"{}\")",
                                             misplaced, node.function));
  }
  REDFLOW_RETURN_IF_ERROR(check_node_attributes(where_, node.name, node.extra, kActorAttrs));
  actor_index_.emplace(node.name, actors_.size());
  actors_.push_back(std::move(node));
  ports_.emplace_back();
  return Status::Ok();
}

Status DotReader::read_edges() {
  for (Agnode_t* n = agfstnode(g_); n != nullptr; n = agnxtnode(g_, n))
    for (Agedge_t* e = agfstout(g_, n); e != nullptr; e = agnxtout(g_, e)) REDFLOW_RETURN_IF_ERROR(read_edge(e));
  return Status::Ok();
}

// data -> actor carries port=I; actor -> data carries none.
Status DotReader::read_edge(Agedge_t* e) {
  const std::string tail = agnameof(agtail(e));
  const std::string head = agnameof(aghead(e));
  const std::string port = attr(e, "port");
  auto tail_data = data_ids_.find(tail);
  auto head_data = data_ids_.find(head);
  const bool tail_is_data = tail_data != data_ids_.end();
  const bool head_is_data = head_data != data_ids_.end();
  if (tail_is_data == head_is_data) {
    return error(fmt::format("edge '{}' -> '{}' connects two {}; edges go from a data node to an actor or from an "
                             "actor to a data node",
                             tail, head, tail_is_data ? "data nodes" : "actors"));
  }
  if (!tail_is_data) {  // actor -> data: the actor's output
    if (!port.empty()) {
      return error(fmt::format("edge '{}' -> '{}': port= belongs on edges into an actor, not on its output edge",
                               tail, head));
    }
    actors_[actor_index_.find(tail)->second].outputs.push_back(head_data->second);
    return Status::Ok();
  }
  const std::size_t a = actor_index_.find(head)->second;
  if (port.empty()) {
    return error(fmt::format("actor '{}': edge from '{}' has no port= attribute (the 0-based input port)", head, tail));
  }
  std::optional<std::uint64_t> p = parse_u64(port);
  if (!p || *p > UINT32_MAX) {
    return error(fmt::format("actor '{}': edge from '{}' has port=\"{}\", not a non-negative integer", head, tail,
                             port));
  }
  auto [it, inserted] = ports_[a].emplace(static_cast<std::uint32_t>(*p), tail_data->second);
  if (!inserted) {
    return error(fmt::format("actor '{}': input port {} is given twice (by '{}' and '{}')", head, *p,
                             graph_.data(it->second).name, tail));
  }
  return Status::Ok();
}

// Ports must be exactly 0..k-1, and every actor needs one output.
Status DotReader::check_ports() {
  for (std::size_t a = 0; a < actors_.size(); ++a) {
    ActorNode& actor = actors_[a];
    const auto& ports = ports_[a];
    std::uint32_t expected = 0;
    for (const auto& [port, data] : ports) {
      if (port != expected) {
        return error(fmt::format("actor '{}': input port {} has no edge, but port {} has one (ports must be 0..{})",
                                 actor.name, expected, port, ports.size() - 1));
      }
      actor.inputs.push_back(data);
      ++expected;
    }
    if (actor.outputs.size() != 1) {
      std::string names;
      for (DataId d : actor.outputs) names += (names.empty() ? "" : ", ") + graph_.data(d).name;
      return error(fmt::format("actor '{}' has {} output data nodes{} (expected exactly 1)", actor.name,
                               actor.outputs.size(), names.empty() ? "" : " (" + names + ")"));
    }
  }
  return Status::Ok();
}

// Length of an unquoted number with an exponent ("8e9", "1.5E-3") at the
// start of `s`, ending at a DOT delimiter; 0 if there is none.
std::size_t exponent_number_length(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  bool mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa = digits() || mantissa;
  }
  if (!mantissa || i >= s.size() || (s[i] != 'e' && s[i] != 'E')) return 0;
  ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (!digits()) return 0;
  if (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && std::strchr(",;]}", s[i]) == nullptr) return 0;
  return i;
}

// DOT's lexer has no exponents: it splits work=8e9 into "8e" and "9" and
// fails. Quote such values (outside strings and comments) so that the
// natural spelling of a cost hint works; the quotes add no lines.
std::string quote_exponent_numbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  auto copy_until = [&](std::string_view end) {
    std::size_t stop = text.find(end, i);
    stop = stop == std::string_view::npos ? text.size() : stop + end.size();
    out.append(text.substr(i, stop - i));
    i = stop;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {  // quoted string; \" does not end it
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == '<') {  // HTML string: nested <...>
      int depth = 0;
      std::size_t j = i;
      for (; j < text.size(); ++j) {
        depth += text[j] == '<' ? 1 : text[j] == '>' ? -1 : 0;
        if (depth == 0) break;
      }
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (text.substr(i, 2) == "//" || (c == '#' && (i == 0 || text[i - 1] == '\n'))) {
      copy_until("\n");
    } else if (text.substr(i, 2) == "/*") {
      copy_until("*/");
    } else if (c == '=') {
      out += c;
      ++i;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) out += text[i++];
      if (std::size_t n = exponent_number_length(text.substr(i)); n > 0) {
        out += '"';
        out.append(text.substr(i, n));
        out += '"';
        i += n;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// Parses `text` with cgraph under the lock.
Result<Graph> parse_dot(const std::string& text, const std::string& input_name, const std::string& base_dir,
                        const std::string& where) {
  const std::string prepared = quote_exponent_numbers(text);
  CgraphSession session(input_name);
  AgraphPtr g(agmemread(prepared.c_str()));
  if (!g) return Status::InvalidGraph(fmt::format("cannot parse DOT: {}{}", session.messages(), dot_syntax_hint(session.messages())));
  return DotReader(g.get(), base_dir, where).read();
}

// ---------------------------------------------------------------------------
// Writing.

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
    append_extra(out, n.extra);
    out += "];\n";
  }
  for (const ActorNode& a : g.actors()) {
    out += "  " + quote(a.name) + " [actor=" + quote(a.function);
    if (!a.args.empty()) out += ", args=" + quote(a.args);
    if (a.work != 0) out += ", work=" + quote(format_double(a.work));
    if (a.redundancy) out += ", redundancy=" + quote(to_string(*a.redundancy));
    append_extra(out, a.extra);
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

Status errno_error(const std::string& what, const std::string& path) {
  return Status::IOError(fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

// Writes `bytes` to a temporary file beside `path` and renames it over
// `path`, so readers see the old file or the new one, never half of one.
Status write_file_atomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return errno_error("cannot create a file beside", path);
  auto fail = [&](const char* what) {
    Status s = errno_error(what, path);
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
    Status s = errno_error("cannot close", path);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = errno_error("cannot rename a temporary file to", path);
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

Result<Graph> Graph::from_dot_string(const std::string& text, const std::string& base_dir) {
  return parse_dot(text, "<string>", base_dir, "");
}

Result<Graph> Graph::from_dot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("cannot open DOT file", path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return errno_error("cannot read DOT file", path);
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return parse_dot(text, path, dir, path + ": ");
}

std::string Graph::to_dot() const { return dot_text(*this, {}); }

// Constants without a file get NAME.bin beside the DOT file. Constants whose
// relative file belongs to another directory (base_dir) are referenced by
// absolute path so the written DOT still finds them.
Status Graph::write_dot_file(const std::string& path) const {
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
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
