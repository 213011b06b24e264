// The memcached backend (libmemcached): `add` is the single-assignment write;
// several servers share keys by consistent hashing (ketama). Servers must run
// with evictions off (-M): an evicted label would be a lost result.
#include <libmemcached/memcached.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "rem/store_backends.hpp"

namespace redflow::rem {

namespace {

// A Store over a memcached cluster. memcached_st is not thread-safe, so
// threads of one process borrow connections from a small pool.
class MemcachedStore final : public Store {
 public:
  MemcachedStore(memcached_st* base, std::string description, std::size_t max_value)
      : base_(base), description_(std::move(description)), max_value_(max_value) {}
  ~MemcachedStore() override {
    for (memcached_st* m : pool_) memcached_free(m);
    memcached_free(base_);
  }

  Result<bool> add(const std::string& key, std::span<const std::byte> value) override { return add_for(key, value, 0); }

  bool expires() const override { return true; }
  // memcached counts expiry in whole seconds: a lease is rounded up to one.
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) override {
    return add_for(key, value, static_cast<time_t>(std::max<std::int64_t>(1, (ttl.count() + 999) / 1000)));
  }

  Result<SharedValue> get(const std::string& key) override {
    Lease m(*this);
    std::size_t len = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc;
    char* v = memcached_get(m.get(), key.data(), key.size(), &len, &flags, &rc);
    if (rc == MEMCACHED_NOTFOUND) return SharedValue{};
    if (rc != MEMCACHED_SUCCESS) {
      std::free(v);
      return error(m.get(), rc, "get " + key);
    }
    const auto* b = reinterpret_cast<const std::byte*>(v);
    SharedValue out = std::make_shared<const Value>(b, b + len);
    std::free(v);
    return out;
  }

  Result<std::vector<SharedValue>> get_many(std::span<const std::string> keys) override {
    std::vector<SharedValue> out(keys.size());
    if (keys.empty()) return out;
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    for (const std::string& k : keys) ptrs.push_back(k.data()), lens.push_back(k.size());
    Lease m(*this);
    memcached_return_t rc = memcached_mget(m.get(), ptrs.data(), lens.data(), keys.size());
    if (rc != MEMCACHED_SUCCESS) return error(m.get(), rc, fmt::format("get of {} keys from {}", keys.size(), keys.front()));
    // Replies come in whatever order the servers send them; match them by key.
    while (true) {
      memcached_result_st* r = memcached_fetch_result(m.get(), nullptr, &rc);
      if (!r) break;
      const std::string_view k(memcached_result_key_value(r), memcached_result_key_length(r));
      const auto* v = reinterpret_cast<const std::byte*>(memcached_result_value(r));
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (!out[i] && keys[i] == k) {
          out[i] = std::make_shared<const Value>(v, v + memcached_result_length(r));
          break;
        }
      memcached_result_free(r);
    }
    if (rc != MEMCACHED_END && rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND)
      return error(m.get(), rc, fmt::format("get of {} keys from {}", keys.size(), keys.front()));
    return out;
  }

  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override {
    Lease m(*this);
    memcached_return_t rc =
        memcached_replace(m.get(), key.data(), key.size(), reinterpret_cast<const char*>(value.data()), value.size(), 0, 0);
    if (rc == MEMCACHED_SUCCESS) return true;
    if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_NOTFOUND) return false;
    return error(m.get(), rc, "replace " + key);
  }

  Result<bool> exists(const std::string& key) override {
    // touch with "never expires" (what every key already has) tells presence
    // without moving the value over the network and without writing anything.
    // Not for claims: it would make a claim never lapse (nothing asks).
    Lease m(*this);
    memcached_return_t rc = memcached_touch(m.get(), key.data(), key.size(), 0);
    if (rc == MEMCACHED_SUCCESS) return true;
    if (rc == MEMCACHED_NOTFOUND) return false;
    return error(m.get(), rc, "touch " + key);
  }

  Result<bool> remove(const std::string& key) override {
    Lease m(*this);
    memcached_return_t rc = memcached_delete(m.get(), key.data(), key.size(), 0);
    if (rc == MEMCACHED_SUCCESS) return true;
    if (rc == MEMCACHED_NOTFOUND) return false;
    return error(m.get(), rc, "delete " + key);
  }

  std::size_t max_value_bytes() const override { return max_value_; }
  std::string describe() const override { return description_; }

 private:
  // A connection borrowed from the pool for one call.
  class Lease {
   public:
    explicit Lease(MemcachedStore& s) : s_(s) {
      std::lock_guard lock(s_.mu_);
      if (s_.pool_.empty()) {
        m_ = memcached_clone(nullptr, s_.base_);
      } else {
        m_ = s_.pool_.back();
        s_.pool_.pop_back();
      }
    }
    ~Lease() {
      std::lock_guard lock(s_.mu_);
      s_.pool_.push_back(m_);
    }
    memcached_st* get() const { return m_; }

   private:
    MemcachedStore& s_;
    memcached_st* m_;
  };

  // memcached's add: written only if the key has no value; `expiry` seconds, 0 for good.
  Result<bool> add_for(const std::string& key, std::span<const std::byte> value, time_t expiry) {
    Lease m(*this);
    memcached_return_t rc =
        memcached_add(m.get(), key.data(), key.size(), reinterpret_cast<const char*>(value.data()), value.size(), expiry, 0);
    if (rc == MEMCACHED_SUCCESS) return true;
    if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) return false;
    return error(m.get(), rc, "add " + key);
  }

  Status error(memcached_st* m, memcached_return_t rc, const std::string& what) const {
    std::string msg = fmt::format("memcached {} ({}): {}", description_, what, memcached_strerror(m, rc));
    if (memcached_last_error(m) != MEMCACHED_SUCCESS) msg += std::string(": ") + memcached_last_error_message(m);
    // A full server with evictions off answers "SERVER_ERROR Out of memory ...".
    if (rc == MEMCACHED_MEMORY_ALLOCATION_FAILURE || rc == MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE || rc == MEMCACHED_E2BIG ||
        msg.find("ut of memory") != std::string::npos)
      return Status::ResourceExhausted(msg + " (server full: memcached -M refuses writes instead of evicting; give it more -m)");
    return Status::IOError(msg);
  }

  memcached_st* base_;
  std::string description_;
  std::size_t max_value_;
  std::mutex mu_;
  std::vector<memcached_st*> pool_;
};

memcached_return_t on_setting(const memcached_instance_st*, const char* key, size_t key_len, const char* value, size_t value_len, void* ctx) {
  if (std::string_view(key, key_len) == "item_size_max") {
    auto* limit = static_cast<std::size_t*>(ctx);
    std::size_t v = std::strtoull(std::string(value, value_len).c_str(), nullptr, 10);
    if (v > 0 && (*limit == 0 || v < *limit)) *limit = v;
  }
  return MEMCACHED_SUCCESS;
}

}  // namespace

Result<std::unique_ptr<Store>> make_memcached_store(const std::vector<Endpoint>& servers) {
  memcached_st* m = memcached_create(nullptr);
  if (!m) return Status::Internal("memcached_create failed");
  std::string description = "memcached://";
  for (std::size_t i = 0; i < servers.size(); ++i) {
    description += (i ? "," : "") + servers[i].host + ":" + std::to_string(servers[i].port);
    if (memcached_server_add(m, servers[i].host.c_str(), static_cast<in_port_t>(servers[i].port)) != MEMCACHED_SUCCESS) {
      std::string msg = memcached_last_error_message(m);
      memcached_free(m);
      return Status::InvalidArgument("--store " + description + ": cannot add server: " + msg);
    }
  }
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA, 1);  // consistent hashing across servers
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, 2000);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, 10000);
  // Ask every server its item limit: values above the smallest are chunked.
  std::size_t item_max = 0;
  memcached_return_t rc = memcached_stat_execute(m, "settings", on_setting, &item_max);
  if (rc != MEMCACHED_SUCCESS || item_max == 0) {
    std::string msg = memcached_last_error_message(m);
    memcached_free(m);
    return Status::IOError("--store " + description + ": cannot reach the memcached server(s): " + msg);
  }
  // Room for the key and memcached's item header inside the item limit.
  const std::size_t max_value = item_max > 4096 ? item_max - 1024 : item_max / 2;
  return std::unique_ptr<Store>(std::make_unique<MemcachedStore>(m, description, max_value));
}

}  // namespace redflow::rem
