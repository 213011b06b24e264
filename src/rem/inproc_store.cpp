// The embedded default store: one map behind a mutex, for scheduler threads
// that share a process. Same single-assignment contract as memcached's add.
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "redflow/rem.hpp"

namespace redflow::rem {

namespace {

// A Store in this process's memory.
class InprocStore final : public Store {
 public:
  explicit InprocStore(std::size_t max_value) : max_value_(max_value) {}
  Result<bool> add(const std::string& key, std::span<const std::byte> value) override {
    return add_shared(key, std::make_shared<const Value>(value.begin(), value.end()));
  }
  Result<bool> add_shared(const std::string& key, SharedValue value) override {
    if (value->size() > max_value_) return too_large(value->size());
    std::lock_guard lock(mu_);
    return map_.try_emplace(key, std::move(value)).second;
  }
  Result<SharedValue> get(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    return it == map_.end() ? SharedValue{} : it->second;
  }
  Result<std::vector<SharedValue>> get_many(std::span<const std::string> keys) override {
    std::vector<SharedValue> out;
    out.reserve(keys.size());
    std::lock_guard lock(mu_);
    for (const std::string& k : keys) {
      auto it = map_.find(k);
      out.push_back(it == map_.end() ? SharedValue{} : it->second);
    }
    return out;
  }
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override {
    if (value.size() > max_value_) return too_large(value.size());
    auto shared = std::make_shared<const Value>(value.begin(), value.end());
    SharedValue old;  // freed after the lock is let go
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    old = std::exchange(it->second, std::move(shared));
    return true;
  }
  Result<bool> exists(const std::string& key) override {
    std::lock_guard lock(mu_);
    return map_.count(key) > 0;
  }
  Result<bool> remove(const std::string& key) override {
    std::lock_guard lock(mu_);
    return map_.erase(key) > 0 || expiring_.erase(key) > 0;
  }
  bool expires() const override { return true; }
  // Kept apart from the labels: a lapsed key is simply written again.
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte>, std::chrono::milliseconds ttl) override {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    auto [it, added] = expiring_.try_emplace(key, now + ttl);
    if (added) return true;
    if (it->second > now) return false;
    it->second = now + ttl;
    return true;
  }
  std::size_t max_value_bytes() const override { return max_value_; }
  std::string describe() const override { return "inproc"; }

 private:
  Status too_large(std::size_t bytes) const {
    return Status::InvalidArgument("value of " + std::to_string(bytes) + " bytes exceeds the item limit");
  }

  std::size_t max_value_;
  std::mutex mu_;
  std::unordered_map<std::string, SharedValue> map_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> expiring_;  // key -> when it lapses
};

}  // namespace

std::unique_ptr<Store> make_inproc_store(std::size_t max_value_bytes) { return std::make_unique<InprocStore>(max_value_bytes); }

}  // namespace redflow::rem
