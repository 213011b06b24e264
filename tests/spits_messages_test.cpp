// The SPITS messages on the wire (src/spits/net_messages.hpp): each round-trips,
// and each decoder refuses what is malformed with a named error, leaving its
// output untouched.
#include <gtest/gtest.h>

#include "net/envelope.hpp"
#include "spits/net_messages.hpp"

namespace redflow::spits {
namespace {

TEST(SpitsMessages, EachRoundTrips) {
  JobHello hello{kSpitsProtocolVersion, 0xfeedfacecafebeefULL, "pi", {"tasks=10", "out=x"}, 100, 900};
  std::vector<std::byte> bytes;
  encode(hello, bytes);
  JobHello back;
  ASSERT_TRUE(decode(bytes, back).ok());
  EXPECT_EQ(back, hello);

  TaskManagerInfo info{"tm7", "node7", 4242, 8, 40};
  bytes.clear();
  encode(info, bytes);
  TaskManagerInfo info_back;
  ASSERT_TRUE(decode(bytes, info_back).ok());
  EXPECT_EQ(info_back, info);

  JobWelcome job{"/shared/jobs/pi.so", "pi", {"tasks=10", "out=x"}};
  bytes.clear();
  encode(job, bytes);
  JobWelcome job_back;
  ASSERT_TRUE(decode(bytes, job_back).ok());
  EXPECT_EQ(job_back, job);

  std::vector<TaskMessage> tasks = {{1, "one"}, {2, ""}, {1ull << 40, std::string(70000, 'x')}};
  bytes.clear();
  encode_tasks(tasks, bytes);
  std::vector<TaskMessage> tasks_back;
  ASSERT_TRUE(decode_tasks(bytes, tasks_back).ok());
  ASSERT_EQ(tasks_back.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(tasks_back[i].id == tasks[i].id && tasks_back[i].bytes == tasks[i].bytes);

  std::vector<ResultMessage> results = {{5, ResultMessage::Outcome::kOk, "r5"}, {6, ResultMessage::Outcome::kFailed, "why"}};
  bytes.clear();
  encode_results(17, 2'500'000, results, bytes);
  std::vector<ResultMessage> results_back;
  std::uint32_t capacity = 0;
  std::uint64_t ns_per_task = 0;
  ASSERT_TRUE(decode_results(bytes, capacity, ns_per_task, results_back).ok());
  EXPECT_EQ(capacity, 17u);
  EXPECT_EQ(ns_per_task, 2'500'000u);
  ASSERT_EQ(results_back.size(), 2u);
  EXPECT_EQ(results_back[1].outcome, ResultMessage::Outcome::kFailed);
  EXPECT_EQ(results_back[1].bytes, "why");
}

TEST(SpitsMessages, TruncatedTrailingAndOutOfRangeAreNamed) {
  std::vector<TaskMessage> tasks = {{1, "one"}, {2, "two"}};
  std::vector<std::byte> bytes;
  encode_tasks(tasks, bytes);
  std::vector<TaskMessage> out = {{99, "kept"}};
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    Status s = decode_tasks(std::span(bytes).first(cut), out);
    ASSERT_FALSE(s.ok()) << "a batch cut at " << cut << " bytes was taken";
    EXPECT_NE(s.message().find("spits REQUEST"), std::string::npos) << s.message();
  }
  EXPECT_EQ(out.size(), 1u) << "a refused batch left tasks behind";
  bytes.push_back(std::byte{0});
  Status trailing = decode_tasks(bytes, out);
  EXPECT_NE(trailing.message().find("trailing bytes"), std::string::npos) << trailing.message();

  // A count far beyond the bytes there: refused before anything is allocated.
  std::vector<std::byte> huge = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0x00}};
  Status oversized = decode_tasks(huge, out);
  EXPECT_FALSE(oversized.ok());

  // A Task Manager may only say ok or failed; "lost" is the Job Manager's own verdict.
  std::vector<ResultMessage> lost = {{3, ResultMessage::Outcome::kLost, ""}};
  bytes.clear();
  encode_results(4, 0, lost, bytes);
  std::vector<ResultMessage> results;
  std::uint32_t capacity = 0;
  std::uint64_t ns_per_task = 0;
  Status s = decode_results(bytes, capacity, ns_per_task, results);
  EXPECT_NE(s.message().find("malformed"), std::string::npos) << s.message();
  EXPECT_TRUE(results.empty());

  JobHello hello;
  hello.protocol = 9;
  hello.job = "x";
  bytes.clear();
  encode(hello, bytes);
  JobHello back;
  Status version = decode(bytes, back);
  EXPECT_NE(version.message().find("wrong version"), std::string::npos) << version.message();

  TaskManagerInfo info{"t", "h", 1, 0, 0};
  bytes.clear();
  encode(info, bytes);
  TaskManagerInfo info_back;
  EXPECT_FALSE(decode(bytes, info_back).ok()) << "a Task Manager with no Workers was welcomed";

  const JobWelcome untouched{"/kept.so", "kept", {}};
  JobWelcome job = untouched;
  bytes.clear();
  encode(JobWelcome{"", "pi", {}}, bytes);
  Status no_path = decode(bytes, job);
  EXPECT_NE(no_path.message().find("spits WELCOME"), std::string::npos) << no_path.message();
  EXPECT_NE(no_path.message().find("empty plugin path"), std::string::npos) << no_path.message();
  bytes.clear();
  encode(JobWelcome{"/j.so", "pi", {"a"}}, bytes);
  bytes.pop_back();
  EXPECT_FALSE(decode(bytes, job).ok()) << "a truncated job was read";
  EXPECT_EQ(job, untouched) << "a failed decode changed its output";
}

}  // namespace
}  // namespace redflow::spits
