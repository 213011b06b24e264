// Retiring labels (docs/rem.md, "Retiring labels"): once every task that
// needs a label has run, its value leaves the store and only its size and
// checksum stay under its key. On the in-process store (inline and chunked
// values), a real memcached (chunked) and a real redis-server: which labels
// are retired, that their chunks are gone, that a late writer is still
// checked against the checksum, that a run holds far fewer bytes at its peak,
// and that a label retired before its consumer ran is an error, not a skip;
// and that a value read straight out of the store's record is aligned.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>

#include "redflow/rem.hpp"
#include "rem/stencil.hpp"
#include "rem/value_codec.hpp"
#include "rem_servers.hpp"
#include "test_graphs.hpp"

namespace redflow::testing {
namespace {

using namespace redflow::rem;

Computes plus(unsigned k) {
  return [k](std::span<const std::span<const std::byte>> in, std::span<Value> out) {
    for (Value& o : out)
      for (std::size_t i = 0; i < o.size(); ++i) {
        unsigned sum = k;
        for (const auto& v : in) sum += static_cast<unsigned>(v[i]);
        o[i] = static_cast<std::byte>(sum);
      }
    return Status::Ok();
  };
}

// a -> t1 -> b; t2: b -> c; t3: b, c -> d; t4: d -> e (result), f (read by
// nobody). b has two consumers, and whoever runs t3 has seen t2 done, so
// b, c and d are retired by every run; a (input), e (result) and f stay.
struct Retirable {
  Program p{"retire"};
  LabelId a, b, c, d, e, f;
  explicit Retirable(std::size_t bytes) {
    a = p.input("a", bytes);
    b = p.label("b", bytes);
    c = p.label("c", bytes);
    d = p.label("d", bytes);
    e = p.label("e", bytes);
    f = p.label("f", bytes);
    p.task("t1", {a}, {b}, plus(1));
    p.task("t2", {b}, {c}, plus(2));
    p.task("t3", {b, c}, {d}, plus(3));
    p.task("t4", {d}, {e, f}, plus(4));
    p.result(e);
  }
};

Value value_of(const LabelValue& v) { return Value(v.bytes.begin(), v.bytes.end()); }

// On `store`: a run retires b, c and d (their chunks gone too) and keeps a,
// e and f; with retire_labels off, or labels below retire_min_bytes, every
// label keeps its value; a late writer of a retired label is still checked
// against its checksum.
void expect_retired_after_run(Store& store, std::size_t bytes) {
  Retirable r(bytes);
  ASSERT_TRUE(r.p.validate().ok());
  const Value a = random_bytes(bytes, 41);
  const std::map<std::string, std::span<const std::byte>> in{{"a", a}};
  const bool chunked = bytes + 64 > store.max_value_bytes();
  RunOptions kept;
  kept.instance = "kept";
  kept.retire_labels = false;
  kept.timeout = std::chrono::seconds(30);
  auto full = run_program(r.p, store, in, 2, kept);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->stats.retired, 0u);
  RunOptions o = kept;
  o.instance = "small";
  o.retire_labels = true;
  o.retire_min_bytes = bytes + 1;  // every label is below it: none retired
  auto small = run_program(r.p, store, in, 2, o);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->stats.retired, 0u);
  EXPECT_TRUE(LabelCodec(store, r.p, "small").read(r.b)->present());
  o.instance = "retired";
  o.retire_min_bytes = bytes;
  auto run = run_program(r.p, store, in, 2, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outputs, full->outputs);
  EXPECT_GE(run->stats.retired, 3u);
  LabelCodec kept_codec(store, r.p, "kept"), codec(store, r.p, "retired");
  for (LabelId l : {r.a, r.b, r.c, r.d, r.e, r.f}) {
    SCOPED_TRACE("label " + r.p.label(l).name);
    auto whole = kept_codec.read(l);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    ASSERT_TRUE(whole->present());
    auto v = codec.read(l);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    const bool retire = l == r.b || l == r.c || l == r.d;
    EXPECT_EQ(v->retired(), retire);
    EXPECT_EQ(v->present(), !retire);
    // Retired or not, the record tells the value's size and checksum.
    EXPECT_EQ(v->size, bytes);
    EXPECT_EQ(v->checksum, whole->checksum);
    if (!retire) {
      EXPECT_EQ(value_of(*v), value_of(*whole));
    }
    if (chunked) {
      // A retired label's chunks are gone; a kept one's are there (so the
      // chunk keys looked at are the right ones).
      auto chunk = store.get(LabelCodec::chunk_key(codec.key(l), v->checksum, 0));
      ASSERT_TRUE(chunk.ok()) << chunk.status().ToString();
      EXPECT_EQ(*chunk == nullptr, retire);
    }
    if (retire) {
      // Single assignment holds: the same value again is "already there", another is refused by name.
      auto same = codec.write(l, value_of(*whole));
      ASSERT_TRUE(same.ok()) << same.status().ToString();
      EXPECT_EQ(*same, WriteOutcome::kAlreadyThere);
      Value other = value_of(*whole);
      other[bytes / 2] ^= std::byte{1};
      auto refused = codec.write(l, other);
      ASSERT_FALSE(refused.ok()) << "a different value was taken over a retired label";
      EXPECT_NE(refused.status().message().find("label '" + r.p.label(l).name + "' already holds a different value"), std::string::npos)
          << refused.status().ToString();
    }
  }
  // A second run of the finished instance executes nothing and still reads its result.
  auto again = run_program(r.p, store, in, 1, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stats.executed, 0u);
  EXPECT_EQ(again->outputs, full->outputs);
}

TEST(RemRetire, InprocInlineAndChunked) {
  for (std::size_t limit : {std::size_t{1} << 30, std::size_t{1000}}) {
    SCOPED_TRACE(fmt::format("item limit {}", limit));
    auto store = make_inproc_store(limit);
    expect_retired_after_run(*store, 2500);
  }
}

TEST(RemRetire, MemcachedChunked) {
  ServerProcess mc;
  ASSERT_EQ(start_memcached(mc, 64, 64), "");  // 64 KiB items
  auto store = open_store("memcached://127.0.0.1:" + std::to_string(mc.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_retired_after_run(**store, 100'000);
}

TEST(RemRetire, Redis) {
  ServerProcess rs;
  ASSERT_EQ(start_redis(rs), "");
  auto store = open_store("redis://127.0.0.1:" + std::to_string(rs.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  expect_retired_after_run(**store, 4096);
}

// The bytes the store holds, as records are added and replaced (the
// in-process store below it): the peak of a run.
class MeteredStore final : public Store {
 public:
  explicit MeteredStore(Store& inner) : inner_(inner) {}
  Result<bool> add(const std::string& key, std::span<const std::byte> value) override {
    auto added = inner_.add(key, value);
    if (added.ok() && *added) count(key, value.size());
    return added;
  }
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override {
    auto replaced = inner_.replace(key, value);
    if (replaced.ok() && *replaced) count(key, value.size());
    return replaced;
  }
  Result<bool> remove(const std::string& key) override {
    auto gone = inner_.remove(key);
    if (gone.ok() && *gone) count(key, 0);
    return gone;
  }
  Result<SharedValue> get(const std::string& key) override { return inner_.get(key); }
  Result<bool> exists(const std::string& key) override { return inner_.exists(key); }
  bool expires() const override { return inner_.expires(); }
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) override {
    return inner_.add_expiring(key, value, ttl);
  }
  std::size_t max_value_bytes() const override { return inner_.max_value_bytes(); }
  std::string describe() const override { return inner_.describe(); }
  std::size_t peak() {
    std::lock_guard lock(mu_);
    return peak_;
  }

 private:
  void count(const std::string& key, std::size_t bytes) {
    std::lock_guard lock(mu_);
    std::size_t& held = sizes_[key];
    now_ = now_ - held + bytes;
    held = bytes;
    peak_ = std::max(peak_, now_);
  }
  Store& inner_;
  std::mutex mu_;
  std::map<std::string, std::size_t> sizes_;
  std::size_t now_ = 0, peak_ = 0;
};

// docs/rem.md's promise: a long run holds about the labels of the tasks in
// flight, not every label it wrote. A 30-step stencil on 4 x 4 tiles holds
// at its peak the grid a few steps deep; kept, all 31 grids.
TEST(RemRetire, ALongStencilHoldsAFewStepsNotAll) {
  const stencil::Params sp{.n = 128, .tiles = 4, .steps = 30};
  auto prog = stencil::program(sp);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  const std::size_t grid = sp.n * sp.n * 4;
  std::map<bool, std::size_t> peak;
  for (bool retire : {false, true}) {
    auto inner = make_inproc_store();
    MeteredStore store(*inner);
    RunOptions o;
    o.retire_labels = retire;
    o.retire_min_bytes = 0;  // the 4 KiB tiles and their edges too
    o.timeout = std::chrono::seconds(60);
    auto run = run_program(*prog, store, {}, 2, o);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto got = stencil::gather(sp, run->outputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, stencil::run_threads(sp, 2));
    peak[retire] = store.peak();
  }
  EXPECT_GT(peak[false], 30 * grid) << "kept: every step's grid stays";
  EXPECT_LT(peak[true], 8 * grid) << "retired: peak " << peak[true] << " bytes, kept " << peak[false];
}

// A label retired before a task that needs it ran means the store holds
// another run's labels: the scheduler stops naming both, rather than take
// the task as done.
TEST(RemRetire, ALabelRetiredBeforeItsConsumerRanIsAnError) {
  Retirable r(64);
  ASSERT_TRUE(r.p.validate().ok());
  auto store = make_inproc_store();
  LabelCodec codec(*store, r.p, "early");
  ASSERT_TRUE(codec.bind_instance(true).ok());
  const Value a = random_bytes(64, 5);
  ASSERT_TRUE(codec.write(r.a, a).ok());
  LabelValue b;
  ASSERT_TRUE(codec.write(r.b, random_bytes(64, 6), nullptr, &b).ok());
  ASSERT_TRUE(codec.retire(r.b, b).ok());
  RunOptions o;
  o.instance = "early";
  o.timeout = std::chrono::seconds(10);
  auto run = run_scheduler(r.p, *store, {{"a", a}}, o);
  ASSERT_FALSE(run.ok()) << "a task whose input was retired too early was taken as done";
  EXPECT_NE(run.status().message().find("label 'b' was retired before task 't2'"), std::string::npos) << run.status().ToString();
}

// The in-process store, but `before_chunk` runs once, just before the first
// read of a chunk: a reader that got a chunked record then meets what
// happened meanwhile.
class ChunkRace final : public Store {
 public:
  ChunkRace(Store& inner, std::function<void()> before_chunk) : inner_(inner), before_chunk_(std::move(before_chunk)) {}
  Result<bool> add(const std::string& key, std::span<const std::byte> value) override { return inner_.add(key, value); }
  Result<SharedValue> get(const std::string& key) override {
    if (std::count(key.begin(), key.end(), ':') == 4 && before_chunk_) std::exchange(before_chunk_, nullptr)();
    return inner_.get(key);
  }
  Result<bool> exists(const std::string& key) override { return inner_.exists(key); }
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override { return inner_.replace(key, value); }
  Result<bool> remove(const std::string& key) override { return inner_.remove(key); }
  std::size_t max_value_bytes() const override { return inner_.max_value_bytes(); }
  std::string describe() const override { return "race " + inner_.describe(); }

 private:
  Store& inner_;
  std::function<void()> before_chunk_;
};

// docs/rem.md: a reader of a chunked record whose chunk is gone looks at the
// record again: retired meanwhile is the race with a retirer (the label
// reads as retired), anything else is damage (a named error).
TEST(RemRetire, AChunkGoneUnderAReaderIsARetirementOrDamage) {
  Retirable r(2500);
  ASSERT_TRUE(r.p.validate().ok());
  for (bool retired : {true, false}) {
    SCOPED_TRACE(retired ? "retired meanwhile" : "chunk deleted");
    auto inner = make_inproc_store(1000);  // 2500 bytes: three chunks
    LabelCodec writer(*inner, r.p, "race");
    LabelValue b;
    ASSERT_TRUE(writer.write(r.b, random_bytes(2500, 8), nullptr, &b).ok());
    ChunkRace store(*inner, [&] {
      if (retired) {
        ASSERT_TRUE(writer.retire(r.b, b).ok());
      } else {
        ASSERT_TRUE(*inner->remove(LabelCodec::chunk_key(writer.key(r.b), b.checksum, 0)));
      }
    });
    auto got = LabelCodec(store, r.p, "race").read(r.b);
    if (retired) {
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_TRUE(got->retired());
      EXPECT_EQ(got->checksum, b.checksum);
    } else {
      ASSERT_FALSE(got.ok()) << "a value with a chunk gone was served";
      EXPECT_NE(got.status().message().find("label 'b' (key rf:race:L1) is corrupted in the store: chunk 0 of 3 is missing"), std::string::npos)
          << got.status().ToString();
    }
  }
}

// The in-process store hands tasks the record it holds: the value in it
// starts 16-byte aligned whatever the key's length, so a task may read
// floats and integers straight out of it (UBSan checks those reads in the
// sanitizer stage; this checks the promise in every build).
TEST(RemCodec, AnInlineValueIsReadSixteenByteAligned) {
  Program p("aligned");
  std::vector<LabelId> ls;
  for (int i = 0; i < 40; ++i) ls.push_back(p.input(std::string(static_cast<std::size_t>(i % 7) + 1, 'x') + std::to_string(i), 24));
  for (LabelId l : ls) p.result(l);
  ASSERT_TRUE(p.validate().ok());
  auto store = make_inproc_store();
  for (const std::string instance : {"a", "bb", "ccc1234"}) {  // keys of many lengths
    LabelCodec codec(*store, p, instance);
    for (LabelId l : ls) {
      LabelValue written;
      ASSERT_TRUE(codec.write(l, random_bytes(24, l), nullptr, &written).ok());
      auto v = codec.read(l);
      ASSERT_TRUE(v.ok() && v->present()) << v.status().ToString();
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v->bytes.data()) % 16, 0u) << "key " << codec.key(l);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(written.bytes.data()) % 16, 0u) << "key " << codec.key(l);
      EXPECT_EQ(value_of(*v), random_bytes(24, l));
    }
  }
}

}  // namespace
}  // namespace redflow::testing
