// Graph: a coarse-grain dataflow program as in Kühbacher et al. (SAC'22): a
// bipartite DAG of actor nodes and data nodes. Every actor has ordered inputs
// (ports) and exactly one output data node; every byte an actor touches is
// declared by a data node, so the runtime knows memory needs before it runs.
// A Graph may be built invalid (e.g. parsed from a bad DOT file); validate()
// says what is wrong, naming the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redflow/attributes.hpp"
#include "redflow/huge_page_allocator.hpp"
#include "redflow/small_vector.hpp"
#include "redflow/status.hpp"

namespace redflow {

using DataId = std::uint32_t;
using ActorId = std::uint32_t;

enum class Redundancy : std::uint8_t;  // redflow/redundancy.hpp

enum class DataKind : std::uint8_t { kInput, kOutput, kConstant, kInner };
const char* to_string(DataKind kind);
std::optional<DataKind> parse_data_kind(std::string_view text);

// The element type of a data node's bytes (DOT `type=f64`): used to print
// it, to read and write it as NumPy .npy, and to check its size. kNone: raw
// bytes (printed as int32, as before types existed).
enum class ElementType : std::uint8_t { kNone, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kF32, kF64 };
// "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64" ("" for kNone).
const char* to_string(ElementType type);
std::optional<ElementType> parse_element_type(std::string_view text);
std::size_t element_size(ElementType type);  // bytes per element; 1 for kNone

// One edge from a data node into an actor's input port.
struct Consumer {
  ActorId actor;
  std::uint32_t port;
};

struct DataNode {
  std::string name;
  std::size_t bytes = 0;
  DataKind kind = DataKind::kInner;
  ElementType type = ElementType::kNone;  // optional; bytes must be a whole number of elements
  std::string file;                  // constant: path as written (relative to Graph::base_dir)
  std::vector<std::byte> contents;   // constant: its bytes, once loaded
  SmallVector<ActorId> producers;    // valid graphs: none (input/constant) or exactly one
  SmallVector<Consumer> consumers;   // one entry per edge, so a node read twice appears twice
  Attributes extra;                  // DOT attributes redflow does not interpret, kept for round trips
};

struct ActorNode {
  std::string name;
  std::string function;              // name in the Registry
  std::string args;                  // handed to the function verbatim
  double work = 0;                   // cost hint (operations); 0 = estimate from bytes touched
  SmallVector<DataId> inputs;        // index = port
  SmallVector<DataId> outputs;       // valid graphs: exactly one
  std::optional<Redundancy> redundancy;  // overrides the graph's configuration for this actor
  Attributes extra;

  // Data nodes it reads, a node read on several ports counted once: the
  // slots its inputs take on a tile (a slot holds one data node).
  std::size_t distinct_inputs() const;
};

class Graph;

// Fluent setter for the optional parts of an actor: g.actor(...).work(1e9).args("offset=0").
class ActorBuilder {
 public:
  ActorBuilder(Graph* graph, ActorId id) : graph_(graph), id_(id) {}
  ActorBuilder& work(double ops);
  ActorBuilder& args(std::string args);
  ActorBuilder& redundancy(Redundancy r);
  ActorId id() const { return id_; }
  operator ActorId() const { return id_; }  // NOLINT: lets builders be stored as ids

 private:
  Graph* graph_;
  ActorId id_;
};

class Graph {
 public:
  explicit Graph(std::string name = "redflow") : name_(std::move(name)) {}

  // Data nodes. Names are unique across data nodes and actors (DOT has one namespace).
  DataId input(std::string name, std::size_t bytes);
  DataId output(std::string name, std::size_t bytes);
  DataId inner(std::string name, std::size_t bytes);
  DataId constant(std::string name, std::vector<std::byte> contents);
  // Adds a data node of any kind as given (used by parsers and transformations).
  DataId add_data(DataNode node);

  // An actor computing `output` from `inputs` (port i = inputs[i]) with the
  // registered function `function`.
  ActorBuilder actor(std::string name, std::string function, std::vector<DataId> inputs, DataId output);
  // Adds an actor as given; links producers/consumers of the data nodes it names.
  ActorId add_actor(ActorNode node);

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Directory that relative constant file paths are resolved against.
  const std::string& base_dir() const { return base_dir_; }
  void set_base_dir(std::string dir) { base_dir_ = std::move(dir); }

  std::span<const DataNode> data() const { return data_; }
  std::span<const ActorNode> actors() const { return actors_; }
  const DataNode& data(DataId id) const { return data_[id]; }
  const ActorNode& actor(ActorId id) const { return actors_[id]; }
  DataNode& mutable_data(DataId id) { return data_[id]; }
  ActorNode& mutable_actor(ActorId id) { return actors_[id]; }
  std::optional<DataId> find_data(std::string_view name) const;
  std::optional<ActorId> find_actor(std::string_view name) const;

  // Structural checks that need no registry: unique names, bipartite shape,
  // one output per actor, one producer per inner/output node, none for
  // input/constant, constants whose contents match `bytes`, no cycles.
  Status validate_structure() const;

  // Actors in an order where every producer precedes its consumers. Only
  // meaningful after validate_structure() succeeded.
  std::vector<ActorId> topological_order() const;

  // Extended DOT (docs/dot.md). Reading loads constant files relative to the
  // DOT file and checks their sizes; it does not need a registry.
  static Result<Graph> from_dot_file(const std::string& path);
  static Result<Graph> from_dot_string(const std::string& text, const std::string& base_dir = ".");
  // Writes DOT text. Constants keep their `file` attribute; a constant built in
  // C++ without a file is written inline-free by write_dot_file as NAME.bin
  // beside the DOT file.
  std::string to_dot() const;
  // Writes atomically (temporary file + rename): never leaves a half-written file.
  Status write_dot_file(const std::string& path) const;

 private:
  std::string name_;
  std::string base_dir_ = ".";
  std::vector<DataNode, HugePageAllocator<DataNode>> data_;
  std::vector<ActorNode, HugePageAllocator<ActorNode>> actors_;
};

}  // namespace redflow
