// A stream program written down once and given both ways: built through the
// C++ API (Program::add/connect) or printed in the DOT form Program::from_dot
// reads. The applications (wavelet.hpp, compute_heavy.hpp) describe their
// graph as a plan so the two forms cannot drift apart.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "redflow/stream.hpp"

namespace redflow::stream::apps {

struct ProgramPlan {
  struct Node {
    std::string name, op;
    Args args;
  };
  struct Edge {
    std::string from;
    std::size_t from_port;
    std::string to;
    std::size_t to_port;
    std::size_t token_bytes;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  void node(std::string name, std::string op, Args args = {}) { nodes.push_back(Node{std::move(name), std::move(op), std::move(args)}); }
  void edge(const std::string& from, std::size_t from_port, const std::string& to, std::size_t to_port, std::size_t bytes) {
    edges.push_back(Edge{from, from_port, to, to_port, bytes});
  }

  Result<Program> build(const OperatorRegistry& reg) const {
    Program p;
    for (const Node& n : nodes) REDFLOW_RETURN_IF_ERROR(p.add(reg, n.name, n.op, n.args));
    for (const Edge& e : edges) REDFLOW_RETURN_IF_ERROR(p.connect(e.from, e.from_port, e.to, e.to_port, e.token_bytes));
    REDFLOW_RETURN_IF_ERROR(p.validate());
    return p;
  }

  // `comment` lines are printed as // comments above the digraph.
  std::string dot(const std::string& graph, const std::string& comment) const {
    std::ostringstream out;
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) out << "// " << line << "\n";
    out << "digraph " << graph << " {\n";
    for (const Node& n : nodes) {
      out << "  " << n.name << " [operator=\"" << n.op << "\"";
      if (!n.args.empty()) {
        std::string words;
        for (const auto& [k, v] : n.args) words += (words.empty() ? "" : " ") + k + "=" + v;
        out << ", args=\"" << words << "\"";
      }
      out << "];\n";
    }
    for (const Edge& e : edges)
      out << "  " << e.from << " -> " << e.to << " [token=" << e.token_bytes << ", from_port=" << e.from_port << ", to_port=" << e.to_port << "];\n";
    out << "}\n";
    return out.str();
  }
};

}  // namespace redflow::stream::apps
