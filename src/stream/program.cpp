// Stream programs: the operator registry, building and validating a program,
// and its DOT form (include/redflow/stream.hpp, docs/streams.md).
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/cgraph_read.hpp"
#include "graph/dot_input.hpp"
#include "graph/suggest.hpp"
#include "redflow/stream.hpp"
#include "stream/builtin_operators.hpp"

namespace redflow::stream {

bool Operator::ready(const FiringContext& ctx) const {
  for (std::size_t i = 0; i < ctx.inputs(); ++i)
    if (ctx.available(i) == 0 && !ctx.drained(i)) return false;
  return true;
}

bool Operator::finished(const FiringContext& ctx) const {
  for (std::size_t i = 0; i < ctx.inputs(); ++i)
    if (ctx.drained(i)) return true;
  return false;
}

void OperatorRegistry::add(const std::string& name, OperatorFactory factory) { factories_[name] = std::move(factory); }

const OperatorFactory* OperatorRegistry::find(const std::string& name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> OperatorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories_) out.push_back(name);
  return out;
}

std::size_t Program::find(const std::string& name) const {
  for (std::size_t i = 0; i < instances_.size(); ++i)
    if (instances_[i].name == name) return i;
  return std::string::npos;
}

Status Program::add(const OperatorRegistry& registry, const std::string& name, const std::string& op, Args args) {
  if (registry_ != nullptr && registry_ != &registry) return Status::InvalidArgument("stream program: every operator must come from one registry");
  registry_ = &registry;
  if (name.empty()) return Status::InvalidArgument("stream program: an operator instance needs a name");
  if (find(name) != std::string::npos) return Status::InvalidArgument(fmt::format("stream program: operator '{}' is added twice", name));
  const OperatorFactory* f = registry.find(op);
  if (f == nullptr) {
    std::string known;
    for (const auto& n : registry.names()) known += (known.empty() ? "" : ", ") + n;
    const std::string best = nearest_name(op, registry.names());
    return Status::NotFound(fmt::format("stream program: operator '{}' names '{}', which is not registered{} (known: {})", name, op,
                                        best.empty() ? "" : " (did you mean '" + best + "'?)", known));
  }
  auto spec = f->spec(args);
  if (!spec.ok()) return Status::InvalidArgument(fmt::format("stream program: operator '{}' ({}): {}", name, op, spec.status().message()));
  instances_.push_back(Instance{name, op, std::move(args), std::move(*spec)});
  return Status::Ok();
}

Status Program::connect(const std::string& from, std::size_t from_port, const std::string& to, std::size_t to_port, std::size_t token_bytes) {
  const std::size_t a = find(from), b = find(to);
  if (a == std::string::npos) return Status::NotFound(fmt::format("stream program: a stream starts at '{}', which is no operator", from));
  if (b == std::string::npos) return Status::NotFound(fmt::format("stream program: a stream ends at '{}', which is no operator", to));
  if (token_bytes == 0 || token_bytes > (std::size_t{1} << 30))
    return Status::InvalidArgument(fmt::format("stream program: stream {} -> {}: token of {} bytes (1 byte to 1 GiB)", from, to, token_bytes));
  if (from_port >= instances_[a].spec.outputs)
    return Status::InvalidArgument(fmt::format("stream program: '{}' ({}) has {} outputs; no output port {}", from, instances_[a].op,
                                               instances_[a].spec.outputs, from_port));
  if (to_port >= instances_[b].spec.inputs)
    return Status::InvalidArgument(fmt::format("stream program: '{}' ({}) has {} inputs; no input port {}", to, instances_[b].op,
                                               instances_[b].spec.inputs, to_port));
  streams_.push_back(Stream{a, from_port, b, to_port, token_bytes});
  return Status::Ok();
}

Status Program::validate() const {
  if (instances_.empty()) return Status::InvalidArgument("stream program: no operators");
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& op = instances_[i];
    std::vector<int> in(op.spec.inputs, 0), out(op.spec.outputs, 0);
    for (const Stream& s : streams_) {
      if (s.to == i) ++in[s.to_port];
      if (s.from == i) ++out[s.from_port];
    }
    for (std::size_t p = 0; p < in.size(); ++p)
      if (in[p] != 1)
        return Status::InvalidGraph(fmt::format("stream program: input port {} of '{}' ({}) has {} streams (expected exactly 1){}", p, op.name,
                                                op.op, in[p], in[p] == 0 ? ": unconnected port" : ""));
    for (std::size_t p = 0; p < out.size(); ++p)
      if (out[p] != 1)
        return Status::InvalidGraph(fmt::format("stream program: output port {} of '{}' ({}) has {} streams (expected exactly 1; use a dup "
                                                "operator to fan out){}",
                                                p, op.name, op.op, out[p], out[p] == 0 ? ": unconnected port" : ""));
  }
  for (const Stream& s : streams_) {
    const Instance &a = instances_[s.from], &b = instances_[s.to];
    const std::size_t want_out = a.spec.output_bytes.size() > s.from_port ? a.spec.output_bytes[s.from_port] : 0;
    const std::size_t want_in = b.spec.input_bytes.size() > s.to_port ? b.spec.input_bytes[s.to_port] : 0;
    for (auto [want, who, port, dir] : {std::tuple{want_out, &a, s.from_port, "output"}, std::tuple{want_in, &b, s.to_port, "input"}})
      if (want != 0 && want != s.token_bytes)
        return Status::InvalidGraph(fmt::format("stream program: stream {} -> {} carries {}-byte tokens, but {} port {} of '{}' ({}) takes {}-byte tokens",
                                                a.name, b.name, s.token_bytes, dir, port, who->name, who->op, want));
  }
  // A "pass-through" port (0: any size) must agree with its operator's other ports: a dup's outputs take what its input brings.
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    std::size_t seen = 0;
    for (const Stream& s : streams_) {
      const bool any_in = s.to == i && instances_[i].spec.input_bytes.size() > s.to_port && instances_[i].spec.input_bytes[s.to_port] == 0;
      const bool any_out = s.from == i && instances_[i].spec.output_bytes.size() > s.from_port && instances_[i].spec.output_bytes[s.from_port] == 0;
      if (!any_in && !any_out) continue;
      if (seen != 0 && seen != s.token_bytes && instances_[i].spec.outputs > 0)
        return Status::InvalidGraph(fmt::format("stream program: '{}' ({}) passes tokens through unchanged, but its streams carry {} and {} bytes",
                                                instances_[i].name, instances_[i].op, seen, s.token_bytes));
      seen = s.token_bytes;
    }
  }
  return Status::Ok();
}

namespace {

Result<Args> parse_args(const std::string& text, const std::string& where) {
  Args args;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    const auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0) return Status::InvalidArgument(fmt::format("{}: args word '{}' is not KEY=VALUE", where, w));
    args[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return args;
}

Result<std::size_t> size_attr(void* obj, const char* name, std::size_t fallback, const std::string& where) {
  const std::string v = cgraph_attr(obj, name);
  if (v.empty()) return fallback;
  std::size_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) return Status::InvalidArgument(fmt::format("{}: {}=\"{}\" is not a non-negative integer", where, name, v));
  return n;
}

}  // namespace

Result<Program> Program::from_dot(std::string_view text, const OperatorRegistry& registry, std::string_view source) {
  Program program;
  Status read = with_cgraph(std::string(text), std::string(source), [&](Agraph_t* g) -> Status {
    if (!agisdirected(g)) return Status::InvalidGraph(fmt::format("{}: a stream program is a digraph", source));
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
      const std::string name = agnameof(n), where = fmt::format("{}: operator '{}'", source, name);
      const std::string op = cgraph_attr(n, "operator");
      if (op.empty()) return Status::InvalidGraph(where + ": no operator=NAME");
      auto args = parse_args(cgraph_attr(n, "args"), where);
      if (!args.ok()) return args.status();
      REDFLOW_RETURN_IF_ERROR(program.add(registry, name, op, std::move(*args)));
    }
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n))
      for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e)) {
        const std::string where = fmt::format("{}: stream {} -> {}", source, agnameof(agtail(e)), agnameof(aghead(e)));
        auto token = size_attr(e, "token", 0, where);
        auto from_port = size_attr(e, "from_port", 0, where);
        auto to_port = size_attr(e, "to_port", 0, where);
        for (const Status& s : {token.status(), from_port.status(), to_port.status()})
          if (!s.ok()) return s;
        if (*token == 0) return Status::InvalidGraph(where + ": no token=BYTES");
        REDFLOW_RETURN_IF_ERROR(program.connect(agnameof(agtail(e)), *from_port, agnameof(aghead(e)), *to_port, *token));
      }
    return Status::Ok();
  });
  if (!read.ok()) return read;
  REDFLOW_RETURN_IF_ERROR(program.validate());
  return program;
}

Result<Program> Program::from_dot_file(const std::string& path, const OperatorRegistry& registry) {
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec) REDFLOW_RETURN_IF_ERROR(dot::check_dot_size(size, path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(fmt::format("cannot open stream program '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  return from_dot(text.str(), registry, path);
}

}  // namespace redflow::stream
