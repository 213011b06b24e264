// The field codec every byte format shares (src/wire/codec.hpp): the byte
// layout the writer produces, and the reader's rules: counts checked against
// their limit and the bytes left, the first failure sticks, finish() refuses
// trailing bytes, a boolean is 0 or 1.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "byte_literals.hpp"
#include "wire/codec.hpp"

namespace redflow::wire {
namespace {

using testing::bytes_of;

bool codec_contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(WireCodec, WritesLittleEndianFieldsAndCountedRuns) {
  std::vector<std::byte> out;
  Writer w(out);
  w.u8(0x01);
  w.u16(0x0302);
  w.u32(0x07060504);
  w.u64(0x0f0e0d0c0b0a0908ULL);
  w.boolean(true);
  w.str("ab");
  w.bytes(bytes_of({0xfe}));
  EXPECT_EQ(out, bytes_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 2, 0, 0, 0, 'a', 'b', 1, 0, 0, 0, 0xfe}));

  Reader r(out);
  EXPECT_EQ(r.u8("a"), 0x01);
  EXPECT_EQ(r.u16("b"), 0x0302);
  EXPECT_EQ(r.u32("c"), 0x07060504u);
  EXPECT_EQ(r.u64("d"), 0x0f0e0d0c0b0a0908ULL);
  EXPECT_TRUE(r.boolean("e"));
  EXPECT_EQ(r.str("f", 2), "ab");
  const auto b = r.bytes("g", 1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], std::byte{0xfe});
  r.finish("the test message");
  EXPECT_FALSE(r.failed()) << r.what();
  EXPECT_EQ(r.left(), 0u);
}

TEST(WireCodec, DoubleRoundTripsBitForBit) {
  std::vector<std::byte> out;
  Writer(out).f64(-0.1);
  ASSERT_EQ(out.size(), 8u);
  Reader r(out);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(r.f64("x")), std::bit_cast<std::uint64_t>(-0.1));
}

TEST(WireCodec, CountAboveItsLimitIsOversized) {
  std::vector<std::byte> out;
  Writer w(out);
  w.u32(11);
  for (int i = 0; i < 11; ++i) w.u32(0);
  Reader r(out);
  EXPECT_EQ(r.count("names", 10, 4), 0u);
  EXPECT_EQ(r.error(), Error::kOversized);
  EXPECT_TRUE(codec_contains(r.what(), "names of 11 exceeds the limit of 10")) << r.what();
}

TEST(WireCodec, CountBeyondTheBytesLeftIsTruncatedBeforeAnythingIsRead) {
  // A string claiming 4 GiB - 1 bytes in a 6-byte message: refused by its
  // count alone (no allocation of that size is attempted).
  std::vector<std::byte> out;
  Writer w(out);
  w.u32(std::numeric_limits<std::uint32_t>::max());
  w.u16(0);
  Reader r(out);
  EXPECT_EQ(r.str("name", std::numeric_limits<std::uint32_t>::max()), "");
  EXPECT_EQ(r.error(), Error::kTruncated);
  EXPECT_TRUE(codec_contains(r.what(), "runs past the message's end")) << r.what();
  EXPECT_EQ(r.left(), 2u);

  // Elements of `unit` bytes: 3 of 4 bytes do not fit in 8.
  std::vector<std::byte> list;
  Writer(list).u32(3);
  list.resize(list.size() + 8);
  Reader frame(list, "frame");
  EXPECT_EQ(frame.count("slots", 100, 4), 0u);
  EXPECT_EQ(frame.error(), Error::kTruncated);
  EXPECT_TRUE(codec_contains(frame.what(), "slots of 3 runs past the frame's end")) << frame.what();
}

TEST(WireCodec, ViewPastTheEndIsTruncated) {
  const auto in = bytes_of({1, 2, 3});
  Reader r(in);
  EXPECT_EQ(r.view("entry", 2).size(), 2u);
  EXPECT_TRUE(r.view("entry", 2).empty());
  EXPECT_EQ(r.error(), Error::kTruncated);
  EXPECT_TRUE(codec_contains(r.what(), "entry of 2 bytes runs past")) << r.what();
}

TEST(WireCodec, FirstFailureSticksAndLaterReadsReturnZeros) {
  const auto in = bytes_of({7, 0xff, 0xff, 0xff, 0xff});
  Reader r(in);
  EXPECT_EQ(r.u16("kind"), 0xff07);
  EXPECT_EQ(r.u64("id"), 0u);  // needs 8, 3 left
  EXPECT_EQ(r.error(), Error::kTruncated);
  const std::string first = r.what();
  EXPECT_TRUE(codec_contains(first, "id needs 8 bytes, 3 left")) << first;
  // Bytes are left, but nothing more is read from them.
  EXPECT_EQ(r.u8("next"), 0);
  EXPECT_EQ(r.u16("next"), 0);
  EXPECT_FALSE(r.boolean("flag"));
  EXPECT_EQ(r.str("name", 10), "");
  EXPECT_TRUE(r.view("rest", 1).empty());
  EXPECT_EQ(r.left(), 3u);
  // A later failure does not replace the first.
  r.fail(Error::kMalformed, "something else");
  r.finish("the message");
  EXPECT_EQ(r.error(), Error::kTruncated);
  EXPECT_EQ(r.what(), first);
}

TEST(WireCodec, FinishRefusesTrailingBytes) {
  const auto in = bytes_of({1, 2, 3});
  Reader r(in);
  r.u16("a");
  r.finish("a HELLO");
  EXPECT_EQ(r.error(), Error::kTrailingBytes);
  EXPECT_EQ(r.what(), "1 bytes after the last field of a HELLO");

  Reader exact(in);
  exact.u8("a");
  exact.u16("b");
  exact.finish("a HELLO");
  EXPECT_FALSE(exact.failed()) << exact.what();
}

TEST(WireCodec, BooleanOtherThanZeroOrOneIsMalformed) {
  const auto in = bytes_of({0, 1, 2});
  Reader r(in);
  EXPECT_FALSE(r.boolean("first"));
  EXPECT_TRUE(r.boolean("second"));
  EXPECT_FALSE(r.failed());
  r.boolean("checked");
  EXPECT_EQ(r.error(), Error::kMalformed);
  EXPECT_EQ(r.what(), "checked is 2, not 0 or 1");
}

TEST(WireCodec, StatusNamesTheFormatAndTheError) {
  const Status s = status("tile protocol", Error::kWrongVersion, "version 9");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "tile protocol: wrong version: version 9");
  // Every error has its own name.
  const Error all[] = {Error::kNone, Error::kTruncated, Error::kBadMagic, Error::kWrongVersion, Error::kOversized, Error::kUnknownKind, Error::kMalformed,
                       Error::kTrailingBytes};
  for (Error a : all) {
    for (Error b : all) {
      if (a != b) {
        EXPECT_STRNE(error_name(a), error_name(b));
      }
    }
  }
}

}  // namespace
}  // namespace redflow::wire
