// Stream programs the SCORE way (docs/streams.md): operators with state,
// connected by FIFO streams of fixed-size tokens, running forever or until
// end of stream. A Kahn process network: streams are unbounded, writes never
// block, and an operator fires only when its firing rule holds (by default:
// a token waits on every input), which is how a blocking read is expressed
// without tying a thread to each operator. Cycles are allowed.
//
//   redflow::stream::OperatorRegistry reg = redflow::stream::OperatorRegistry::with_builtins();
//   auto program = redflow::stream::Program::from_dot_file("pipeline.dot", reg);   // or Program p; p.add(...); p.connect(...)
//   auto result = redflow::stream::run(*program, {.mode = redflow::stream::Mode::kPool, .threads = 2});
//   result->outputs["sink"];   // the tokens a `collect` operator gathered: redflow::Bytes
//
// An operator is a class: fire() reads what it needs from its inputs and
// writes to its outputs. End of stream propagates: an operator that can never
// fire again (by default: an input closed and drained) is finished (finish()
// runs once, then its outputs close); a source (no inputs) says when it is done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "redflow/bytes.hpp"
#include "redflow/cluster.hpp"
#include "redflow/status.hpp"

namespace redflow::stream {

class FiringContext;

// An operator's state as bytes, for checkpoints (Operator::snapshot and
// restore; docs/streams.md, "When a node is lost"): values and vectors of
// trivially copyable types and strings, read back in the order written.
class StateWriter {
 public:
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(&v, sizeof v);
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value<std::uint64_t>(v.size());
    raw(v.data(), v.size() * sizeof(T));
  }
  void text(const std::string& s) {
    value<std::uint64_t>(s.size());
    raw(s.data(), s.size());
  }
  std::vector<std::byte> bytes;
};
// Reads what a StateWriter wrote. Reading past the end throws, so a restore
// from state that does not fit fails with an error naming the operator.
class StateReader {
 public:
  explicit StateReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  void raw(void* p, std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("its saved state ends early (" + std::to_string(n) + " bytes wanted, " + std::to_string(bytes_.size() - at_) + " left)");
    if (n) std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
  }
  template <typename T>
  void value(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(&v, sizeof v);
  }
  template <typename T>
  void values(std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::uint64_t n = 0;
    value(n);
    if (n > (bytes_.size() - at_) / sizeof(T)) throw std::runtime_error("its saved state holds a vector longer than the bytes left");
    v.resize(n);
    raw(v.data(), n * sizeof(T));
  }
  void text(std::string& s) {
    std::uint64_t n = 0;
    value(n);
    if (n > bytes_.size() - at_) throw std::runtime_error("its saved state holds a string longer than the bytes left");
    s.resize(n);
    raw(s.data(), n);
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

// What fire() says about the operator afterwards.
enum class Fired { kMore, kDone };

class Operator {
 public:
  virtual ~Operator() = default;
  // Called when ready() holds (sources: whenever it is not done). Consumes
  // tokens with ctx.read/try_read and produces with ctx.write.
  virtual Fired fire(FiringContext& ctx) = 0;
  // The firing rule. Default: every input has a token, or is closed and
  // drained (then fire() sees try_read fail on it).
  virtual bool ready(const FiringContext& ctx) const;
  // Once, before anything fires: e.g. the initial tokens of a cycle.
  virtual void start(FiringContext& /*ctx*/) {}
  // Whether it can never fire again. Default: an input is closed and drained
  // (the default rule needs a token on every input), or, for a source, never
  // (it says kDone). An operator with its own ready() may override this.
  virtual bool finished(const FiringContext& ctx) const;
  // Once, when finished, before its outputs close: e.g. a final token.
  virtual void finish(FiringContext& /*ctx*/) {}
  // Checkpoints, for an operator whose spec says `checkpointable`: the state
  // its next firings depend on (counters, partial sums, buffered rows; not
  // scratch space), written between firings; and the same state put back
  // into a fresh instance, which then goes on from there (start() is not
  // called on a restored operator). A stateless operator keeps both defaults.
  virtual void snapshot(StateWriter& /*out*/) const {}
  virtual void restore(StateReader& /*in*/) {}
};

// An operator's view of its streams while it fires.
class FiringContext {
 public:
  virtual ~FiringContext() = default;
  virtual std::size_t inputs() const = 0;
  virtual std::size_t outputs() const = 0;
  virtual std::size_t token_bytes(std::size_t input) const = 0;
  // Tokens waiting on `input` now (the producer may add more meanwhile).
  virtual std::size_t available(std::size_t input) const = 0;
  // Closed by its producer and empty: no token will ever come.
  virtual bool drained(std::size_t input) const = 0;
  // Copies the next token of `input` into `token` (token_bytes bytes); false
  // when none is waiting.
  virtual bool try_read(std::size_t input, void* token) = 0;
  // Appends a token (the output's token_bytes bytes) to `output`; never blocks.
  virtual void write(std::size_t output, const void* token) = 0;
  // Many at once: up to `max` tokens of `input` into `tokens` (back to back),
  // returning how many; and `n` tokens appended to `output`. Same as a loop
  // of try_read / write, at a fraction of the cost per token: an operator
  // that handles tokens in bulk should use these (the built-ins do).
  virtual std::size_t read_many(std::size_t input, void* tokens, std::size_t max) = 0;
  virtual void write_many(std::size_t output, const void* tokens, std::size_t n) = 0;
  // The same without the copy, for an operator that makes or uses tokens
  // where they lie. reserve() gives room for up to `max` tokens at the end
  // of `output` (fewer when the stream's current block has less left; at
  // least one when max > 0); commit() appends the first `n` of them (n at
  // most the room given; nothing is visible before). peek() gives up to
  // `max` waiting tokens of `input` where they lie, `n` of them (fewer when
  // they cross into another block: peek again after consume(); nullptr and 0
  // when none wait); they stay valid until consume() takes the first `n`.
  // Tokens in place are aligned for a type of the token's size and an
  // alignment of at most 16.
  virtual void* reserve(std::size_t output, std::size_t max, std::size_t& room) = 0;
  virtual void commit(std::size_t output, std::size_t n) = 0;
  virtual const void* peek(std::size_t input, std::size_t max, std::size_t& n) = 0;
  virtual void consume(std::size_t input, std::size_t n) = 0;
  // The operator's instance name and its args from the program.
  virtual const std::string& name() const = 0;

  template <typename T>
  bool read(std::size_t input, T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    return try_read(input, &value);
  }
  template <typename T>
  void write_value(std::size_t output, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    write(output, &value);
  }
  // read_many / write_many of values (T the input's or output's token).
  template <typename T>
  std::size_t read_values(std::size_t input, T* values, std::size_t max) {
    static_assert(std::is_trivially_copyable_v<T>);
    return read_many(input, values, max);
  }
  template <typename T>
  void write_values(std::size_t output, const T* values, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    write_many(output, values, n);
  }
  // reserve / peek as values (T the output's or input's token):
  //   auto room = ctx.reserve_values<std::uint64_t>(0, 4096);
  //   for (auto& v : room) v = next++;
  //   ctx.commit(0, room.size());
  template <typename T>
  std::span<T> reserve_values(std::size_t output, std::size_t max) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 16);
    std::size_t room = 0;
    void* at = reserve(output, max, room);
    return {static_cast<T*>(at), room};
  }
  template <typename T>
  std::span<const T> peek_values(std::size_t input, std::size_t max) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 16);
    std::size_t n = 0;
    const void* at = peek(input, max, n);
    return {static_cast<const T*>(at), n};
  }
};

// How an operator is made from its program entry: its args ("n=100 step=2")
// and the token sizes of its ports. It says how many inputs and outputs it
// has, so a program can be validated before anything runs.
struct OperatorSpec {
  std::size_t inputs = 0, outputs = 0;
  // Token bytes each port needs; 0: any size (checked equal to its peer's).
  std::vector<std::size_t> input_bytes{}, output_bytes{};
  // snapshot() and restore() hold all its state (true for a stateless
  // operator that keeps the defaults). A program survives a lost node only
  // when every operator says so.
  bool checkpointable = false;
};
using Args = std::map<std::string, std::string>;
struct OperatorFactory {
  std::function<Result<OperatorSpec>(const Args& args)> spec;
  std::function<std::unique_ptr<Operator>(const Args& args)> make;
};

class OperatorRegistry {
 public:
  // counter, add, scale, dup, delay, collect, sum, ... (docs/streams.md).
  static OperatorRegistry with_builtins();
  void add(const std::string& name, OperatorFactory factory);
  const OperatorFactory* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OperatorFactory> factories_;
};

// A stream program: operator instances and the streams between their ports.
class Program {
 public:
  struct Instance {
    std::string name, op;
    Args args;
    OperatorSpec spec;
  };
  struct Stream {
    std::size_t from = 0, from_port = 0, to = 0, to_port = 0;
    std::size_t token_bytes = 8;
  };
  // Adds operator `op` from `registry` as instance `name`; a named error for
  // an unknown operator, a duplicate name or args its spec refuses.
  Status add(const OperatorRegistry& registry, const std::string& name, const std::string& op, Args args = {});
  Status connect(const std::string& from, std::size_t from_port, const std::string& to, std::size_t to_port, std::size_t token_bytes);
  // Every port connected exactly once, token sizes matching the ports':
  // named errors otherwise.
  Status validate() const;

  // The DOT form: `n [operator="counter", args="n=100"]; a -> b [token=8, from_port=0, to_port=1];`
  // (ports default to 0). Validated.
  static Result<Program> from_dot(std::string_view text, const OperatorRegistry& registry, std::string_view source = "<string>");
  static Result<Program> from_dot_file(const std::string& path, const OperatorRegistry& registry);
  // The program keeps a pointer to its registry, which makes the operators
  // when it runs: the registry must outlive it, so a temporary one does not
  // compile (keep it in a variable: `auto reg = OperatorRegistry::with_builtins();`).
  static Result<Program> from_dot(std::string_view, OperatorRegistry&&, std::string_view = "<string>") = delete;
  static Result<Program> from_dot_file(const std::string&, OperatorRegistry&&) = delete;
  Status add(OperatorRegistry&&, const std::string&, const std::string&, Args = {}) = delete;

  const std::vector<Instance>& instances() const { return instances_; }
  const std::vector<Stream>& streams() const { return streams_; }
  const OperatorRegistry* registry() const { return registry_; }
  std::size_t find(const std::string& name) const;  // npos when absent

 private:
  std::vector<Instance> instances_;
  std::vector<Stream> streams_;
  const OperatorRegistry* registry_ = nullptr;
};

// Local execution: the paper's one thread per operator, or operators on a
// pool of worker threads, each fired when its firing rule holds.
enum class Mode { kThreadPerOperator, kPool };

struct StreamProfile;

struct RunOptions {
  Mode mode = Mode::kPool;
  unsigned threads = 0;  // kPool: worker threads (0: one per hardware thread)
  bool trace = false;    // record when each operator fired (OperatorProfile::spans; to_chrome_trace, to_gantt_svg)
  // Back-pressure (Parks' bounded scheduling, docs/streams.md): an operator
  // does not fire while one of its outputs holds this many bytes of tokens
  // (at least one token), so a fast producer waits for its consumer instead
  // of filling memory; one firing may write past it. When every operator
  // waits and one of them waits for room, the fullest stream with the
  // smallest capacity doubles it: a Kahn network that runs with unbounded
  // streams runs with bounded ones. 0: unbounded.
  std::size_t stream_buffer_bytes = std::size_t{512} << 10;
  // While the operators run, every kSamplePeriodS, from a thread of its own:
  // each stream's tokens so far and the tokens waiting in it (run()), or
  // each stream between nodes with the tokens sent on it so far, as its
  // producer's node reports them (run_cluster(); `queued` 0). It reads counters the streams keep anyway:
  // the operators are not slowed. Not sent to the nodes.
  std::function<void(const std::vector<StreamProfile>&)> on_sample{};
};
inline constexpr double kSamplePeriodS = 0.2;

// When an operator was firing, in seconds from the start of its node's run.
// Firings less than kSpanGap apart are one span, so a busy operator costs a
// few spans, not one per firing.
struct FiringSpan {
  double start_s = 0, end_s = 0;
};

struct OperatorProfile {
  std::string name;
  std::uint64_t firings = 0;
  double busy_s = 0;  // time inside fire()
  int node = -1;      // run_cluster(): the node it was placed on
  std::vector<FiringSpan> spans{};  // with RunOptions::trace
};
struct StreamProfile {
  std::string from, to;
  std::uint64_t tokens = 0;  // written into it
  std::uint64_t queued = 0;  // of those, waiting to be read (a live sample: RunOptions::on_sample)
};

// run_cluster(): one worker process of the run, and what crossed its link.
struct NodeReport {
  std::string worker, host;        // its --name (or HOST:PID) and host
  std::size_t operators = 0;       // placed on it
  std::uint64_t bytes_in = 0;      // driver -> node (SETUP, and the tokens relayed to it without direct links)
  std::uint64_t bytes_out = 0;     // node -> driver (DONE, checkpoints, and its tokens bound elsewhere without direct links)
  std::uint64_t bytes_to_nodes = 0;  // node -> other nodes straight over their links (ClusterOptions::direct_links)
  double seconds = 0;              // its part's run time
  // The most bytes of tokens from other nodes that waited on it to be read
  // (each such stream's peak, summed): with credits, at most the stream
  // buffer per stream that has a window (docs/streams.md, "Back-pressure").
  std::uint64_t most_waiting_bytes = 0;
};

// run_cluster(): a node lost mid-run, and how the run went on without it.
struct NodeLoss {
  std::string worker;           // its --name (or HOST:PID)
  std::string why;              // what the session saw (silent, gone, ...)
  std::uint32_t checkpoint = 0; // the checkpoint every operator went back to (0: the start)
  double lost_s = 0;            // when it was lost, from the start of the run
  double resumed_s = 0;         // from the loss until the survivors ran again
};

struct RunResult {
  double seconds = 0;
  ByteMap outputs;                         // collect operators: instance -> the bytes of every token it read, back to back
  std::vector<OperatorProfile> operators;  // profiling on every run (Smart_min/max read it back)
  std::vector<StreamProfile> streams;
  std::vector<NodeReport> nodes;           // run_cluster() only
  std::uint32_t checkpoints = 0;           // run_cluster(): checkpoints completed
  std::vector<NodeLoss> losses;            // run_cluster(): nodes lost, each survived
};

// Runs the program until every operator is finished. An operator that
// throws ends the run with an error naming it.
Result<RunResult> run(const Program& program, const RunOptions& options = {});

// Running over worker processes, one node each (`redflow worker --connect`;
// docs/streams.md, "Over worker processes"). The driver listens at
// cluster.listen, waits for cluster.min_workers workers (the nodes), places
// the operators with SCORE's load-time placement, and starts and watches
// the nodes; tokens that cross nodes go node to node (direct_links). Every checkpoint_every_s the driver takes a consistent
// checkpoint (Chandy-Lamport markers from the sources, aligned at each
// operator; docs/streams.md, "When a node is lost"); a worker lost mid-run
// then costs a return to the last one: its operators move to the survivors,
// every operator restores, the sources rewind, and each collect's output
// holds each token once. With an operator that cannot snapshot, or no node
// left, a lost worker ends the run with an error naming it.
struct ClusterOptions {
  // Where the nodes connect, keys, waits (redflow/cluster.hpp). Defaults
  // here: listen "tcp://127.0.0.1:*" (a free port) and one node; a
  // heartbeat timeout under 0.5 s is refused (it would lose healthy nodes).
  redflow::ClusterOptions cluster = {.listen = "tcp://127.0.0.1:*", .min_workers = 1};
  std::string place = "smart";               // naive, topological, smart, smart_min, smart_max
  std::string profile_json{};                // smart_min/max: an earlier run's profile (its text)
  std::uint64_t seed = 1;                    // naive's and METIS's
  bool aggregate = true;                     // tokens bound for one node leave in one message
  // Tokens go straight from the node that writes a stream to the node that
  // reads it, over each node's link socket; false: through the driver (a
  // star). A node without a link socket (the driver off loopback, no keys)
  // is reached through the driver either way.
  bool direct_links = true;
  bool two_level = true;                     // a reader drains what arrived under one lock
  // Seconds between checkpoints (0: none, and a lost node ends the run).
  // The program's state travels to the driver each time: its cost is that
  // state's size, not the tokens' rate (docs/streams.md gives the figures).
  double checkpoint_every_s = 1.0;
  // While it runs, about ten times a second: nodes whose part finished, and
  // the bytes of tokens sent between nodes so far, through the driver or
  // straight (a progress line).
  std::function<void(unsigned nodes_done, std::uint64_t relayed_bytes)> on_progress{};
};
// `node_options.mode` and `.trace` hold on every node; threads is each worker's own.
Result<RunResult> run_cluster(const Program& program, const RunOptions& node_options, const ClusterOptions& cluster);

}  // namespace redflow::stream
