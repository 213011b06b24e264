// Tests for the built-in actors (src/actors/builtins.cpp) and for actor
// plugins (Registry::load_plugin with tests/plugins/test_plugin.cpp). Each
// built-in is compared with a plain reference written here, on seeded random
// data and on edge sizes (and the references with known answers computed
// outside this file), both on one core (no ParallelLoop) and with a
// ParallelLoop that really runs chunks on several threads, so that chunking
// bugs (overlaps, gaps, races) show up. Shape checks are tested for the
// message they give, not only for rejecting.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "actor_test_util.hpp"
#include "redflow/actor_context.hpp"
#include "redflow/registry.hpp"

namespace redflow {
namespace {

using testing::Bytes;
using testing::check;
using testing::for_each_loop;
using testing::from_bytes;
using testing::random_bytes;
using testing::random_i32;
using testing::run_actor;
using testing::ActorRun;
using testing::ThreadLoop;
using testing::to_bytes;

// ---------------------------------------------------------------------------
// References.

std::vector<std::int32_t> ref_binary(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b, bool mul) {
  std::vector<std::int32_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<std::uint32_t>(a[i]), y = static_cast<std::uint32_t>(b[i]);
    out[i] = static_cast<std::int32_t>(mul ? x * y : x + y);
  }
  return out;
}

std::vector<std::int32_t> ref_matmul(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b,
                                     std::size_t n) {
  std::vector<std::int32_t> c(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      std::uint32_t sum = 0;
      for (std::size_t k = 0; k < n; ++k) {
        sum += static_cast<std::uint32_t>(a[i * n + k]) * static_cast<std::uint32_t>(b[k * n + j]);
      }
      c[i * n + j] = static_cast<std::int32_t>(sum);
    }
  }
  return c;
}

Bytes ref_reorder(const Bytes& in, const std::vector<std::uint32_t>& perm, std::size_t elem) {
  Bytes out;
  for (std::uint32_t idx : perm) out.insert(out.end(), in.begin() + idx * elem, in.begin() + (idx + 1) * elem);
  return out;
}

// ---------------------------------------------------------------------------
// Known answers. The references above are code in this file, so they are
// themselves checked against values computed independently (Python's exact
// integers, wrapped to int32) for fixed inputs: A[i] = i*i*2654435761 + 12345
// and B[i] = (i+3)*40503 - 1000000, wrapped, i = 0..15.

const std::vector<std::int32_t> kKnownA = {12345,      -1640519190, 2027820797, -1879869582, -478688439, 1936396930,
                                           1070419229, 1218345754,  -1914790791, 260944186,  -844383907, -935807774,
                                           -13327415,  1923057170,  578378685,   247604426};
const std::vector<std::int32_t> kKnownB = {-878491, -837988, -797485, -756982, -716479, -675976, -635473, -594970,
                                           -554467, -513964, -473461, -432958, -392455, -351952, -311449, -270946};

TEST(BuiltinsTest, KnownAnswersForTheI32Kernels) {
  Registry reg = Registry::with_builtins();
  const std::vector<std::int32_t> sum = {-866146,     -1641357178, 2027023312, -1880626564, -479404918, 1935720954,
                                         1069783756,  1217750784,  -1915345258, 260430222,  -844857368, -936240732,
                                         -13719870,   1922705218,  578067236,   247333480};
  const std::vector<std::int32_t> prod = {2039930493,  -2032081256, 1597863559,  1691541620,  -104368503, -2143188240,
                                          1516728275,  -362842276,  -1840254027, -1268828408, -1296854145, -277652668,
                                          -859512703,  -1395755680, -239703029,  -39643476};
  const std::vector<std::int32_t> matmul = {-1012032654, 1966943952,  650953262,   -665037428, -1944375454, 276174288,
                                            -1798243266, 422306476,   -1564523822, 2098659280, 1466875086,  835090892,
                                            127522242,   -1155535664, 1856373726,  573315820};  // 4x4, row-major
  const std::vector<std::int32_t> sorted = {-1914790791, -1879869582, -1640519190, -935807774, -844383907, -478688439,
                                            -13327415,   12345,       247604426,   260944186,  578378685,  1070419229,
                                            1218345754,  1923057170,  1936396930,  2027820797};
  const Bytes a = to_bytes(kKnownA), b = to_bytes(kKnownB);
  for_each_loop([&](ParallelLoop* loop) {
    EXPECT_EQ(from_bytes<std::int32_t>(run_actor(reg, "i32.add", {a, b}, 64, "", loop).out), sum);
    EXPECT_EQ(from_bytes<std::int32_t>(run_actor(reg, "i32.mul", {a, b}, 64, "", loop).out), prod);
    EXPECT_EQ(from_bytes<std::int32_t>(run_actor(reg, "i32.matmul", {a, b}, 64, "", loop).out), matmul);
    EXPECT_EQ(from_bytes<std::int32_t>(run_actor(reg, "i32.sort", {a}, 64, "", loop).out), sorted);
  });
  // The references the randomised tests trust agree with the independent values.
  EXPECT_EQ(ref_binary(kKnownA, kKnownB, false), sum);
  EXPECT_EQ(ref_binary(kKnownA, kKnownB, true), prod);
  EXPECT_EQ(ref_matmul(kKnownA, kKnownB, 4), matmul);
}

TEST(BuiltinsTest, KnownAnswersForTheSpecialActors) {
  Registry reg = Registry::with_builtins();
  const Bytes in = to_bytes(std::vector<std::uint8_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
  EXPECT_EQ(run_actor(reg, "rf.split", {in}, 3, "offset=4").out, to_bytes(std::vector<std::uint8_t>{14, 15, 16}));
  EXPECT_EQ(run_actor(reg, "rf.collect", {to_bytes(std::vector<std::uint8_t>{1, 2}), Bytes(),
                                          to_bytes(std::vector<std::uint8_t>{3})},
                      3).out,
            to_bytes(std::vector<std::uint8_t>{1, 2, 3}));
  // Elements of 2 bytes: picks elements 4, 0, 0, 2 of (10 11)(12 13)(14 15)(16 17)(18 19).
  const Bytes perm = to_bytes(std::vector<std::uint32_t>{4, 0, 0, 2});
  const Bytes picked = to_bytes(std::vector<std::uint8_t>{18, 19, 10, 11, 10, 11, 14, 15});
  EXPECT_EQ(run_actor(reg, "rf.reorder", {in, perm}, 8, "elem=2").out, picked);
  EXPECT_EQ(ref_reorder(in, {4, 0, 0, 2}, 2), picked);
}

// ---------------------------------------------------------------------------

TEST(BuiltinsTest, RegistersEveryBuiltinWithCheckAndSummary) {
  Registry reg = Registry::with_builtins();
  for (const char* name : {"rf.split", "rf.collect", "rf.compare", "rf.reorder", "i32.add", "i32.mul", "i32.matmul", "i32.sort"}) {
    const ActorSpec* spec = reg.find(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_TRUE(spec->function) << name;
    EXPECT_TRUE(spec->check) << name;
    EXPECT_FALSE(spec->summary.empty()) << name;
    EXPECT_EQ(spec->summary.find('\n'), std::string::npos) << name;
    // The paper runs exactly the special actors on the driver.
    EXPECT_EQ(spec->on_driver, std::string_view(name).starts_with("rf.")) << name;
  }
  EXPECT_EQ(reg.names().size(), 8u);
}

TEST(BuiltinsTest, SplitExtractsTheRange) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(1);
  Bytes in = random_bytes(rng, 1000);
  struct Case {
    std::size_t offset, size;
  };
  for_each_loop([&](ParallelLoop* loop) {
    for (Case c : {Case{0, 1000}, Case{0, 0}, Case{1000, 0}, Case{999, 1}, Case{17, 500}, Case{0, 1}}) {
      SCOPED_TRACE("offset " + std::to_string(c.offset) + " size " + std::to_string(c.size));
      std::string args = "offset=" + std::to_string(c.offset);
      EXPECT_EQ(check(reg, "rf.split", {in.size()}, c.size, args), "");
      ActorRun r = run_actor(reg, "rf.split", {in}, c.size, args, loop);
      ASSERT_FALSE(r.failure.has_value()) << *r.failure;
      EXPECT_EQ(r.out, Bytes(in.begin() + c.offset, in.begin() + c.offset + c.size));
    }
  });
}

TEST(BuiltinsTest, SplitCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  // Offset beyond the input, and a range running past its end.
  std::string e = check(reg, "rf.split", {100}, 0, "offset=101");
  EXPECT_NE(e.find("beyond the input's 100 bytes"), std::string::npos) << e;
  e = check(reg, "rf.split", {100}, 8, "offset=96");
  EXPECT_NE(e.find("offset 96 + 8 output bytes"), std::string::npos) << e;
  // A huge offset must not wrap around in offset + size.
  e = check(reg, "rf.split", {100}, 8, "offset=18446744073709551615");
  EXPECT_NE(e.find("beyond"), std::string::npos) << e;
  e = check(reg, "rf.split", {100}, 8, "");
  EXPECT_NE(e.find("missing required arg 'offset'"), std::string::npos) << e;
  e = check(reg, "rf.split", {100}, 8, "offset=abc");
  EXPECT_NE(e.find("'offset' must be a non-negative integer, got 'abc'"), std::string::npos) << e;
  e = check(reg, "rf.split", {100, 100}, 8, "offset=0");
  EXPECT_NE(e.find("expects 1 input, got 2"), std::string::npos) << e;
}

TEST(BuiltinsTest, SplitFailsAtRunTimeOnBadRange) {
  Registry reg = Registry::with_builtins();
  Bytes in(10);
  ActorRun r = run_actor(reg, "rf.split", {in}, 4, "offset=8");
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_NE(r.failure->find("beyond"), std::string::npos) << *r.failure;
  r = run_actor(reg, "rf.split", {in}, 4, "");
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_NE(r.failure->find("offset"), std::string::npos) << *r.failure;
}

TEST(BuiltinsTest, CollectConcatenatesInPortOrder) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(2);
  for_each_loop([&](ParallelLoop* loop) {
    for (std::vector<std::size_t> sizes : std::vector<std::vector<std::size_t>>{
             {0}, {1}, {100}, {3, 0, 17, 1}, {0, 0}, {4096, 1000, 7}}) {
      std::vector<Bytes> inputs;
      Bytes expected;
      for (std::size_t s : sizes) {
        inputs.push_back(random_bytes(rng, s));
        expected.insert(expected.end(), inputs.back().begin(), inputs.back().end());
      }
      EXPECT_EQ(check(reg, "rf.collect", sizes, expected.size()), "");
      ActorRun r = run_actor(reg, "rf.collect", inputs, expected.size(), "", loop);
      ASSERT_FALSE(r.failure.has_value()) << *r.failure;
      EXPECT_EQ(r.out, expected);
    }
  });
}

TEST(BuiltinsTest, CollectCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  std::string e = check(reg, "rf.collect", {4, 8}, 16);
  EXPECT_NE(e.find("inputs hold 12 bytes in total but the output has 16"), std::string::npos) << e;
  e = check(reg, "rf.collect", {}, 0);
  EXPECT_NE(e.find("at least 1 input"), std::string::npos) << e;
  ActorRun r = run_actor(reg, "rf.collect", {Bytes(4), Bytes(8)}, 16);
  ASSERT_TRUE(r.failure.has_value());
}

TEST(BuiltinsTest, ReorderGathersElements) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(3);
  // 1, 2, 4, 8, 16 take the fixed-size paths, 3 and 12 the generic one.
  for (std::size_t elem : {1u, 2u, 3u, 4u, 8u, 12u, 16u}) {
    for (std::size_t n : {0u, 1u, 7u, 1000u}) {
      for (std::size_t count : {std::size_t{0}, n, 2 * n + 1}) {
        if (n == 0 && count > 0) continue;  // nothing to pick from
        SCOPED_TRACE("elem " + std::to_string(elem) + " n " + std::to_string(n) + " count " + std::to_string(count));
        Bytes in = random_bytes(rng, n * elem);
        std::vector<std::uint32_t> perm(count);
        if (count == n) {
          // A true permutation...
          for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<std::uint32_t>(i);
          std::shuffle(perm.begin(), perm.end(), rng);
        } else {
          // ...or any selection with repeats.
          std::uniform_int_distribution<std::uint32_t> pick(0, static_cast<std::uint32_t>(n - 1));
          for (auto& p : perm) p = pick(rng);
        }
        std::string args = "elem=" + std::to_string(elem);
        Bytes expected = ref_reorder(in, perm, elem);
        EXPECT_EQ(check(reg, "rf.reorder", {in.size(), perm.size() * 4}, expected.size(), args), "");
        for_each_loop([&](ParallelLoop* loop) {
          ActorRun r = run_actor(reg, "rf.reorder", {in, to_bytes(perm)}, expected.size(), args, loop);
          ASSERT_FALSE(r.failure.has_value()) << *r.failure;
          EXPECT_EQ(r.out, expected);
        });
      }
    }
  }
}

TEST(BuiltinsTest, ReorderFailsOnIndexOutOfRange) {
  Registry reg = Registry::with_builtins();
  std::vector<std::int32_t> in(10, 7);
  std::vector<std::uint32_t> perm(100, 3);
  perm[5] = 123;
  perm[60] = 999;                // a second bad index, in a different chunk
  perm[99] = 0xFFFFFFFFu;        // would overflow idx * elem in 32 bits
  for_each_loop([&](ParallelLoop* loop) {
    ActorRun r = run_actor(reg, "rf.reorder", {to_bytes(in), to_bytes(perm)}, perm.size() * 4, "elem=4", loop);
    ASSERT_TRUE(r.failure.has_value());
    // The first bad position is reported, whichever chunk finds it first.
    EXPECT_EQ(*r.failure, "permutation index 123 out of range (10 elements)");
  });
  // Any index into an empty input is out of range.
  ActorRun r = run_actor(reg, "rf.reorder", {Bytes(), to_bytes(std::vector<std::uint32_t>{0})}, 4, "elem=4");
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(*r.failure, "permutation index 0 out of range (0 elements)");
}

TEST(BuiltinsTest, ReorderCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  std::string e = check(reg, "rf.reorder", {40, 16}, 16, "");
  EXPECT_NE(e.find("missing required arg 'elem'"), std::string::npos) << e;
  e = check(reg, "rf.reorder", {40, 16}, 16, "elem=0");
  EXPECT_NE(e.find("'elem' must be > 0"), std::string::npos) << e;
  e = check(reg, "rf.reorder", {42, 16}, 16, "elem=4");
  EXPECT_NE(e.find("input 0 has 42 bytes, not a whole number of 4-byte elements"), std::string::npos) << e;
  e = check(reg, "rf.reorder", {40, 15}, 16, "elem=4");
  EXPECT_NE(e.find("permutation) has 15 bytes, not a multiple of 4"), std::string::npos) << e;
  e = check(reg, "rf.reorder", {40, 16}, 20, "elem=4");
  EXPECT_NE(e.find("output has 20 bytes but the permutation selects 4 elements of 4 bytes"), std::string::npos) << e;
  e = check(reg, "rf.reorder", {40}, 16, "elem=4");
  EXPECT_NE(e.find("expects 2 inputs, got 1"), std::string::npos) << e;
}

TEST(BuiltinsTest, AddAndMulMatchReference) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(4);
  for (std::size_t n : {0u, 1u, 2u, 3u, 1000u, 12345u}) {
    SCOPED_TRACE("n " + std::to_string(n));
    auto a = random_i32(rng, n), b = random_i32(rng, n);  // full range: overflow is common
    for (bool mul : {false, true}) {
      const char* name = mul ? "i32.mul" : "i32.add";
      EXPECT_EQ(check(reg, name, {n * 4, n * 4}, n * 4), "");
      auto expected = ref_binary(a, b, mul);
      for_each_loop([&](ParallelLoop* loop) {
        ActorRun r = run_actor(reg, name, {to_bytes(a), to_bytes(b)}, n * 4, "", loop);
        ASSERT_FALSE(r.failure.has_value()) << *r.failure;
        EXPECT_EQ(from_bytes<std::int32_t>(r.out), expected) << name;
      });
    }
  }
}

TEST(BuiltinsTest, AddAndMulWrapOnOverflow) {
  Registry reg = Registry::with_builtins();
  std::vector<std::int32_t> a = {INT32_MAX, INT32_MIN, INT32_MIN, -1, 65536, INT32_MAX};
  std::vector<std::int32_t> b = {1, -1, INT32_MIN, INT32_MIN, 65536, INT32_MAX};
  ActorRun sum = run_actor(reg, "i32.add", {to_bytes(a), to_bytes(b)}, a.size() * 4);
  ActorRun prod = run_actor(reg, "i32.mul", {to_bytes(a), to_bytes(b)}, a.size() * 4);
  EXPECT_EQ(from_bytes<std::int32_t>(sum.out), (std::vector<std::int32_t>{INT32_MIN, INT32_MAX, 0, INT32_MAX, 131072, -2}));
  EXPECT_EQ(from_bytes<std::int32_t>(prod.out), (std::vector<std::int32_t>{INT32_MAX, INT32_MIN, 0, INT32_MIN, 0, 1}));
}

TEST(BuiltinsTest, AddAndMulCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  for (const char* name : {"i32.add", "i32.mul"}) {
    SCOPED_TRACE(name);
    std::string e = check(reg, name, {16, 12}, 16);
    EXPECT_NE(e.find("inputs differ in size (16 and 12 bytes)"), std::string::npos) << e;
    e = check(reg, name, {6, 6}, 6);
    EXPECT_NE(e.find("input 0 has 6 bytes, not a whole number of int32"), std::string::npos) << e;
    e = check(reg, name, {16, 16}, 8);
    EXPECT_NE(e.find("output has 8 bytes, the inputs 16"), std::string::npos) << e;
    e = check(reg, name, {16}, 16);
    EXPECT_NE(e.find("expects 2 inputs, got 1"), std::string::npos) << e;
    ActorRun r = run_actor(reg, name, {Bytes(16), Bytes(12)}, 16);
    EXPECT_TRUE(r.failure.has_value());
  }
}

TEST(BuiltinsTest, MatmulMatchesReference) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(5);
  // Sizes below, between and above the block sizes (32 rows, 64 k, 512 columns).
  for (std::size_t n : {0u, 1u, 2u, 7u, 33u, 65u, 100u, 130u, 520u}) {
    SCOPED_TRACE("n " + std::to_string(n));
    auto a = random_i32(rng, n * n), b = random_i32(rng, n * n);  // full range: products overflow
    auto expected = ref_matmul(a, b, n);
    EXPECT_EQ(check(reg, "i32.matmul", {n * n * 4, n * n * 4}, n * n * 4), "");
    for_each_loop([&](ParallelLoop* loop) {
      if (n == 520 && loop != nullptr && loop->cores() != 3) return;  // the big one twice is enough
      ActorRun r = run_actor(reg, "i32.matmul", {to_bytes(a), to_bytes(b)}, n * n * 4, "", loop);
      ASSERT_FALSE(r.failure.has_value()) << *r.failure;
      EXPECT_EQ(from_bytes<std::int32_t>(r.out), expected);
    });
  }
}

TEST(BuiltinsTest, MatmulSmallValuesAndWrapping) {
  Registry reg = Registry::with_builtins();
  // [[1,2],[3,4]] * [[5,6],[7,8]] = [[19,22],[43,50]].
  ActorRun r = run_actor(reg, "i32.matmul",
                          {to_bytes(std::vector<std::int32_t>{1, 2, 3, 4}), to_bytes(std::vector<std::int32_t>{5, 6, 7, 8})},
                          16);
  EXPECT_EQ(from_bytes<std::int32_t>(r.out), (std::vector<std::int32_t>{19, 22, 43, 50}));
  // 1x1: INT32_MAX * 2 wraps to -2; 2x2 of INT32_MAX: 2 * (INT32_MAX^2) = 2 * 1 wraps to 2.
  r = run_actor(reg, "i32.matmul", {to_bytes(std::vector<std::int32_t>{INT32_MAX}),
                                    to_bytes(std::vector<std::int32_t>{2})}, 4);
  EXPECT_EQ(from_bytes<std::int32_t>(r.out), std::vector<std::int32_t>{-2});
  std::vector<std::int32_t> m(4, INT32_MAX);
  r = run_actor(reg, "i32.matmul", {to_bytes(m), to_bytes(m)}, 16);
  EXPECT_EQ(from_bytes<std::int32_t>(r.out), std::vector<std::int32_t>(4, 2));
}

TEST(BuiltinsTest, MatmulCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  std::string e = check(reg, "i32.matmul", {8, 8}, 8);
  EXPECT_NE(e.find("2 int32s, not a perfect square"), std::string::npos) << e;
  e = check(reg, "i32.matmul", {16, 36}, 16);
  EXPECT_NE(e.find("same size, got 16, 36 and 16 bytes"), std::string::npos) << e;
  e = check(reg, "i32.matmul", {16, 16}, 36);
  EXPECT_NE(e.find("same size"), std::string::npos) << e;
  e = check(reg, "i32.matmul", {18, 18}, 18);
  EXPECT_NE(e.find("input 0 has 18 bytes, not a whole number of int32"), std::string::npos) << e;
  e = check(reg, "i32.matmul", {16, 16, 16}, 16);
  EXPECT_NE(e.find("expects 2 inputs, got 3"), std::string::npos) << e;
  ActorRun r = run_actor(reg, "i32.matmul", {Bytes(8), Bytes(8)}, 8);
  EXPECT_TRUE(r.failure.has_value());
}

TEST(BuiltinsTest, SortMatchesReference) {
  Registry reg = Registry::with_builtins();
  std::mt19937 rng(6);
  // Sizes on both sides of the parallel threshold; narrow ranges give many duplicates.
  for (std::size_t n : {0u, 1u, 2u, 1000u, 4095u, 4096u, 100003u}) {
    for (std::int32_t range : {INT32_MAX, 5}) {
      SCOPED_TRACE("n " + std::to_string(n) + " range " + std::to_string(range));
      auto in = random_i32(rng, n, -range, range);
      auto expected = in;
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(check(reg, "i32.sort", {n * 4}, n * 4), "");
      for_each_loop([&](ParallelLoop* loop) {
        ActorRun r = run_actor(reg, "i32.sort", {to_bytes(in)}, n * 4, "", loop);
        ASSERT_FALSE(r.failure.has_value()) << *r.failure;
        EXPECT_EQ(from_bytes<std::int32_t>(r.out), expected);
      });
    }
  }
  // Already sorted, reversed and constant inputs.
  std::vector<std::int32_t> asc(50000);
  for (std::size_t i = 0; i < asc.size(); ++i) asc[i] = static_cast<std::int32_t>(i) - 25000;
  std::vector<std::int32_t> desc(asc.rbegin(), asc.rend());
  std::vector<std::int32_t> same(50000, -3);
  for (const auto* in : {&asc, &desc, &same}) {
    for_each_loop([&](ParallelLoop* loop) {
      ActorRun r = run_actor(reg, "i32.sort", {to_bytes(*in)}, in->size() * 4, "", loop);
      EXPECT_EQ(from_bytes<std::int32_t>(r.out), in == &desc ? asc : *in);
    });
  }
}

TEST(BuiltinsTest, SortCheckRejectsBadShapes) {
  Registry reg = Registry::with_builtins();
  std::string e = check(reg, "i32.sort", {16}, 12);
  EXPECT_NE(e.find("output has 12 bytes, the input 16"), std::string::npos) << e;
  e = check(reg, "i32.sort", {10}, 10);
  EXPECT_NE(e.find("input 0 has 10 bytes, not a whole number of int32"), std::string::npos) << e;
  e = check(reg, "i32.sort", {16, 16}, 16);
  EXPECT_NE(e.find("expects 1 input, got 2"), std::string::npos) << e;
}

TEST(BuiltinsTest, ThreadLoopReallyRunsInParallel) {
  // Guards the other tests: the chunked paths must actually be exercised.
  Registry reg = Registry::with_builtins();
  ThreadLoop loop(4);
  std::vector<std::int32_t> a(10000, 3);
  run_actor(reg, "i32.add", {to_bytes(a), to_bytes(a)}, a.size() * 4, "", &loop);
  run_actor(reg, "i32.sort", {to_bytes(a)}, a.size() * 4, "", &loop);
  std::vector<std::int32_t> m(64 * 64, 1);
  run_actor(reg, "i32.matmul", {to_bytes(m), to_bytes(m)}, m.size() * 4, "", &loop);
  EXPECT_EQ(loop.parallel_runs(), 3);
}

// ---------------------------------------------------------------------------
// Plugins.

#ifdef REDFLOW_TEST_PLUGIN
TEST(PluginTest, LoadsAndRunsPluginActors) {
  Registry reg = Registry::with_builtins();
  Status s = reg.load_plugin(REDFLOW_TEST_PLUGIN);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(reg.find("test.negate"), nullptr);
  ASSERT_NE(reg.find("test.fill"), nullptr);
  EXPECT_NE(reg.find("i32.add"), nullptr);  // built-ins are still there
  EXPECT_FALSE(reg.find("test.negate")->summary.empty());

  std::mt19937 rng(7);
  std::vector<std::int32_t> in = random_i32(rng, 1001);
  in[0] = INT32_MIN;  // wraps to itself
  in[1] = INT32_MAX;
  in[2] = 0;
  std::vector<std::int32_t> expected(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) expected[i] = static_cast<std::int32_t>(0u - static_cast<std::uint32_t>(in[i]));
  EXPECT_EQ(check(reg, "test.negate", {in.size() * 4}, in.size() * 4), "");
  EXPECT_NE(check(reg, "test.negate", {in.size() * 4}, 4), "");
  for_each_loop([&](ParallelLoop* loop) {
    ActorRun r = run_actor(reg, "test.negate", {to_bytes(in)}, in.size() * 4, "", loop);
    ASSERT_FALSE(r.failure.has_value()) << *r.failure;
    EXPECT_EQ(from_bytes<std::int32_t>(r.out), expected);
  });
  // Known answers for the edge values, on the plugin's own output.
  ActorRun edges = run_actor(reg, "test.negate", {to_bytes(std::vector<std::int32_t>{INT32_MIN, INT32_MAX, 0, -5})}, 16);
  EXPECT_EQ(from_bytes<std::int32_t>(edges.out), (std::vector<std::int32_t>{INT32_MIN, -INT32_MAX, 0, 5}));

  EXPECT_EQ(check(reg, "test.fill", {}, 40, "value=-7"), "");
  EXPECT_NE(check(reg, "test.fill", {}, 40, ""), "");
  ActorRun r = run_actor(reg, "test.fill", {}, 40, "value=-7");
  ASSERT_FALSE(r.failure.has_value()) << *r.failure;
  EXPECT_EQ(from_bytes<std::int32_t>(r.out), std::vector<std::int32_t>(10, -7));
  r = run_actor(reg, "test.fill", {}, 40, "value=x");
  EXPECT_TRUE(r.failure.has_value());
}

// A second load registers every name again: refused (Registry::add never
// replaces silently), naming the plugin and a name; the first load's
// functions stay.
TEST(PluginTest, LoadingTwiceIsRefusedAndKeepsTheFirst) {
  Registry reg;
  ASSERT_TRUE(reg.load_plugin(REDFLOW_TEST_PLUGIN).ok());
  const Status again = reg.load_plugin(REDFLOW_TEST_PLUGIN);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find(REDFLOW_TEST_PLUGIN), std::string::npos) << again.message();
  EXPECT_NE(again.message().find("registered twice"), std::string::npos) << again.message();
  EXPECT_EQ(reg.names(),
            (std::vector<std::string>{"test.add2", "test.add2_unchecked", "test.crash", "test.fill", "test.negate", "test.refuse", "test.sleep"}));
}
#endif

TEST(PluginTest, MissingFileIsAnErrorNamingThePath) {
  Registry reg;
  const std::string path = "/nonexistent/redflow/no_such_plugin.so";
  Status s = reg.load_plugin(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
}

// The real path of the system's libxxhash, a shared library that certainly
// lacks redflow's entry point; "" if it cannot be found.
std::string xxhash_path() {
  void* h = dlopen("libxxhash.so.0", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return "";
  link_map* map = nullptr;
  std::string path;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    std::error_code ec;
    path = std::filesystem::canonical(map->l_name, ec).string();
  }
  dlclose(h);
  return path;
}

TEST(PluginTest, LibraryWithoutEntryPointIsNotFound) {
  const std::string path = xxhash_path();
  if (path.empty()) GTEST_SKIP() << "libxxhash.so.0 not found";
  Registry reg;
  Status s = reg.load_plugin(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("redflow_register_actors"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_TRUE(reg.names().empty());
}

}  // namespace
}  // namespace redflow
