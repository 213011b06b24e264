// The operators every OperatorRegistry::with_builtins() has (docs/streams.md),
// and the one the runner reads results from: `collect`.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>

#include "redflow/stream.hpp"

namespace redflow::stream {

// Gathers every token of its input; the run's outputs are these bytes.
// On a cluster node it also hands each firing's new bytes to a sink, which
// sends them to the driver while the run goes on (stream_worker.cpp).
class CollectOperator final : public Operator {
 public:
  // Called on the operator's thread after each firing that gathered bytes:
  // where they start in the output, and the bytes.
  using Sink = std::function<void(std::size_t offset, std::span<const std::byte> bytes)>;
  void stream_to(Sink sink) { sink_ = std::move(sink); }
  Fired fire(FiringContext& ctx) override;
  // What it gathered, moved out (the run's result takes it once it ended).
  Bytes take_bytes() { return std::move(bytes_); }
  void snapshot(StateWriter& out) const override { out.values(bytes_); }
  void restore(StateReader& in) override { in.values(bytes_); }

 private:
  Bytes bytes_;
  Sink sink_;
};

// A number arg ("n=100"), with a default; a named error when it is not one.
Result<std::uint64_t> number_arg(const Args& args, const std::string& key, std::uint64_t fallback);

}  // namespace redflow::stream
