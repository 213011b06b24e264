// REM over real servers started by the test: memcached (one and two servers,
// chunked values, a full server, a corrupted value) and redis-server.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "redflow/rem.hpp"
#include "rem/value_codec.hpp"
#include "rem_servers.hpp"
#include "test_graphs.hpp"

namespace redflow::testing {
namespace {

using namespace redflow::rem;

std::string mc_spec(const std::vector<const ServerProcess*>& servers) {
  std::string s = "memcached://";
  for (std::size_t i = 0; i < servers.size(); ++i) s += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(servers[i]->port());
  return s;
}

// A graph whose data nodes are `bytes` each, so that values exceed a small item limit.
Shape wide_fan(std::size_t bytes, int width) {
  Shape s{"wide", Graph("wide"), {"X"}};
  Graph& g = s.graph;
  DataId x = g.input("X", bytes);
  std::vector<DataId> parts;
  for (int i = 0; i < width; ++i) {
    DataId p = g.inner("p" + std::to_string(i), bytes);
    g.actor("w" + std::to_string(i), "t.mix", {x}, p).args("salt=" + std::to_string(i));
    parts.push_back(p);
  }
  g.actor("join", "t.mix", parts, g.output("Y", bytes));
  return s;
}

Outputs driver_outputs(const Graph& g, const Registry& reg, const Inputs& in) {
  Runtime rt({.tiles = 2, .scheduler = Scheduler::kSteal});
  auto loaded = rt.load(g, reg);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto out = loaded->execute(in);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return *out;
}

// On any backend: a program run under an instance another program started is
// refused by name (not served that program's outputs), and a valid record
// copied onto another label's key is refused like a corrupted one.
void expect_records_bound_to_program_and_key(Store& store) {
  Registry reg = test_registry();
  auto real = from_graph(chain(4).graph, reg);
  auto changed = from_graph(chain(4, 2).graph, reg);  // one actor changed
  ASSERT_TRUE(real.ok() && changed.ok());
  auto x = random_bytes(kBytes, 12);
  Inputs in{{"X", x}};
  RunOptions o;
  o.instance = "reuse1";
  o.timeout = std::chrono::seconds(30);
  auto first = run_program(*changed, store, in, 2, o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = run_program(*real, store, in, 2, o);
  ASSERT_FALSE(second.ok()) << "the other program's outputs were served";
  EXPECT_EQ(second.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(second.status().message().find("instance 'reuse1' belongs to another program"), std::string::npos) << second.status().ToString();
  auto again = run_program(*changed, store, in, 1, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stats.executed, 0u);
  EXPECT_EQ(again->outputs, first->outputs);
  // A valid record of label d1 copied onto the key of result label Y (same
  // size) in a fresh instance: add cannot overwrite, and a fresh key shows the copy is all it takes.
  LabelCodec codec(store, *real, "copied");
  const LabelId d1 = *real->find_label("d1"), y = *real->find_label("Y");
  ASSERT_TRUE(codec.write(d1, random_bytes(kBytes, 13)).ok());
  auto rec = store.get(codec.key(d1));
  ASSERT_TRUE(rec.ok() && *rec);
  ASSERT_TRUE(*store.add(codec.key(y), **rec));
  auto got = read_results(*real, store, "copied");
  ASSERT_FALSE(got.ok()) << "label d1's record was served as Y";
  EXPECT_NE(got.status().message().find("label 'Y' (key " + codec.key(y) + ") is corrupted"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("record written for key " + codec.key(d1) + " (label 'd1')"), std::string::npos)
      << got.status().ToString();
}

// A store that remembers every key written through it, for a server that
// cannot list its keys reliably (memcached's `lru_crawler metadump` leaves
// out items it has not crawled yet): what is left of an instance is then
// each key ever written under its prefix that the server still has.
// add() may be called from several scheduler threads at once; `written` is
// read once they are done.
class RecordingStore final : public Store {
 public:
  explicit RecordingStore(Store& inner) : inner_(inner) {}
  Result<bool> add(const std::string& key, std::span<const std::byte> value) override {
    {
      std::lock_guard lock(mutex_);
      written.push_back(key);
    }
    return inner_.add(key, value);
  }
  bool expires() const override { return inner_.expires(); }
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) override {
    return inner_.add_expiring(key, value, ttl);
  }
  Result<SharedValue> get(const std::string& key) override { return inner_.get(key); }
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override { return inner_.replace(key, value); }
  Result<bool> exists(const std::string& key) override { return inner_.exists(key); }
  Result<bool> remove(const std::string& key) override { return inner_.remove(key); }
  std::size_t max_value_bytes() const override { return inner_.max_value_bytes(); }
  std::string describe() const override { return inner_.describe(); }
  std::vector<std::string> written;

 private:
  Store& inner_;
  std::mutex mutex_;
};

// On a real server: two finished instances of a program (on memcached with
// its values chunked); cleaning one out leaves no key of it on the server (as the server
// itself lists them) and every key of the other, which still reads right;
// the cleaned one runs again from nothing. Cleaning an instance with another
// program is refused and deletes nothing.
void expect_clean_removes_one_instance(Store& server, int port, bool redis, bool chunked) {
  RecordingStore store(server);
  Registry reg = test_registry();
  const std::size_t bytes = chunked ? 3 * store.max_value_bytes() / 2 : 4096;  // chunked: every value in two chunks
  Shape s = wide_fan(bytes, 3);
  auto p = from_graph(s.graph, reg);
  auto other = from_graph(chain(3).graph, reg);
  ASSERT_TRUE(p.ok() && other.ok());
  auto x = random_bytes(bytes, 31);
  Inputs in{{"X", x}};
  const Outputs want = run_sequential(s.graph, reg, in);
  for (const char* inst : {"keep", "drop"}) {
    RunOptions o;
    o.instance = inst;
    o.timeout = std::chrono::seconds(30);
    auto run = run_program(*p, store, in, 2, o);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
  }
  // Redis lists its keys; memcached's are the ones written that it still has.
  auto keys_of = [&](const std::string& inst) {
    std::vector<std::string> all, mine;
    if (redis) {
      std::string error;
      all = server_keys(port, redis, error);
      EXPECT_EQ(error, "");
    } else {
      for (const std::string& k : store.written)
        if (auto there = server.exists(k); there.ok() && *there) all.push_back(k);
    }
    // Claims (rf:<instance>:C<task>) lapse by themselves while the test looks: not counted.
    for (const std::string& k : all)
      if (k.starts_with("rf:" + inst + ":") && !k.starts_with("rf:" + inst + ":C")) mine.push_back(k);
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    return mine;
  };
  const std::vector<std::string> kept = keys_of("keep"), dropped = keys_of("drop");
  ASSERT_FALSE(dropped.empty());
  if (chunked) {
    EXPECT_TRUE(std::any_of(dropped.begin(), dropped.end(), [](const std::string& k) { return std::count(k.begin(), k.end(), ':') == 4; }))
        << "no chunk key: the values were not chunked";
  }
  auto refused = clean_instance(*other, store, "drop");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("instance 'drop' belongs to another program"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(keys_of("drop"), dropped) << "a refused clean deleted keys";
  auto removed = clean_instance(*p, store, "drop");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, dropped.size());
  EXPECT_EQ(keys_of("drop"), std::vector<std::string>{});
  EXPECT_EQ(keys_of("keep"), kept);
  auto kept_out = read_results(*p, store, "keep");
  ASSERT_TRUE(kept_out.ok()) << kept_out.status().ToString();
  EXPECT_EQ(*kept_out, want);
  EXPECT_EQ(read_results(*p, store, "drop").status().code(), Status::Code::kNotFound);
  RunOptions o;
  o.instance = "drop";
  o.timeout = std::chrono::seconds(30);
  auto again = run_program(*p, store, in, 1, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stats.executed, p->tasks().size() - 1) << "every task but the input's runs again";
  EXPECT_EQ(again->outputs, want);
}

TEST(RemMemcached, CleanRemovesEveryKeyOfOneInstanceAndNoOther) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc, 64, 64), "");  // 64 KiB items: values are chunked
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_clean_removes_one_instance(**store, mc.port(), false, true);
}

TEST(RemRedis, CleanRemovesEveryKeyOfOneInstanceAndNoOther) {
  ServerProcess rs;
  ASSERT_EQ(start_redis(rs), "");
  auto store = open_store("redis://127.0.0.1:" + std::to_string(rs.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_clean_removes_one_instance(**store, rs.port(), true, false);  // 32 MiB items: values inline
}

TEST(RemMemcached, AnotherProgramAndCopiedRecordsAreRefusedByName) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc), "");
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_records_bound_to_program_and_key(**store);
}

TEST(RemRedis, AnotherProgramAndCopiedRecordsAreRefusedByName) {
  ServerProcess rs;
  ASSERT_EQ(start_redis(rs), "");
  auto store = open_store("redis://127.0.0.1:" + std::to_string(rs.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_records_bound_to_program_and_key(**store);
}

// get_many: the values in the keys' order, null for keys without one, one
// key asked twice answered twice, whichever server holds each key.
void expect_get_many_in_key_order(Store& store) {
  std::vector<std::string> keys;
  std::vector<Value> values;
  for (int i = 0; i < 24; ++i) {
    keys.push_back("gm:" + std::to_string(i));
    values.push_back(random_bytes(100 + 37 * static_cast<std::size_t>(i), 70 + static_cast<std::uint32_t>(i)));
    if (i % 3 != 1) {
      ASSERT_TRUE(*store.add(keys.back(), values.back()));
    }
  }
  std::vector<std::string> asked(keys.rbegin(), keys.rend());  // another order than written
  asked.push_back(keys[0]);
  auto got = store.get_many(asked);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), asked.size());
  for (std::size_t j = 0; j < asked.size(); ++j) {
    const std::size_t i = std::stoul(asked[j].substr(3));
    SCOPED_TRACE(asked[j]);
    if (i % 3 == 1) {
      EXPECT_EQ((*got)[j], nullptr);
    } else {
      ASSERT_NE((*got)[j], nullptr);
      EXPECT_EQ(*(*got)[j], values[i]);
    }
  }
  auto none = store.get_many({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(RemStores, GetManyAnswersInKeyOrderOnEveryBackend) {
  {
    SCOPED_TRACE("inproc");
    expect_get_many_in_key_order(*make_inproc_store());
  }
  ServerProcess a, b, rs;
  ASSERT_EQ(start_memcached(a), "");
  ASSERT_EQ(start_memcached(b), "");
  ASSERT_EQ(start_redis(rs), "");
  for (const std::string& spec : {mc_spec({&a, &b}), "redis://127.0.0.1:" + std::to_string(rs.port())}) {
    SCOPED_TRACE(spec);
    auto store = open_store(spec);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    expect_get_many_in_key_order(**store);
  }
}

TEST(RemMemcached, OutputsEqualDriverModeOnOneAndTwoServers) {
  ServerProcess a, b;
  ASSERT_EQ(start_memcached(a), "");
  ASSERT_EQ(start_memcached(b), "");
  Registry reg = test_registry();
  Shape s = random_dag(50, 3);
  std::vector<std::vector<std::byte>> bufs;
  Inputs in;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) bufs.push_back(random_bytes(kBytes, 60 + static_cast<std::uint32_t>(i)));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) in[s.inputs[i]] = bufs[i];
  auto expected = driver_outputs(s.graph, reg, in);
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  for (auto servers : {std::vector<const ServerProcess*>{&a}, std::vector<const ServerProcess*>{&a, &b}}) {
    auto store = open_store(mc_spec(servers));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    RunOptions o;
    o.timeout = std::chrono::seconds(30);
    o.instance = "servers" + std::to_string(servers.size());
    auto run = run_program(*p, **store, in, 4, o);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->outputs, expected);
    // A second run with the same instance finds everything written: no task runs again.
    auto again = run_program(*p, **store, in, 1, o);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->stats.executed, 0u);
    EXPECT_EQ(again->outputs, expected);
    if (servers.size() == 2) {
      // Consistent hashing spread the labels: each key is on exactly one server, and both servers hold some.
      auto only_a = open_store(mc_spec({&a}));
      auto only_b = open_store(mc_spec({&b}));
      ASSERT_TRUE(only_a.ok() && only_b.ok());
      LabelCodec keys(**store, *p, o.instance);
      std::size_t on_a = 0, on_b = 0;
      for (LabelId l = 0; l < p->labels().size(); ++l) {
        const bool in_a = *(*only_a)->exists(keys.key(l)), in_b = *(*only_b)->exists(keys.key(l));
        EXPECT_NE(in_a, in_b) << "label " << p->label(l).name;
        on_a += in_a;
        on_b += in_b;
      }
      EXPECT_GT(on_a, 0u);
      EXPECT_GT(on_b, 0u);
    }
  }
}

TEST(RemMemcached, ValuesLargerThanTheItemLimitAreChunked) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc, 64, 64), "");  // 64 KiB items
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::size_t bytes = 300'000;
  ASSERT_LT((*store)->max_value_bytes(), bytes);
  Registry reg = test_registry();
  Shape s = wide_fan(bytes, 3);
  auto x = random_bytes(bytes, 2);
  Inputs in{{"X", x}};
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  RunOptions o;
  o.timeout = std::chrono::seconds(30);
  auto run = run_program(*p, **store, in, 2, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outputs, run_sequential(s.graph, reg, in));
}

TEST(RemMemcached, FullServerIsAClearErrorNotAWrongResult) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc, 2, 64), "");  // 2 MiB, evictions off
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok());
  Registry reg = test_registry();
  Shape s = wide_fan(200'000, 16);  // ~3.4 MB of labels
  auto x = random_bytes(200'000, 3);
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  RunOptions o;
  o.timeout = std::chrono::seconds(30);
  auto run = run_program(*p, **store, {{"X", x}}, 2, o);
  ASSERT_FALSE(run.ok()) << "a full store produced outputs";
  EXPECT_EQ(run.status().code(), Status::Code::kResourceExhausted) << run.status().ToString();
  EXPECT_NE(run.status().message().find("the store refused label"), std::string::npos) << run.status().ToString();
  EXPECT_NE(run.status().message().find("server full"), std::string::npos) << run.status().ToString();
}

TEST(RemMemcached, CorruptedValueIsDetected) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc), "");
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok());
  Registry reg = test_registry();
  Shape s = chain(5);
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  auto x = random_bytes(kBytes, 4);
  Inputs in{{"X", x}};
  // Run once, then corrupt the stored output in place as a faulty server or
  // a torn write would, and read it back.
  RunOptions o;
  o.instance = "corrupt";
  auto run = run_program(*p, **store, in, 1, o);
  ASSERT_TRUE(run.ok());
  LabelCodec codec(**store, *p, "corrupt");
  LabelId y = *p->find_label("Y");
  auto raw = (*store)->get(codec.key(y));
  ASSERT_TRUE(raw.ok() && *raw);
  Value bad = **raw;
  bad[bad.size() - 3] ^= std::byte{0x10};
  // memcached's add cannot overwrite: plant the corrupted copy as instance corrupt2's output.
  ASSERT_TRUE(*(*store)->add("rf:corrupt2:L" + std::to_string(y), bad));
  auto got = read_results(*p, **store, "corrupt2");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("label 'Y'"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("corrupted"), std::string::npos) << got.status().ToString();
}

TEST(RemMemcached, UnreachableServerAndBadSpecsAreNamed) {
  auto bad = open_store("memcached://127.0.0.1:notaport");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'127.0.0.1:notaport'"), std::string::npos) << bad.status().ToString();
  auto unknown = open_store("etcd://x:1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("etcd://x:1"), std::string::npos);
  auto down = open_store("memcached://127.0.0.1:" + std::to_string(free_port()));
  ASSERT_FALSE(down.ok());
  EXPECT_NE(down.status().message().find("cannot reach"), std::string::npos) << down.status().ToString();
  auto rdown = open_store("redis://127.0.0.1:" + std::to_string(free_port()));
  ASSERT_FALSE(rdown.ok());
  EXPECT_NE(rdown.status().message().find("cannot reach"), std::string::npos) << rdown.status().ToString();
}

TEST(RemRedis, OutputsEqualDriverModeFullServerAndCorruption) {
  ServerProcess rs;
  ASSERT_EQ(start_redis(rs), "");
  auto store = open_store("redis://127.0.0.1:" + std::to_string(rs.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Registry reg = test_registry();
  Shape s = fan_out_fan_in(10);
  auto x = random_bytes(kBytes, 5);
  Inputs in{{"X", x}};
  auto expected = driver_outputs(s.graph, reg, in);
  auto p = from_graph(s.graph, reg);
  ASSERT_TRUE(p.ok());
  RunOptions o;
  o.timeout = std::chrono::seconds(30);
  o.instance = "redis1";
  auto run = run_program(*p, **store, in, 3, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outputs, expected);
  // Corruption.
  LabelCodec codec(**store, *p, "redis1");
  LabelId y = *p->find_label("Y");
  Value bad = **(*store)->get(codec.key(y));
  bad[40] ^= std::byte{0x01};
  ASSERT_TRUE(*(*store)->add("rf:redis2:L" + std::to_string(y), bad));
  auto got = read_results(*p, **store, "redis2");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("corrupted"), std::string::npos) << got.status().ToString();

  // A full server (maxmemory, noeviction) refuses writes: a clear error.
  ServerProcess small;
  ASSERT_EQ(start_redis(small, "3mb"), "");
  auto sstore = open_store("redis://127.0.0.1:" + std::to_string(small.port()));
  ASSERT_TRUE(sstore.ok());
  Shape w = wide_fan(400'000, 16);
  auto wx = random_bytes(400'000, 6);
  auto wp = from_graph(w.graph, reg);
  ASSERT_TRUE(wp.ok());
  auto full = run_program(*wp, **sstore, {{"X", wx}}, 1, o);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), Status::Code::kResourceExhausted) << full.status().ToString();
  EXPECT_NE(full.status().message().find("OOM"), std::string::npos) << full.status().ToString();
}

// On a real server a claim holds for its lease and then lapses: memcached
// counts whole seconds (a lease is rounded up to one), Redis milliseconds.
void expect_claims_lapse(Store& store, std::chrono::milliseconds lease) {
  ASSERT_TRUE(store.expires()) << store.describe();
  const std::string key = "rf:claimtest:C" + std::to_string(lease.count());
  const auto t0 = std::chrono::steady_clock::now();
  auto first = store.add_expiring(key, {}, lease);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first);
  auto again = store.add_expiring(key, {}, lease);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  if (std::chrono::steady_clock::now() - t0 < lease) {
    EXPECT_FALSE(*again) << "a claim held for its lease was taken again";
  }
  bool lapsed = false;
  while (!lapsed && std::chrono::steady_clock::now() - t0 < lease + std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto later = store.add_expiring(key, {}, lease);
    ASSERT_TRUE(later.ok()) << later.status().ToString();
    lapsed = *later;
  }
  EXPECT_TRUE(lapsed) << "the claim never lapsed";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, lease) << "the claim lapsed before its lease";
}

TEST(RemMemcached, AClaimLapsesAfterItsLease) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc), "");
  auto store = open_store(mc_spec({&mc}));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_claims_lapse(**store, std::chrono::milliseconds(1000));
}

TEST(RemRedis, AClaimLapsesAfterItsLease) {
  ServerProcess rs;
  ASSERT_EQ(start_redis(rs), "");
  auto store = open_store("redis://127.0.0.1:" + std::to_string(rs.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_claims_lapse(**store, std::chrono::milliseconds(200));
}

}  // namespace
}  // namespace redflow::testing
