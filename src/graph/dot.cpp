// Extended DOT (docs/dot.md), reading: a Graph from DOT text with Graphviz
// cgraph. Reading checks what only the DOT form can get wrong (node kinds,
// numbers, ports, edge directions, constant files); the rest is left to
// Graph::validate_structure(). The text is checked against redflow's limits
// first (dot_input.cpp); writing lives in dot_write.cpp.
#include <fmt/format.h>
#include <graphviz/cgraph.h>

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
#include <span>
#include <string_view>

#include "graph/cgraph_read.hpp"
#include "graph/dot_attributes.hpp"
#include "graph/dot_input.hpp"
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"

// cgraph's flex lexer, exported but not declared in cgraph.h: frees the
// lexer's buffer and resets its start condition (inside a string, an HTML
// string or a comment) so that the next parse starts clean.
extern "C" int aaglex_destroy(void);

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
// it would otherwise print on stderr) instead of letting them escape. Each
// session starts and leaves cgraph's lexer and error count clean: the lexer
// otherwise keeps unread input and its state between parses, so one bad
// input would break every later parse in the process.
class CgraphSession {
 public:
  explicit CgraphSession(const std::string& input_name) : lock_(cgraph_mutex()), input_name_(input_name) {
    g_cgraph_messages = &messages_;
    previous_ = agseterrf(collect_cgraph_message);
    // Names the input in syntax errors and resets cgraph's line counter.
    agsetfile(input_name_.data());
    aaglex_destroy();
    agreseterrors();
  }
  ~CgraphSession() {
    aaglex_destroy();
    agreseterrors();
    agsetfile(nullptr);  // cgraph would keep pointing at input_name_
    agseterrf(previous_);
    g_cgraph_messages = nullptr;
  }
  CgraphSession(const CgraphSession&) = delete;
  CgraphSession& operator=(const CgraphSession&) = delete;

  // True if cgraph reported an error during the session. It can do so and
  // still return a graph: when its parser stack overflows ("memory
  // exhausted") it returns what it had read so far.
  bool had_error() const { return agerrors() > 0; }

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
  REDFLOW_RETURN_IF_ERROR(check_node_attributes(where_, node.name, node.extra.map(), kDataAttrs));
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
  REDFLOW_RETURN_IF_ERROR(check_node_attributes(where_, node.name, node.extra.map(), kActorAttrs));
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

// Parses `text` with cgraph under the lock.
Result<Graph> parse_dot(const std::string& text, const std::string& input_name, const std::string& base_dir,
                        const std::string& where) {
  Result<Graph> out = Status::Internal("DOT not read");
  Status parsed = with_cgraph(text, input_name, [&](Agraph_t* g) {
    out = DotReader(g, base_dir, where).read();
    return Status::Ok();
  });
  if (!parsed.ok()) return parsed;
  return out;
}

}  // namespace

Status with_cgraph(const std::string& text, const std::string& input_name, const std::function<Status(Agraph_t*)>& read) {
  REDFLOW_RETURN_IF_ERROR(dot::check_dot_input(text, input_name));
  const std::string prepared = dot::quote_exponent_numbers(text);
  CgraphSession session(input_name);
  AgraphPtr g(agmemread(prepared.c_str()));
  if (!g || session.had_error())
    return Status::InvalidGraph(fmt::format("cannot parse DOT: {}{}", session.messages(), dot_syntax_hint(session.messages())));
  return read(g.get());
}

std::string cgraph_attr(void* obj, const char* name) { return attr(obj, name); }

Result<Graph> Graph::from_dot_string(const std::string& text, const std::string& base_dir) {
  return parse_dot(text, "<string>", base_dir, "");
}

Result<Graph> Graph::from_dot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return dot::errno_error("cannot open DOT file", path);
  std::error_code ec;  // not a regular file: its size shows once it is read
  if (const std::uintmax_t size = fs::file_size(path, ec); !ec) REDFLOW_RETURN_IF_ERROR(dot::check_dot_size(size, path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return dot::errno_error("cannot read DOT file", path);
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir.assign(1, '.');  // not = ".": GCC 12 -Wrestrict false positive in Release
  return parse_dot(text, path, dir, path + ": ");
}

}  // namespace redflow
