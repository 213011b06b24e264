// The operators every OperatorRegistry::with_builtins() has (docs/streams.md),
// and the one the runner reads results from: `collect`.
#pragma once

#include <string>

#include "redflow/stream.hpp"

namespace redflow::stream {

// Gathers every token of its input; the run's outputs are these bytes.
class CollectOperator final : public Operator {
 public:
  Fired fire(FiringContext& ctx) override;
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// A number arg ("n=100"), with a default; a named error when it is not one.
Result<std::uint64_t> number_arg(const Args& args, const std::string& key, std::uint64_t fallback);

}  // namespace redflow::stream
