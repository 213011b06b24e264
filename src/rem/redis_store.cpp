// The Redis backend (hiredis): `SET key value NX` is the single-assignment write.
#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "rem/store_backends.hpp"

namespace redflow::rem {

namespace {

// A Store over one Redis server; a pool of connections for threads of one process.
class RedisStore final : public Store {
 public:
  explicit RedisStore(Endpoint ep) : ep_(std::move(ep)) {}
  ~RedisStore() override {
    for (redisContext* c : pool_) redisFree(c);
  }

  Status connect_one(redisContext** out) {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout(ep_.host.c_str(), ep_.port, tv);
    if (!c || c->err) {
      std::string msg = c ? c->errstr : "cannot allocate a context";
      if (c) redisFree(c);
      return Status::IOError("cannot reach " + describe() + ": " + msg);
    }
    timeval io{10, 0};
    redisSetTimeout(c, io);
    *out = c;
    return Status::Ok();
  }

  Result<bool> add(const std::string& key, std::span<const std::byte> value) override {
    return command<bool>([&](redisContext* c) { return redisCommand(c, "SET %b %b NX", key.data(), key.size(), value.data(), value.size()); },
                         "SET NX " + key, set_nx_written);
  }
  bool expires() const override { return true; }
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) override {
    const long long ms = std::max<long long>(1, ttl.count());
    return command<bool>(
        [&](redisContext* c) { return redisCommand(c, "SET %b %b NX PX %lld", key.data(), key.size(), value.data(), value.size(), ms); },
        "SET NX PX " + key, set_nx_written);
  }
  Result<SharedValue> get(const std::string& key) override {
    return command<SharedValue>([&](redisContext* c) { return redisCommand(c, "GET %b", key.data(), key.size()); }, "GET " + key,
                                [](redisReply* r) { return value_of(r); });
  }
  Result<std::vector<SharedValue>> get_many(std::span<const std::string> keys) override {
    if (keys.empty()) return std::vector<SharedValue>{};
    std::vector<const char*> argv{"MGET"};
    std::vector<std::size_t> lens{4};
    for (const std::string& k : keys) argv.push_back(k.data()), lens.push_back(k.size());
    return command<std::vector<SharedValue>>(
        [&](redisContext* c) { return redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()); },
        fmt::format("MGET {} keys from {}", keys.size(), keys.front()), [n = keys.size()](redisReply* r) -> Result<std::vector<SharedValue>> {
          if (r->type != REDIS_REPLY_ARRAY || r->elements != n) return Status::Internal("unexpected reply");
          std::vector<SharedValue> out;
          for (std::size_t i = 0; i < n; ++i) {
            auto v = value_of(r->element[i]);
            if (!v.ok()) return v.status();
            out.push_back(std::move(*v));
          }
          return out;
        });
  }
  // SET ... XX: written only over a value that is there.
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override {
    return command<bool>([&](redisContext* c) { return redisCommand(c, "SET %b %b XX", key.data(), key.size(), value.data(), value.size()); },
                         "SET XX " + key, set_nx_written);
  }
  Result<bool> exists(const std::string& key) override {
    return command<bool>([&](redisContext* c) { return redisCommand(c, "EXISTS %b", key.data(), key.size()); }, "EXISTS " + key,
                         [](redisReply* r) -> Result<bool> {
                           if (r->type != REDIS_REPLY_INTEGER) return Status::Internal("unexpected reply");
                           return r->integer > 0;
                         });
  }
  Result<bool> remove(const std::string& key) override {
    return command<bool>([&](redisContext* c) { return redisCommand(c, "DEL %b", key.data(), key.size()); }, "DEL " + key,
                         [](redisReply* r) -> Result<bool> {
                           if (r->type != REDIS_REPLY_INTEGER) return Status::Internal("unexpected reply");
                           return r->integer > 0;
                         });
  }
  // Redis takes values up to 512 MiB; chunks of 32 MiB keep one reply's buffer modest.
  std::size_t max_value_bytes() const override { return std::size_t{32} << 20; }
  std::string describe() const override { return fmt::format("redis://{}:{}", ep_.host, ep_.port); }

 private:
  // A GET's reply (or one of MGET's): the value, or null for nil.
  static Result<SharedValue> value_of(const redisReply* r) {
    if (r->type == REDIS_REPLY_NIL) return SharedValue{};
    if (r->type != REDIS_REPLY_STRING) return Status::Internal("unexpected reply");
    const auto* b = reinterpret_cast<const std::byte*>(r->str);
    return SharedValue(std::make_shared<const Value>(b, b + r->len));
  }
  // SET ... NX (XX): OK when it wrote the key, nil when the key had a value (had none).
  static Result<bool> set_nx_written(redisReply* r) {
    if (r->type == REDIS_REPLY_NIL) return false;
    if (r->type == REDIS_REPLY_STATUS) return true;
    return Status::Internal("unexpected reply");
  }

  template <typename T, typename Send, typename Parse>
  Result<T> command(Send send, const std::string& what, Parse parse) {
    redisContext* c = nullptr;
    {
      std::lock_guard lock(mu_);
      if (!pool_.empty()) c = pool_.back(), pool_.pop_back();
    }
    if (!c) REDFLOW_RETURN_IF_ERROR(connect_one(&c));
    auto* r = static_cast<redisReply*>(send(c));
    if (!r) {
      std::string msg = c->errstr;
      redisFree(c);  // a broken connection is not returned to the pool
      return Status::IOError(describe() + " (" + what + "): " + msg);
    }
    Result<T> out = Status::Internal("");
    if (r->type == REDIS_REPLY_ERROR) {
      std::string msg(r->str, r->len);
      out = msg.starts_with("OOM") ? Status::ResourceExhausted(describe() + " (" + what + "): " + msg + " (server full: raise maxmemory)")
                                   : Status::IOError(describe() + " (" + what + "): " + msg);
    } else {
      out = parse(r);
      if (!out.ok()) out = Status::IOError(describe() + " (" + what + "): " + out.status().message());
    }
    freeReplyObject(r);
    std::lock_guard lock(mu_);
    pool_.push_back(c);
    return out;
  }

  Endpoint ep_;
  std::mutex mu_;
  std::vector<redisContext*> pool_;
};

}  // namespace

Result<std::unique_ptr<Store>> make_redis_store(const Endpoint& server) {
  auto s = std::make_unique<RedisStore>(server);
  redisContext* c = nullptr;
  REDFLOW_RETURN_IF_ERROR(s->connect_one(&c));  // fail now, naming the server, rather than at the first label
  redisFree(c);
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace redflow::rem
