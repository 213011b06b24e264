// Building graphs in C++ and the small queries every part needs.
#include "redflow/graph.hpp"
#include "redflow/redundancy.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>

namespace redflow {

std::string Status::ToString() const {
  const char* kind = "ok";
  switch (code_) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: kind = "invalid argument"; break;
    case Code::kNotFound: kind = "not found"; break;
    case Code::kIOError: kind = "I/O error"; break;
    case Code::kInvalidGraph: kind = "invalid graph"; break;
    case Code::kResourceExhausted: kind = "resource exhausted"; break;
    case Code::kInternal: kind = "internal error"; break;
    case Code::kActorFailed: kind = "user code error"; break;
    case Code::kDataLoss: kind = "data loss"; break;
    case Code::kGaveUp: kind = "gave up under faults"; break;
  }
  return std::string(kind) + ": " + message_;
}

void result_value_on_error(const Status& status) {
  std::fprintf(stderr, "redflow: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}

const char* to_string(DataKind kind) {
  switch (kind) {
    case DataKind::kInput: return "input";
    case DataKind::kOutput: return "output";
    case DataKind::kConstant: return "constant";
    case DataKind::kInner: return "inner";
  }
  return "?";
}

std::optional<DataKind> parse_data_kind(std::string_view text) {
  if (text == "input") return DataKind::kInput;
  if (text == "output") return DataKind::kOutput;
  if (text == "constant") return DataKind::kConstant;
  if (text == "inner") return DataKind::kInner;
  return std::nullopt;
}

ActorBuilder& ActorBuilder::work(double ops) {
  graph_->mutable_actor(id_).work = ops;
  return *this;
}

ActorBuilder& ActorBuilder::args(std::string args) {
  graph_->mutable_actor(id_).args = std::move(args);
  return *this;
}

ActorBuilder& ActorBuilder::redundancy(Redundancy r) {
  graph_->mutable_actor(id_).redundancy = r;
  return *this;
}

DataId Graph::add_data(DataNode node) {
  data_.push_back(std::move(node));
  return static_cast<DataId>(data_.size() - 1);
}

static DataNode make_data(std::string name, DataKind kind, std::size_t bytes) {
  DataNode n;
  n.name = std::move(name);
  n.kind = kind;
  n.bytes = bytes;
  return n;
}

DataId Graph::input(std::string name, std::size_t bytes) { return add_data(make_data(std::move(name), DataKind::kInput, bytes)); }
DataId Graph::output(std::string name, std::size_t bytes) { return add_data(make_data(std::move(name), DataKind::kOutput, bytes)); }
DataId Graph::inner(std::string name, std::size_t bytes) { return add_data(make_data(std::move(name), DataKind::kInner, bytes)); }

DataId Graph::constant(std::string name, std::vector<std::byte> contents) {
  DataNode n = make_data(std::move(name), DataKind::kConstant, contents.size());
  n.contents = std::move(contents);
  return add_data(std::move(n));
}

std::size_t ActorNode::distinct_inputs() const {
  std::vector<DataId> distinct = inputs.to_vector();
  std::sort(distinct.begin(), distinct.end());
  return static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
}

ActorId Graph::add_actor(ActorNode node) {
  const auto id = static_cast<ActorId>(actors_.size());
  for (std::uint32_t port = 0; port < node.inputs.size(); ++port) {
    if (node.inputs[port] < data_.size()) data_[node.inputs[port]].consumers.push_back({id, port});
  }
  for (DataId out : node.outputs) {
    if (out < data_.size()) data_[out].producers.push_back(id);
  }
  actors_.push_back(std::move(node));
  return id;
}

ActorBuilder Graph::actor(std::string name, std::string function, std::vector<DataId> inputs, DataId output) {
  ActorNode a;
  a.name = std::move(name);
  a.function = std::move(function);
  a.inputs = std::move(inputs);
  a.outputs = {output};
  return ActorBuilder(this, add_actor(std::move(a)));
}

std::optional<DataId> Graph::find_data(std::string_view name) const {
  for (DataId i = 0; i < data_.size(); ++i)
    if (data_[i].name == name) return i;
  return std::nullopt;
}

std::optional<ActorId> Graph::find_actor(std::string_view name) const {
  for (ActorId i = 0; i < actors_.size(); ++i)
    if (actors_[i].name == name) return i;
  return std::nullopt;
}

std::vector<ActorId> Graph::topological_order() const {
  // Kahn's algorithm on actors; an actor waits for one producer per input edge.
  std::vector<std::uint32_t> waiting(actors_.size(), 0);
  for (ActorId a = 0; a < actors_.size(); ++a)
    for (DataId d : actors_[a].inputs)
      if (d < data_.size()) waiting[a] += static_cast<std::uint32_t>(data_[d].producers.size());
  std::deque<ActorId> ready;
  for (ActorId a = 0; a < actors_.size(); ++a)
    if (waiting[a] == 0) ready.push_back(a);
  std::vector<ActorId> order;
  order.reserve(actors_.size());
  while (!ready.empty()) {
    ActorId a = ready.front();
    ready.pop_front();
    order.push_back(a);
    for (DataId out : actors_[a].outputs)
      for (const Consumer& c : data_[out].consumers)
        if (--waiting[c.actor] == 0) ready.push_back(c.actor);
  }
  return order;  // shorter than actors() when there is a cycle
}

}  // namespace redflow
