// The server's state without sockets or processes: the job table's
// policy (first come, first served, with backfilling), time limits, cancel
// and recovery (ServerJobTable); the journal's replay, torn
// tail and damage (ServerJournal); the client <-> server frames and the
// server's REDIRECT to a worker, and the named errors for malformed ones
// (ServerMessages); the words a submit may
// not give (ServerJobWords).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "server/job_driver.hpp"
#include "server/job_files.hpp"
#include "server/job_table.hpp"
#include "server/journal.hpp"
#include "server/server_messages.hpp"
#include "scratch_dir.hpp"

namespace redflow::server {
namespace {

namespace fs = std::filesystem;

TEST(ServerJobTable, JobsStartFirstComeFirstServedAndSmallerOnesBackfill) {
  JobTable t(3);  // a job that asks for none runs on 3 workers
  const auto a = t.submit({"run", "a.dot"}, "/w"), b = t.submit({"spits", "b.so"}, "/w", {.workers = 2}),
             c = t.submit({"stream", "c.dot"}, "/w", {.workers = 1}), d = t.submit({"rem", "d.dot", "--store", "inproc"}, "/w", {.workers = 5});
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(t.workers_for(a), 3u);
  EXPECT_EQ(t.workers_for(b), 2u);
  EXPECT_EQ(t.workers_for(d), 0u) << "a REM job's schedulers are its own processes";
  EXPECT_EQ(t.next_to_start(2), b) << "the oldest job waits for 3 workers; the next one fits on 2 and backfills";
  ASSERT_EQ(t.next_to_start(3), a);
  t.started(a, {"w0 on h", "w1 on h", "w2 on h"});
  EXPECT_EQ(t.find(a)->state, JobState::kRunning);
  EXPECT_EQ(t.find(a)->workers.size(), 3u) << "where it runs, while it runs";
  EXPECT_EQ(t.next_to_start(0), d) << "a REM job needs no idle worker";
  t.started(d, {});
  EXPECT_EQ(t.next_to_start(0), std::nullopt) << "a job started without the workers it asked for";
  EXPECT_EQ(t.next_to_start(1), c) << "the smaller younger job backfills while the older one waits";
  t.started(c, {"w3 on h"});
  EXPECT_EQ(t.running(), (std::set<std::uint64_t>{a, c, d}));
  t.ended(a, 0, "", "{}", {"w0 on h"});
  EXPECT_EQ(t.find(a)->state, JobState::kSucceeded);
  EXPECT_EQ(t.last_workers(), std::vector<std::string>{"w0 on h"});
  ASSERT_EQ(t.next_to_start(3), b);
  t.started(b, {});
  t.ended(b, 3, "gave up", "", {});
  EXPECT_EQ(t.find(b)->state, JobState::kFailed);
  EXPECT_EQ(t.find(b)->exit_status, 3);
  EXPECT_EQ(t.find(b)->message, "gave up");
  EXPECT_EQ(t.last_workers(), std::vector<std::string>{"w0 on h"}) << "a job without places forgot the last workers";
}

// EASY backfilling: the oldest job waiting for workers has a reservation
// (when the running jobs' time limits free enough of them), and a younger job
// starts before it only if it cannot push that reservation back.
TEST(ServerJobTable, AYoungerJobBackfillsOnlyWhereItCannotDelayTheOldest) {
  JobTable t(3, 2);  // a driver stopped at its time limit gets 2 s to end
  const auto running = t.submit({"spits", "r.so"}, "/w", {.workers = 2, .time_limit_s = 100});
  ASSERT_EQ(t.next_to_start(3, 0), running);
  t.started(running, {"w0 on h", "w1 on h"}, 0);  // sure to have ended by 102
  const auto big = t.submit({"run", "big.dot"}, "/w");  // all 3: waits for the running job's 2
  const auto unlimited = t.submit({"spits", "u.so"}, "/w", {.workers = 1});
  const auto too_long = t.submit({"spits", "l.so"}, "/w", {.workers = 1, .time_limit_s = 95});
  const auto short_one = t.submit({"spits", "s.so"}, "/w", {.workers = 1, .time_limit_s = 50});
  const auto rem = t.submit({"rem", "g.dot", "--store", "inproc"}, "/w");
  EXPECT_EQ(t.reservation(1), 102.0) << "the big job's workers are free when the running job's limit and grace are over";
  // At 10 s: 1 idle worker. Without a limit, or ending at 10 + 95 + 2 > 102, a job could hold the worker the big job needs.
  EXPECT_EQ(t.next_to_start(1, 10), short_one) << "ends by 62, before the reservation: it backfills";
  t.started(short_one, {"w2 on h"}, 10);
  EXPECT_EQ(t.next_to_start(0, 10), rem) << "a REM job takes no worker, so it never delays anyone";
  t.started(rem, {}, 10);
  t.ended(short_one, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(1, 60), std::nullopt) << "the unlimited job, and one ending at 157, would both delay the big one";
  EXPECT_EQ(t.next_to_start(1, 4), too_long) << "earlier, the 95 s job would have ended by 101";
  // The running job ends: the big job starts, then the others in their order.
  t.ended(running, 0, "", "", {});
  EXPECT_EQ(t.reservation(3), std::nullopt) << "it fits now";
  ASSERT_EQ(t.next_to_start(3, 70), big);
  t.started(big, {"w0 on h", "w1 on h", "w2 on h"}, 70);
  t.ended(big, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(3, 80), unlimited);
}

// Workers the oldest job will not need at its reservation are free for
// anyone, with or without a time limit; an oldest job that asks for more
// workers than the server has reserves nothing, and the others go on.
TEST(ServerJobTable, SpareWorkersBackfillAndAnOversizedJobReservesNothing) {
  JobTable t(2);
  const auto running = t.submit({"spits", "r.so"}, "/w", {.workers = 2});  // no time limit: may run for ever
  ASSERT_EQ(t.next_to_start(3, 0), running);
  t.started(running, {"w0 on h", "w1 on h"}, 0);
  const auto pair = t.submit({"run", "p.dot"}, "/w", {.workers = 2});
  const auto single = t.submit({"spits", "s.so"}, "/w", {.workers = 1});
  EXPECT_EQ(t.reservation(1), std::numeric_limits<double>::infinity()) << "only the unlimited job can free a second worker";
  EXPECT_EQ(t.next_to_start(1, 5), single) << "3 workers once the running job ends, 2 for the pair: 1 to spare";
  t.started(single, {"w2 on h"}, 5);
  t.ended(running, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(2, 6), pair);
  t.started(pair, {"w0 on h", "w1 on h"}, 6);
  // The single job's worker is back at the server before its driver has been
  // seen to end: counted once (idle), not also as the single job's, so the
  // triple job needs every worker there is and none is spare for `extra`.
  const auto triple = t.submit({"run", "t.dot"}, "/w", {.workers = 3});
  const auto extra = t.submit({"spits", "e.so"}, "/w", {.workers = 1});
  t.returned(single);
  EXPECT_EQ(t.next_to_start(1, 7), std::nullopt) << "the pair's 2 and the idle 1 are all the triple job will have";
  t.ended(single, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(1, 8), std::nullopt);
  t.ended(pair, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(3, 9), triple);
  t.started(triple, {"w0 on h", "w1 on h", "w2 on h"}, 9);
  t.ended(triple, 0, "", "", {});
  EXPECT_EQ(t.next_to_start(3, 10), extra);

  JobTable u(2);
  const auto huge = u.submit({"run", "h.dot"}, "/w", {.workers = 10});
  const auto small = u.submit({"spits", "s.so"}, "/w", {.workers = 1});
  EXPECT_EQ(u.reservation(2), std::nullopt) << "10 workers are more than idle and running together";
  EXPECT_EQ(u.next_to_start(2, 0), small) << "the oversized job waits for workers to join, and blocks no one";
  EXPECT_EQ(u.find(huge)->state, JobState::kQueued);

  // A worker on its way back from an ended job counts for the reservation (it is about to be idle).
  JobTable v(3);
  const auto all = v.submit({"run", "a.dot"}, "/w");
  const auto one = v.submit({"spits", "o.so"}, "/w", {.workers = 1});
  EXPECT_EQ(v.next_to_start(2, 0), one) << "alone, 2 idle workers are all there is: no reservation";
  EXPECT_EQ(v.reservation(2, 30, 1), 30.0) << "with one more on its way back, the big job's workers are there now";
  EXPECT_EQ(v.next_to_start(2, 30, 1), std::nullopt) << "so the small job would take one it needs";
  EXPECT_EQ(v.next_to_start(3, 31), all);
}

// What `redflow fetch` sends: the files a job's words name as outputs.
TEST(ServerJobFiles, AJobsOutputsAreTheFilesItsWordsName) {
  JobInfo run;
  run.args = {"run", "g.dot", "--input", "X=x.bin", "--output", "Y=out/y.bin", "-o", "Z=z.npy", "--output=W=w.bin", "--stats", "s.json",
              "--trace", "t.json"};
  EXPECT_EQ(job_output_paths(run), (std::vector<std::string>{"out/y.bin", "z.npy", "w.bin", "s.json"}));
  JobInfo spits;
  spits.args = {"spits", "job.so", "tasks=10", "out=pi.txt", "--local-workers", "2"};
  EXPECT_EQ(job_output_paths(spits), std::vector<std::string>{"pi.txt"});
  JobInfo queued = run;
  queued.id = 4;
  queued.state = JobState::kQueued;
  auto refused = read_job_files(queued, "/nonexistent/report.json", 1 << 20);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("job 4 is queued: its files are fetched once it has ended"), std::string::npos)
      << refused.status().ToString();
}

TEST(ServerJobTable, ARunningJobShortOfWorkersComesFirstForTheNextIdleOnes) {
  JobTable t(2);
  const auto a = t.submit({"run", "a.dot"}, "/w"), b = t.submit({"run", "b.dot"}, "/w", {.workers = 3}),
             r = t.submit({"rem", "r.dot", "--store", "inproc"}, "/w");
  EXPECT_EQ(t.next_short(), std::nullopt) << "nothing runs";
  t.started(a, {"w0 on h"});  // its second worker was gone
  t.started(r, {});
  EXPECT_EQ(t.short_of(a), 1u);
  EXPECT_EQ(t.short_of(r), 0u) << "a REM job takes no workers";
  EXPECT_EQ(t.short_of(b), 0u) << "a queued job is not short: it waits for all of them";
  EXPECT_EQ(t.next_short(), a);
  t.joined(a, {"w1 on h"});
  EXPECT_EQ(t.short_of(a), 0u);
  EXPECT_EQ(t.next_short(), std::nullopt);
  t.untaken(a, "w0 on h");  // sent, never confirmed
  EXPECT_EQ(t.next_short(), a);
  EXPECT_EQ(t.find(a)->workers, std::vector<std::string>{"w1 on h"});
  t.untaken(a, "w9 on h");  // not one of its workers: nothing changes
  EXPECT_EQ(t.short_of(a), 1u);
  ASSERT_TRUE(t.cancel(a).ok());
  EXPECT_EQ(t.next_short(), std::nullopt) << "a job being stopped gets no more workers";
  t.ended(a, 143, "", "", {});
  t.untaken(a, "w1 on h");
  EXPECT_EQ(t.find(a)->workers, std::vector<std::string>{"w1 on h"}) << "an ended job's workers are what they were";
}

TEST(ServerJobTable, AJobOverItsTimeLimitEndsFailedWithANamedError) {
  JobTable t;
  const auto a = t.submit({"run", "a.dot"}, "/w", {.time_limit_s = 2.5});
  EXPECT_FALSE(t.timed_out(a)) << "a queued job has no driver to stop";
  t.started(a, {});
  EXPECT_TRUE(t.timed_out(a));
  EXPECT_FALSE(t.timed_out(a)) << "its driver is stopped once";
  t.ended(a, 143, "its driver was ended by signal 15", "", {});
  EXPECT_EQ(t.find(a)->state, JobState::kFailed);
  EXPECT_EQ(t.find(a)->exit_status, kTimeLimitExitStatus);
  EXPECT_EQ(t.find(a)->message, "job 1 is over its time limit of 2.5 s (submit --time-limit): its driver was stopped");
  EXPECT_TRUE(t.running().empty());
}

TEST(ServerJobTable, CancelDequeuesAQueuedJobAndStopsARunningOne) {
  JobTable t;
  const auto a = t.submit({"run", "a.dot"}, "/w"), b = t.submit({"run", "b.dot"}, "/w"), c = t.submit({"run", "c.dot"}, "/w");
  t.started(a, {});
  auto queued = t.cancel(b);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(*queued, JobTable::CancelEffect::kDequeued);
  EXPECT_EQ(t.find(b)->state, JobState::kCancelled);
  auto running = t.cancel(a);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(*running, JobTable::CancelEffect::kStopDriver);
  EXPECT_EQ(t.find(a)->state, JobState::kRunning) << "running until its driver has ended";
  t.ended(a, 143, "signal 15", "", {});
  EXPECT_EQ(t.find(a)->state, JobState::kCancelled);
  EXPECT_EQ(t.next_to_start(3), c) << "the cancelled queued job was started";
  auto again = t.cancel(a);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, JobTable::CancelEffect::kNone);
  auto unknown = t.cancel(99);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no job 99"), std::string::npos) << unknown.status().message();
}

TEST(ServerJobTable, RecoverQueuesTheRunningJobAheadOfLaterOnes) {
  JobTable t;
  const auto a = t.submit({"run", "a.dot"}, "/w"), b = t.submit({"run", "b.dot"}, "/w");
  t.started(a, {});
  t.recover();
  EXPECT_EQ(t.find(a)->state, JobState::kQueued);
  ASSERT_EQ(t.next_to_start(3), a);
  t.started(a, {});
  EXPECT_EQ(t.find(a)->starts, 2u);
  EXPECT_EQ(t.find(b)->state, JobState::kQueued);
}

class ServerJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_server_journal");
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Writes: job 1 succeeded, job 2 cancelled while queued, job 3 running, job 4 queued.
  void write_history() {
    JobTable t;
    std::string endpoint;
    auto j = Journal::open(dir_.string(), t, endpoint);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_TRUE((*j)->endpoint("tcp://127.0.0.1:7001").ok());
    for (const char* g : {"a.dot", "b.dot", "c.dot", "d.dot"}) {
      const auto id = t.submit({"run", g, "--repeat", "2"}, "/work dir", {.workers = 2, .time_limit_s = 60});
      ASSERT_TRUE((*j)->submitted(*t.find(id)).ok());
    }
    t.started(1, {});
    ASSERT_TRUE((*j)->started(1).ok());
    t.ended(1, 0, "", "{\"model\":\"graph\"}", {"p0 on h", "p1 on h"});
    ASSERT_TRUE((*j)->ended(*t.find(1)).ok());
    ASSERT_TRUE(t.cancel(2).ok());
    ASSERT_TRUE((*j)->cancelled(2).ok());
    t.started(3, {});
    ASSERT_TRUE((*j)->started(3).ok());
  }
  fs::path dir_;
};

TEST_F(ServerJournal, AReopenedJournalKeepsFinishedAndQueuedJobsAndRunsTheRunningOneAgain) {
  write_history();
  JobTable t;
  std::string endpoint;
  auto j = Journal::open(dir_.string(), t, endpoint);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(endpoint, "tcp://127.0.0.1:7001");
  EXPECT_EQ((*j)->torn_bytes(), 0u);
  ASSERT_EQ(t.all().size(), 4u);
  EXPECT_EQ(t.find(1)->state, JobState::kSucceeded);
  EXPECT_EQ(t.find(1)->report_json, "{\"model\":\"graph\"}");
  EXPECT_EQ(t.find(1)->workers, (std::vector<std::string>{"p0 on h", "p1 on h"}));
  EXPECT_EQ(t.find(2)->state, JobState::kCancelled);
  EXPECT_EQ(t.find(3)->state, JobState::kQueued) << "the job running at the crash does not run again";
  EXPECT_EQ(t.find(3)->starts, 1u);
  EXPECT_EQ(t.find(4)->args, (std::vector<std::string>{"run", "d.dot", "--repeat", "2"}));
  EXPECT_EQ(t.find(4)->cwd, "/work dir");
  EXPECT_EQ(t.find(4)->workers_asked, 2u);
  EXPECT_EQ(t.find(4)->time_limit_s, 60.0);
  EXPECT_EQ(t.next_to_start(3), 3u);
  // A new job after the restart takes the next id, not a used one.
  EXPECT_EQ(t.submit({"run", "e.dot"}, "/w"), 5u);
}

TEST_F(ServerJournal, ATornLastRecordIsCutOffAndTheRestKept) {
  write_history();
  const auto path = dir_ / "journal";
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 3);  // the last record ('R' of job 3) cut short, as a crash mid-write leaves it
  JobTable t;
  std::string endpoint;
  auto j = Journal::open(dir_.string(), t, endpoint);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_GT((*j)->torn_bytes(), 0u);
  EXPECT_EQ(t.find(3)->state, JobState::kQueued);
  EXPECT_EQ(t.find(3)->starts, 0u) << "the torn start record was counted";
  EXPECT_EQ(t.find(1)->state, JobState::kSucceeded);
  EXPECT_LT(fs::file_size(path), size - 3) << "the torn tail was not cut off";
}

TEST_F(ServerJournal, DamageBeforeTheEndIsNamedAndRefused) {
  write_history();
  const auto path = dir_ / "journal";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);  // inside the second record
    f.put('\x7f');
  }
  JobTable t;
  std::string endpoint;
  auto j = Journal::open(dir_.string(), t, endpoint);
  ASSERT_FALSE(j.ok()) << "a damaged journal was resumed from";
  EXPECT_NE(j.status().message().find("is damaged but bytes follow it"), std::string::npos) << j.status().message();
  EXPECT_NE(j.status().message().find(path.string()), std::string::npos) << j.status().message();
}

TEST(ServerMessages, RequestsAndRepliesRoundTrip) {
  Request q{.kind = RequestKind::kSubmit, .id = 0, .args = {"spits", "job.so", "tasks=10"}, .cwd = "/home/u", .options = {.workers = 2, .time_limit_s = 1.5}};
  auto back = decode_request(encode(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, RequestKind::kSubmit);
  EXPECT_EQ(back->args, q.args);
  EXPECT_EQ(back->cwd, q.cwd);
  EXPECT_EQ(back->options.workers, 2u);
  EXPECT_EQ(back->options.time_limit_s, 1.5);
  Reply p;
  JobInfo j;
  j.id = 7;
  j.state = JobState::kFailed;
  j.exit_status = 3;
  j.message = "gave up";
  j.workers = {"w on h"};
  j.workers_asked = 2;
  j.time_limit_s = 30;
  p.jobs = {j};
  p.workers = {.endpoint = "tcp://127.0.0.1:9", .per_job = 3, .idle = {"c on h"}, .last = {"a", "b"}};
  auto r = decode_reply(encode(p));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].id, 7u);
  EXPECT_EQ(r->jobs[0].state, JobState::kFailed);
  EXPECT_EQ(r->jobs[0].exit_status, 3);
  EXPECT_EQ(r->jobs[0].workers, j.workers);
  EXPECT_EQ(r->jobs[0].workers_asked, 2u);
  EXPECT_EQ(r->jobs[0].time_limit_s, 30.0);
  EXPECT_EQ(r->workers.per_job, 3u);
  EXPECT_EQ(r->workers.idle, std::vector<std::string>{"c on h"});
  EXPECT_EQ(r->workers.last, (std::vector<std::string>{"a", "b"}));
  // An error reply decodes to the error itself, of the server's kind.
  auto err = decode_reply(encode(Reply{.status = Status::NotFound("no job 4")}));
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(err.status().message(), "server: no job 4");
}

TEST(ServerMessages, ARedirectToAJobsDriverRoundTripsAndPortZeroIsRefused) {
  std::vector<std::byte> body;
  net::encode(net::RedirectMessage{.port = 40123, .welcome_timeout_ms = 60000}, body);
  net::RedirectMessage back;
  ASSERT_TRUE(net::decode(body, back).ok());
  EXPECT_EQ(back, (net::RedirectMessage{.port = 40123, .welcome_timeout_ms = 60000}));
  body.clear();
  net::encode(net::RedirectMessage{.port = 0, .welcome_timeout_ms = 1}, body);
  const Status zero = net::decode(body, back);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.message().find("server REDIRECT"), std::string::npos) << zero.message();
  EXPECT_NE(zero.message().find("port 0"), std::string::npos) << zero.message();
  EXPECT_STREQ(net::envelope_kind_name(net::EnvelopeKind::kRedirect), "REDIRECT");
}

TEST(ServerMessages, MalformedRequestsAreNamedErrors) {
  auto good = encode(Request{.kind = RequestKind::kWait, .id = 5});
  auto expect_error = [](std::vector<std::byte> bytes, const std::string& name) {
    auto r = decode_request(bytes);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.status().message().find("server request: " + name), std::string::npos) << r.status().message();
  };
  expect_error({good.begin(), good.end() - 3}, "truncated");
  auto magic = good;
  magic[0] = std::byte{'X'};
  expect_error(magic, "bad magic");
  auto kind = good;
  kind[5] = std::byte{99};
  expect_error(kind, "unknown kind");
  auto trailing = good;
  trailing.push_back(std::byte{0});
  expect_error(trailing, "trailing bytes");
  expect_error(encode(Request{.kind = RequestKind::kSubmit}), "malformed");
}

TEST(ServerJobWords, TheServersOwnFlagsAndUnknownModelsAreRefusedByName) {
  EXPECT_TRUE(check_job_words({"run", "g.dot", "--input", "X=x.bin"}).ok());
  EXPECT_TRUE(check_job_words({"spits", "j.so", "--", "--listen"}).ok()) << "a SPITS job's own args after -- are its own";
  auto listen = check_job_words({"run", "g.dot", "--listen=tcp://127.0.0.1:1"});
  ASSERT_FALSE(listen.ok());
  EXPECT_NE(listen.message().find("--listen is the server's"), std::string::npos) << listen.message();
  EXPECT_TRUE(check_job_words({"stream", "p.dot", "--place", "smart"}).ok());
  EXPECT_TRUE(check_job_words({"rem", "g.dot", "--store", "redis://127.0.0.1:6379"}).ok());
  auto model = check_job_words({"campaign", "p.dot"});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.message().find("'campaign' is not a model the server runs"), std::string::npos) << model.message();
  // A REM job meets no workers: none of the cluster flags, only its report.
  ClusterOptions none;
  none.listen = "tcp://127.0.0.1:7";
  const auto rem = driver_argv("/bin/redflow", {"rem", "g.dot", "--store", "inproc"}, none, driver_files("/j", 2));
  EXPECT_EQ(rem, (std::vector<std::string>{"/bin/redflow", "rem", "--report-json", "/j/job-2.report.json", "g.dot", "--store", "inproc"}));
  // The driver's command line: the server's flags before the job's words.
  ClusterOptions c;
  c.listen = "tcp://127.0.0.1:7";
  c.min_workers = 2;
  const auto argv = driver_argv("/bin/redflow", {"spits", "j.so", "--", "x"}, c, driver_files("/j", 4));
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[1], "spits");
  EXPECT_EQ(argv[2], "--listen");
  EXPECT_EQ(argv[3], "tcp://127.0.0.1:7");
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()), (std::vector<std::string>{"j.so", "--", "x"}));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/j/job-4.commit.log"), argv.end()) << "a SPITS job without --log gets one in the journal";
}

}  // namespace
}  // namespace redflow::server
