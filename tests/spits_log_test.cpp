// SPITS units: the circular queue of submitted tasks and the commit log
// (torn tail ignored, damage and another job's log refused).
#include <gtest/gtest.h>
#include <unordered_map>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spits/commit_log.hpp"
#include "spits/submitted_queue.hpp"
#include "scratch_dir.hpp"

namespace redflow::spits {
namespace {

namespace fs = std::filesystem;

TEST(SpitsSubmittedQueue, WrapsAroundWhatIsLeftAndSkipsRemovedTasks) {
  SubmittedQueue q;
  for (std::uint64_t i = 0; i < 4; ++i) q.add(i, "t" + std::to_string(i), i);
  EXPECT_EQ(q.next_resubmission(0)->id, 0u);
  EXPECT_EQ(q.next_resubmission(0)->id, 1u);
  q.remove(2);  // committed while the cursor points at it
  EXPECT_EQ(q.next_resubmission(0)->id, 3u);
  EXPECT_EQ(q.next_resubmission(0)->id, 0u);  // wrapped
  q.remove(0);
  q.remove(3);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.next_resubmission(0)->id, 1u);
  EXPECT_EQ(q.next_resubmission(0)->id, 1u);
  q.remove(1);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_resubmission(0), nullptr);
  EXPECT_EQ(q.find(1), nullptr);
}

TEST(SpitsSubmittedQueue, ATaskManagerGetsOnlyTasksItDoesNotHold) {
  SubmittedQueue q;
  for (std::uint64_t i = 0; i < 3; ++i) q.add(i, "t", i).holders.push_back(0);
  q.find(1)->holders.push_back(1);
  EXPECT_EQ(q.next_resubmission(0), nullptr);  // Task Manager 0 holds all three
  EXPECT_EQ(q.next_resubmission(1)->id, 0u);
  EXPECT_EQ(q.next_resubmission(1)->id, 2u);  // 1 is held by Task Manager 1 too
  q.find(1)->release(0);
  EXPECT_EQ(q.next_resubmission(0)->id, 1u);
  EXPECT_TRUE(q.find(1)->held_by(1));
  q.find(1)->release(1);
  EXPECT_FALSE(q.find(1)->held_by(1));
}

class SpitsCommitLog : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = test_scratch_path("redflow_spits_log").string();
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }
  void write_three(std::uint64_t job) {
    auto log = CommitLog::open(path_, job);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE((*log)->begin(7, 70).ok());
    ASSERT_TRUE((*log)->committed(7, 70).ok());
    ASSERT_TRUE((*log)->begin(8, 80).ok());
    ASSERT_TRUE((*log)->poisoned(9, 90).ok());
    ASSERT_TRUE((*log)->sync().ok());
  }
  std::string path_;
};

TEST_F(SpitsCommitLog, ReopensWithEveryTaskState) {
  write_three(42);
  auto log = CommitLog::open(path_, 42);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const auto& e = (*log)->entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e.at(7).state, CommitLog::State::kCommitted);
  EXPECT_EQ(e.at(7).task_hash, 70u);
  EXPECT_EQ(e.at(8).state, CommitLog::State::kBegun);
  EXPECT_EQ(e.at(9).state, CommitLog::State::kPoisoned);
  EXPECT_EQ((*log)->torn_bytes(), 0u);
}

// What a kill -9 finds: each record is in the file as soon as the call that
// appends it returns (a begin before commit_task runs, a committed after),
// with no sync; the zeros a killed process leaves after its records (the
// mapping's room to grow) are not a torn tail.
TEST_F(SpitsCommitLog, EveryRecordIsInTheFileOnceAppendedAndAKilledWritersRoomIsNoTornTail) {
  // What a restart would read now: a copy of the file as it stands.
  auto as_now = [&]() {
    fs::copy_file(path_, path_ + ".copy", fs::copy_options::overwrite_existing);
    auto now = CommitLog::open(path_ + ".copy", 42);
    EXPECT_TRUE(now.ok()) << now.status().ToString();
    std::unordered_map<std::uint64_t, CommitLog::Entry> e;
    if (now.ok()) e = (*now)->entries();
    return e;
  };
  {
    auto log = CommitLog::open(path_, 42);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE((*log)->begin(1, 10).ok());
    EXPECT_EQ(as_now().at(1).state, CommitLog::State::kBegun) << "a begin record must be in the file before commit_task";
    ASSERT_TRUE((*log)->committed(1, 10).ok());
    EXPECT_EQ(as_now().at(1).state, CommitLog::State::kCommitted);
    ASSERT_TRUE((*log)->poisoned(2, 20).ok());
    EXPECT_EQ(as_now().at(2).state, CommitLog::State::kPoisoned);
  }
  EXPECT_EQ(fs::file_size(path_), 4 * CommitLog::kRecordBytes) << "closing cuts the room to grow";
  // A writer killed with its log open: SIGKILL, no destructor.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto log = CommitLog::open(path_, 42);
    if (!log.ok() || !(*log)->begin(3, 30).ok() || !(*log)->committed(3, 30).ok() || !(*log)->begin(4, 40).ok()) ::_exit(1);
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_GT(fs::file_size(path_), 7 * CommitLog::kRecordBytes) << "the killed writer left no room after its records";
  auto again = CommitLog::open(path_, 42);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->torn_bytes(), 0u) << "zeros after the records are room, not a torn record";
  EXPECT_EQ((*again)->entries().at(3).state, CommitLog::State::kCommitted);
  EXPECT_EQ((*again)->entries().at(4).state, CommitLog::State::kBegun) << "killed inside commit_task: in doubt";
  fs::remove(path_ + ".copy");
}

TEST_F(SpitsCommitLog, TornTailIsIgnoredAndCutSoAppendsStayAligned) {
  write_three(42);
  const auto whole = fs::file_size(path_);
  {
    std::ofstream(path_, std::ios::app | std::ios::binary) << "half a record";  // 13 bytes, as a crash mid-write leaves
  }
  {
    auto log = CommitLog::open(path_, 42);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_EQ((*log)->torn_bytes(), 13u);
    EXPECT_EQ((*log)->entries().size(), 3u);
    ASSERT_TRUE((*log)->committed(8, 80).ok());
  }
  EXPECT_EQ(fs::file_size(path_), whole + CommitLog::kRecordBytes) << "the torn bytes were not cut before the append";
  auto again = CommitLog::open(path_, 42);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->torn_bytes(), 0u);
  EXPECT_EQ((*again)->entries().at(8).state, CommitLog::State::kCommitted);
}

TEST_F(SpitsCommitLog, AFlippedByteInTheLastRecordIsATornTail) {
  write_three(42);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path_) - 10));
    f.put('\x5a');
  }
  auto log = CommitLog::open(path_, 42);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->torn_bytes(), CommitLog::kRecordBytes);
  EXPECT_EQ((*log)->entries().count(9), 0u);  // the poisoned record was the torn one
  EXPECT_EQ((*log)->entries().at(7).state, CommitLog::State::kCommitted);
}

TEST_F(SpitsCommitLog, DamageBeforeIntactRecordsIsANamedError) {
  write_three(42);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(CommitLog::kRecordBytes + 9));  // inside record 1 of 5
    f.put('\x5a');
  }
  auto log = CommitLog::open(path_, 42);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("record 1 (byte 32) is damaged"), std::string::npos) << log.status().ToString();
}

TEST_F(SpitsCommitLog, AnotherJobsLogIsRefused) {
  write_three(42);
  auto log = CommitLog::open(path_, 43);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("belongs to another job"), std::string::npos) << log.status().ToString();
}

TEST_F(SpitsCommitLog, AFileThatIsNoLogIsRefused) {
  std::ofstream(path_, std::ios::binary) << std::string(100, 'x');
  auto log = CommitLog::open(path_, 42);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("not a redflow SPITS commit log"), std::string::npos) << log.status().ToString();
  EXPECT_EQ(fs::file_size(path_), 100u);  // left as it was
}

}  // namespace
}  // namespace redflow::spits
