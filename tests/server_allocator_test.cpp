// The server's policy of asking Slurm for workers (server/allocator.hpp),
// driven without Slurm: what it asks for when jobs wait, its bound, what it
// takes back, backing off after failures, adopting an earlier server's
// allocations; and the demand the job table reports (workers_wanted). The
// real Slurm side is tests/slurm/server_slurm_workers_test.sh.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/allocator.hpp"
#include "server/slurm_allocations.hpp"
#include "server/job_table.hpp"
#include "server/server_messages.hpp"

namespace redflow::server {
namespace {

AllocatorOptions options(std::uint32_t max, std::uint32_t per) {
  return {.max_workers = max, .workers_per_allocation = per, .join_timeout_s = 60, .retry_s = 5, .max_retry_s = 40};
}

TEST(ServerAllocator, AsksForWhatWaitingJobsWantInAllocationsOfKBoundedByTheMaximum) {
  Allocator a(options(6, 2));
  EXPECT_EQ(a.plan(0, 0).ask, 0u) << "no job waits: nothing is asked for";
  EXPECT_EQ(a.plan(3, 0).ask, 2u) << "3 workers wanted, 2 per allocation: two allocations";
  a.asked("11", 0);
  a.asked("12", 0);
  EXPECT_EQ(a.workers_asked(), 4u);
  EXPECT_EQ(a.plan(3, 1).ask, 0u) << "4 workers are coming for the 3 wanted";
  EXPECT_EQ(a.plan(9, 1).ask, 1u) << "9 wanted, 4 coming: only one more allocation fits under the 6-worker bound";
  a.asked("13", 1);
  EXPECT_EQ(a.plan(100, 2).ask, 0u) << "at the bound: no more, however many are wanted";
  EXPECT_EQ(a.workers_asked(), 6u);
  EXPECT_NE(a.summary(2).find("at most 6 workers, 2 per allocation; 6 asked for now"), std::string::npos) << a.summary(2);

  Allocator off(AllocatorOptions{});
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.plan(10, 0).ask, 0u);
  EXPECT_EQ(off.summary(0), "");
}

TEST(ServerAllocator, JoinedWorkersAreNotComingAndThoseThatLeftAreNotAwaited) {
  Allocator a(options(4, 2));
  a.asked("20", 0);
  a.listed({{"20", "RUNNING"}}, 1);
  a.joined({{"20", 1}});
  EXPECT_EQ(a.plan(1, 2).ask, 0u) << "one of its two workers is still coming";
  EXPECT_EQ(a.plan(2, 2).ask, 1u) << "two wanted beyond the idle ones, one coming";
  a.joined({{"20", 2}});
  a.joined({{"20", 1}});  // one left after its idle timeout
  EXPECT_EQ(a.plan(1, 3).ask, 1u) << "a worker that left is not coming back: the wanted one needs a new allocation";
  const auto list = a.allocations(3);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].state, "running");
  EXPECT_EQ(list[0].joined, 1u);
  EXPECT_EQ(list[0].workers, 2u);
}

TEST(ServerAllocator, QueuedAllocationsNoLongerWantedAreCancelledNewestFirstRunningOnesNever) {
  Allocator a(options(8, 2));
  for (const char* id : {"1", "2", "3"}) a.asked(id, 0);
  a.listed({{"1", "RUNNING"}, {"2", "PENDING"}, {"3", "PENDING"}}, 1);
  auto p = a.plan(4, 2);
  EXPECT_EQ(p.ask, 0u);
  ASSERT_EQ(p.cancel, std::vector<std::string>{"3"}) << "6 coming, 4 wanted: the newest queued one goes, one queued one stays";
  // Cancelled: not offered again, and its end is no failure.
  EXPECT_TRUE(a.plan(4, 3).cancel.empty());
  p = a.plan(0, 3);
  ASSERT_EQ(p.cancel, std::vector<std::string>{"2"}) << "nothing wanted: the other queued one goes; the running one stays";
  a.listed({{"1", "RUNNING"}}, 4);
  EXPECT_EQ(a.allocations(4)[1].state, "ended");
  EXPECT_EQ(a.allocations(4)[2].why, "no job waits for its workers any more");
  EXPECT_EQ(a.summary(4).find("failure"), std::string::npos) << "a queued allocation taken back did not fail: " << a.summary(4);
  EXPECT_EQ(a.plan(3, 5).ask, 1u) << "no back-off: wanted again, asked again at once";
}

TEST(ServerAllocator, FailuresBackOffDoublingAndAJoinedWorkerEndsTheBackOff) {
  Allocator a(options(4, 1));
  a.ask_failed("sbatch: error: invalid partition", 10);
  EXPECT_EQ(a.plan(1, 14).ask, 0u) << "5 s after a failure";
  EXPECT_EQ(a.plan(1, 15).ask, 1u);
  a.ask_failed("again", 15);
  EXPECT_EQ(a.plan(1, 24).ask, 0u) << "the second failure in a row waits 10 s";
  EXPECT_NE(a.summary(24).find("2 failures in a row, the last: the request was refused: again"), std::string::npos) << a.summary(24);
  EXPECT_EQ(a.plan(1, 25).ask, 1u);
  for (int i = 0; i < 10; ++i) a.ask_failed("x", 100);
  EXPECT_EQ(a.plan(1, 139).ask, 0u);
  EXPECT_EQ(a.plan(1, 140).ask, 1u) << "the wait stops doubling at max_retry_s: it never stops asking";
  // An allocation that ends without any worker reaching the server is a failure too.
  a.asked("7", 140);
  a.listed({{"7", "RUNNING"}}, 141);
  a.listed({}, 142);
  EXPECT_EQ(a.plan(1, 142).ask, 0u) << "allocation 7 brought no worker: back off";
  EXPECT_NE(a.summary(142).find("allocation 7 ended without any of its workers reaching the server"), std::string::npos) << a.summary(142);
  // One that brings a worker resets it.
  a.asked("8", 200);
  a.joined({{"8", 1}});
  a.ask_failed("y", 201);
  EXPECT_EQ(a.plan(1, 205).ask, 0u);
  EXPECT_EQ(a.plan(1, 206).ask, 1u) << "after a success the next failure waits retry_s again, not the doubled wait";
}

TEST(ServerAllocator, ARunningAllocationWhoseWorkersNeverJoinIsCancelledAndCountsAsAFailure) {
  Allocator a(options(1, 1));
  a.asked("30", 0);
  a.listed({{"30", "PENDING"}}, 1);
  EXPECT_TRUE(a.plan(1, 100).cancel.empty()) << "waiting in the queue is not a failure to join";
  a.listed({{"30", "RUNNING"}}, 100);
  EXPECT_TRUE(a.plan(1, 159).cancel.empty());
  auto p = a.plan(1, 160);
  ASSERT_EQ(p.cancel, std::vector<std::string>{"30"}) << "60 s running and no worker at the server";
  EXPECT_EQ(p.ask, 0u) << "its worker still counts against the bound until it has ended";
  a.listed({}, 161);
  EXPECT_NE(a.summary(161).find("within 60 s of its start"), std::string::npos) << a.summary(161);
  EXPECT_EQ(a.plan(1, 162).ask, 0u) << "backing off";
  EXPECT_EQ(a.plan(1, 166).ask, 1u);
}

TEST(ServerAllocator, AdoptsTheAllocationsOfAnEarlierServerOnTheSameEndpoint) {
  Allocator a(options(3, 1));
  a.listed({{"41", "RUNNING"}, {"42", "PENDING"}}, 0);
  EXPECT_EQ(a.workers_asked(), 2u);
  a.joined({{"41", 1}});
  EXPECT_EQ(a.plan(2, 1).ask, 1u) << "one coming from the adopted queued allocation, one more needed";
  EXPECT_EQ(a.plan(5, 1).ask, 1u) << "the bound counts the adopted ones";
}

TEST(ServerAllocator, KeepsOnlyTheLastFewEndedAllocations) {
  Allocator a(options(100, 1));
  for (int i = 0; i < 20; ++i) {
    a.asked(std::to_string(i), i);
    a.joined({{std::to_string(i), 1}});
    a.listed({}, i + 0.5);
  }
  EXPECT_EQ(a.allocations(30).size(), 8u);
  EXPECT_EQ(a.allocations(30).back().id, "19");
  EXPECT_EQ(a.workers_asked(), 0u);
}

TEST(ServerAllocator, AWorkersNameSaysItsAllocation) {
  EXPECT_EQ(allocation_of("node3:4121/slurm-5512 on node3"), "5512");
  EXPECT_EQ(allocation_of("node3:4121 on node3"), "");
  EXPECT_EQ(allocation_of("x/slurm- on y"), "");
}

TEST(ServerJobTable, WorkersWantedCountsQueuedJobsAndRunningOnesShortOfWorkers) {
  JobTable t(2);
  EXPECT_EQ(t.workers_wanted(), 0u);
  const auto a = t.submit({"run", "a.dot"}, "/w");
  t.submit({"spits", "b.so"}, "/w", {.workers = 3});
  t.submit({"rem", "c.dot", "--store", "inproc"}, "/w");
  EXPECT_EQ(t.workers_wanted(), 5u) << "2 + 3; a REM job takes none";
  t.started(a, {"w1 on h"});
  EXPECT_EQ(t.workers_wanted(), 4u) << "the running job was sent one of its 2: it is short of one";
  ASSERT_TRUE(t.cancel(a).ok());
  EXPECT_EQ(t.workers_wanted(), 3u) << "a job being cancelled wants no more";
}

TEST(ServerMessages, AWorkersReplyCarriesTheAllocations) {
  Reply r;
  r.workers.allocating = "from Slurm: at most 2 workers";
  r.workers.allocations = {{.id = "9", .state = "queued", .workers = 2, .joined = 0, .age_s = 1.5, .why = ""},
                           {.id = "10", .state = "ended", .workers = 1, .joined = 0, .age_s = 9, .why = "no job waits"}};
  auto back = decode_reply(encode(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->workers.allocating, r.workers.allocating);
  ASSERT_EQ(back->workers.allocations.size(), 2u);
  EXPECT_EQ(back->workers.allocations[1].id, "10");
  EXPECT_EQ(back->workers.allocations[1].why, "no job waits");
  EXPECT_EQ(back->workers.allocations[0].age_s, 1.5);
  EXPECT_EQ(back->workers.allocations[0].workers, 2u);
}

// The batch script run for real, with a stand-in srun (it runs its
// command once, as one task) and a stand-in redflow (it prints its
// arguments): each value reaches the worker as one word, spaces and all.
TEST(ServerSlurmAllocations, TheBatchScriptStartsNamedWorkersWithTheirKeys) {
  for (const char* tool : {"sbatch", "squeue", "scancel"})
    if (std::system((std::string("command -v ") + tool + " >/dev/null").c_str()) != 0) GTEST_SKIP() << tool << " is not installed (slurm-client)";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("redflow-alloc-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "red flow");
  auto script_file = [](const fs::path& path, const char* text) {
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_all);
  };
  script_file(dir / "bin" / "srun", "#!/bin/sh\nexec \"$@\"\n");
  script_file(dir / "red flow" / "redflow", "#!/bin/sh\nfor a; do echo \"$a\"; done\n");
  SlurmOptions o{.allocator = {.max_workers = 2}, .worker_idle_s = 7, .key_dir = "/shared/my keys"};
  auto s = SlurmAllocations::open(o, dir.string(), (dir / "red flow" / "redflow").string(), "tcp://10.0.0.1:7000", "/shared/my keys/head.key");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string run = "cd " + dir.string() + " && PATH=" + (dir / "bin").string() + ":$PATH SLURM_JOB_ID=77 ./slurm-workers.sh > words.txt";
  ASSERT_EQ(std::system(run.c_str()), 0);
  std::ifstream in(dir / "words.txt");
  std::vector<std::string> words;
  for (std::string w; std::getline(in, w);) words.push_back(w);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  ASSERT_EQ(words.size(), 12u);
  EXPECT_EQ(std::vector<std::string>(words.begin(), words.begin() + 6),
            (std::vector<std::string>{"worker", "--connect", "tcp://10.0.0.1:7000", "--persist", "--idle-timeout", "7"}));
  EXPECT_EQ(words[6], "--name");
  EXPECT_EQ(words[7].rfind(std::string(host) + ":", 0), 0u) << words[7];
  EXPECT_EQ(allocation_of(words[7] + " on " + host), "77") << "the server finds the allocation in the name: " << words[7];
  EXPECT_EQ(std::vector<std::string>(words.begin() + 8, words.end()),
            (std::vector<std::string>{"--key", "/shared/my keys/" + std::string(host) + ".key", "--server-key", "/shared/my keys/head.pub"}));
  fs::remove_all(dir);

  EXPECT_EQ(allocation_job_name("tcp://10.0.0.1:7000"), allocation_job_name("tcp://10.0.0.1:7000"));
  EXPECT_NE(allocation_job_name("tcp://10.0.0.1:7000"), allocation_job_name("tcp://10.0.0.1:7001"));
  SlurmOptions no_key{.allocator = {.max_workers = 2}, .key_dir = "/k"};
  EXPECT_EQ(SlurmAllocations::open(no_key, "/tmp", "/bin/redflow", "tcp://10.0.0.1:7000", "").status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace redflow::server
