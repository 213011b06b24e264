// Coalescing chosen automatically (docs/rem.md, "Coalescing chosen
// automatically"): a store far away (each call delayed, as a remote store's
// round trip is) gets the most coalescing a level allows; the first
// scheduler of an instance records its choice and a later one takes it,
// whatever it would measure itself; a record that is not one redflow writes
// is refused by its key; cleaning the instance deletes the record. The
// stencil goes deep on a far store, no deeper in process.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "redflow/rem.hpp"
#include "rem/stencil.hpp"
#include "rem/value_codec.hpp"

namespace redflow::testing {
namespace {

using namespace redflow::rem;

// The in-process store with every call delayed by `delay`: a store whose
// round trip is that long.
class FarStore final : public Store {
 public:
  FarStore(Store& inner, std::chrono::microseconds delay) : inner_(inner), delay_(delay) {}
  Result<bool> add(const std::string& key, std::span<const std::byte> value) override { return wait(), inner_.add(key, value); }
  Result<SharedValue> get(const std::string& key) override { return wait(), inner_.get(key); }
  Result<bool> exists(const std::string& key) override { return wait(), inner_.exists(key); }
  Result<bool> replace(const std::string& key, std::span<const std::byte> value) override { return wait(), inner_.replace(key, value); }
  Result<bool> remove(const std::string& key) override { return wait(), inner_.remove(key); }
  bool expires() const override { return inner_.expires(); }
  Result<bool> add_expiring(const std::string& key, std::span<const std::byte> value, std::chrono::milliseconds ttl) override {
    return wait(), inner_.add_expiring(key, value, ttl);
  }
  std::size_t max_value_bytes() const override { return inner_.max_value_bytes(); }
  std::string describe() const override { return "far " + inner_.describe(); }

 private:
  void wait() const { std::this_thread::sleep_for(delay_); }
  Store& inner_;
  std::chrono::microseconds delay_;
};

// 8 x 8 tiles of 32 x 32 floats: 64 tasks a level, 4 KiB tiles.
Program small_stencil() {
  auto p = stencil::program({.n = 256, .tiles = 8, .steps = 3});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

TEST(RemCoalesceChoice, AFarStoreGetsTheMostALevelAllowsAndTheChoiceRuns) {
  const Program p = small_stencil();
  auto inner = make_inproc_store();
  FarStore far(*inner, std::chrono::milliseconds(2));
  auto c = choose_coalescing(p, far);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_GE(c->round_trip_us, 1500.0);
  EXPECT_EQ(c->options.tasks, 8u) << "64 tasks a level: at most 8 per coalesced task";
  EXPECT_TRUE(c->options.labels);
  EXPECT_FALSE(c->recorded);
  // A fine task of the stencil: existence check, claim, up to 5 reads, 5 writes, 5 retirements.
  EXPECT_GT(c->task_round_trips, 10.0);
  EXPECT_LT(c->task_round_trips, 18.0);
  EXPECT_GT(c->task_bytes, 4096.0);
  auto coalesced = coalesce(p, c->options);
  ASSERT_TRUE(coalesced.ok());
  auto run = run_program(coalesced->program, *inner, {}, 2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto grid = stencil::gather({.n = 256, .tiles = 8, .steps = 3}, run->outputs);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(*grid, stencil::run_threads({.n = 256, .tiles = 8, .steps = 3}, 2));
}

TEST(RemCoalesceChoice, TheFirstChoiceOfAnInstanceHoldsForEveryLaterScheduler) {
  const Program p = small_stencil();
  auto inner = make_inproc_store();
  FarStore far(*inner, std::chrono::milliseconds(2));
  auto first = choose_coalescing(p, far, "chosen1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->options.tasks, 8u);
  EXPECT_FALSE(first->recorded);
  // The same store without the delay would choose for itself; it takes the record.
  auto later = choose_coalescing(p, *inner, "chosen1");
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_TRUE(later->recorded);
  EXPECT_EQ(later->options.tasks, 8u);
  EXPECT_TRUE(later->options.labels);
  // Another instance is not bound by it.
  auto other = choose_coalescing(p, *inner, "chosen2");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->recorded);
  // Cleaning the instance deletes the record with the rest.
  auto coalesced = coalesce(p, later->options);
  ASSERT_TRUE(coalesced.ok());
  RunOptions o;
  o.instance = "chosen1";
  ASSERT_TRUE(run_program(coalesced->program, *inner, {}, 2, o).ok());
  LabelCodec codec(*inner, coalesced->program, "chosen1");
  ASSERT_TRUE(**inner->get(codec.coalesce_key()) == std::vector<std::byte>(
                                                        reinterpret_cast<const std::byte*>("redflow coalesce tasks=8 labels=1"),
                                                        reinterpret_cast<const std::byte*>("redflow coalesce tasks=8 labels=1") + 33));
  ASSERT_TRUE(clean_instance(coalesced->program, *inner, "chosen1").ok());
  EXPECT_EQ(*inner->get(codec.coalesce_key()), nullptr);
}

TEST(RemCoalesceChoice, ARecordRedflowDidNotWriteIsRefusedByItsKey) {
  const Program p = small_stencil();
  auto store = make_inproc_store();
  LabelCodec codec(*store, p, "odd");
  const std::string junk = "redflow coalesce tasks=0 labels=1";
  ASSERT_TRUE(*store->add(codec.coalesce_key(), std::as_bytes(std::span(junk))));
  auto c = choose_coalescing(p, *store, "odd");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("the coalescing recorded under rf:odd:coalesce is not one redflow writes"), std::string::npos)
      << c.status().ToString();
}

// The stencil's depth: on a far store a task goes as deep as the steps
// allow and the deep program computes the same grid; in process, where the
// store costs little against the compute, no deeper; never deeper than the
// steps or a tile's side.
TEST(RemCoalesceChoice, TheStencilGoesDeepOnAFarStoreAndLessInProcess) {
  const stencil::Params sp{.n = 1024, .tiles = 4, .steps = 20};  // tiles of 256 x 256: at most depth 16 (20 steps)
  auto inner = make_inproc_store();
  FarStore far(*inner, std::chrono::milliseconds(2));
  auto deep = stencil::choose_depth(sp, far);
  ASSERT_TRUE(deep.ok()) << deep.status().ToString();
  EXPECT_EQ(deep->depth, 16u) << "a depth-1 task costs " << deep->task_store_us << " us of the store, a tile-step " << deep->tile_step_us << " us";
  EXPECT_GE(deep->coalescing.round_trip_us, 1500.0);
  auto near = stencil::choose_depth(sp, *inner);
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  EXPECT_LE(near->depth, deep->depth) << "in process a depth-1 task costs " << near->task_store_us << " us of the store, a tile-step "
                                      << near->tile_step_us << " us";
  auto few = stencil::choose_depth({.n = 1024, .tiles = 4, .steps = 3}, far);
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(few->depth, 2u) << "3 steps: the largest power of two not above them";
  auto small_tiles = stencil::choose_depth({.n = 64, .tiles = 16, .steps = 20}, far);
  ASSERT_TRUE(small_tiles.ok());
  EXPECT_EQ(small_tiles->depth, 4u) << "tiles of 4 x 4: no deeper than their side";
  stencil::Params chosen = sp;
  chosen.depth = deep->depth;
  auto p = stencil::program(chosen);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto c = coalesce(*p, deep->coalescing.options);
  ASSERT_TRUE(c.ok());
  auto run = run_program(c->program, *inner, {}, 2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto grid = stencil::gather(chosen, run->outputs);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(*grid, stencil::run_threads(sp, 2));
}

}  // namespace
}  // namespace redflow::testing
