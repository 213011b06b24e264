// `redflow server` with real processes: one server, three `redflow worker
// --persist` processes started once, jobs of both models submitted through
// redflow::Client and the CLI. Every output equals its one-process run and
// the same worker PIDs serve every job; cancel takes a queued job out and
// stops a running one; a server killed with -9 while a SPITS job runs and a
// graph job waits, restarted on its journal, finishes both, each SPITS task
// committed once; a malformed request is a named error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <zmq.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/server_messages.hpp"
#include "server_cluster.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

class ServerCluster : public testing::ServerClusterFixture {};

TEST_F(ServerCluster, JobsOfBothModelsSubmittedAtOnceEqualTheirOneProcessRunsOnTheSameWorkers) {
  testing::within_seconds(240, "four jobs through the server", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    const fs::path a1 = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/A.bin", a2 = random_input("a2.bin", 7);
    const std::vector<std::string> spits_args = {"tasks=300", "work_us=1000"};
    const auto spits_expected = spits_reference(spits_args);
    ASSERT_EQ(spits_expected.size(), 300u);
    Client c = client();
    const std::string cwd = dir_.string();
    std::vector<std::uint64_t> ids;
    for (auto words : {graph_job(a1, dir_ / "y1.bin"), graph_job(a2, dir_ / "y2.bin")}) {
      auto id = c.submit(words, cwd);
      ASSERT_TRUE(id.ok()) << id.status().ToString();
      ids.push_back(*id);
    }
    for (const char* out : {"s1.txt", "s2.txt"}) {
      std::vector<std::string> words = {"spits", REDFLOW_SPITS_TEST_JOB};
      words.insert(words.end(), spits_args.begin(), spits_args.end());
      words.push_back(std::string("out=") + out);  // relative: the job runs in the submitter's directory
      auto id = c.submit(words, cwd);
      ASSERT_TRUE(id.ok()) << id.status().ToString();
      ids.push_back(*id);
    }
    EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 3, 4}));
    const std::set<std::string> all = {"p0", "p1", "p2"};
    for (std::uint64_t id : ids) {
      const JobInfo j = wait(c, id);
      EXPECT_EQ(j.state, JobState::kSucceeded) << "job " << id << ": " << j.message << "\n" << file_text(dir_ / "journal" / ("job-" + std::to_string(id) + ".log"));
      EXPECT_EQ(j.exit_status, 0);
      EXPECT_EQ(names(j), all) << "job " << id << " did not run on the three workers";
      EXPECT_NE(j.report_json.find(id <= 2 ? "\"model\": \"graph\"" : "\"model\": \"spits\""), std::string::npos) << j.report_json;
    }
    EXPECT_EQ(file_text(dir_ / "y1.bin"), graph_reference(a1));
    EXPECT_EQ(file_text(dir_ / "y2.bin"), graph_reference(a2));
    EXPECT_EQ(commit_lines(dir_ / "s1.txt"), spits_expected) << "a task missing, or committed twice";
    EXPECT_EQ(commit_lines(dir_ / "s2.txt"), spits_expected);
    expect_same_workers_running();

    // The same through the command line: submit prints the id, wait exits as the job did.
    const std::string server = " --server-file " + (dir_ / "server").string();
    auto submitted = run_cli("submit" + server + " run " + std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot --input A=" +
                             a2.string() + " --output Y=" + (dir_ / "y3.bin").string());
    ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
    EXPECT_EQ(submitted.output, "5\n");
    auto waited = run_cli("wait 5" + server);
    EXPECT_EQ(waited.exit_code, 0) << waited.output;
    EXPECT_NE(waited.output.find("job 5: succeeded (exit status 0)"), std::string::npos) << waited.output;
    EXPECT_EQ(file_text(dir_ / "y3.bin"), file_text(dir_ / "y2.bin"));
    auto jobs = run_cli("jobs" + server);
    EXPECT_EQ(jobs.exit_code, 0) << jobs.output;
    EXPECT_EQ(std::count(jobs.output.begin(), jobs.output.end(), '\n'), 6) << "a header and five jobs:\n" << jobs.output;
    auto workers = run_cli("workers" + server);
    EXPECT_EQ(workers.exit_code, 0) << workers.output;
    for (const char* n : {"p0 on ", "p1 on ", "p2 on "}) EXPECT_NE(workers.output.find(n), std::string::npos) << workers.output;
    auto job = run_cli("job 3" + server);
    EXPECT_NE(job.output.find("\"unit\": \"tasks committed\""), std::string::npos) << job.output;
    expect_same_workers_running();
  });
}

TEST_F(ServerCluster, CancelTakesAQueuedJobOutAndStopsARunningOneAndTheNextJobRuns) {
  testing::within_seconds(180, "cancel through the server", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    Client c = client();
    const std::string cwd = dir_.string();
    auto long_job = c.submit({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=100000", "work_us=10000", "out=long.txt"}, cwd);
    const fs::path a = random_input("a.bin", 3);
    auto queued = c.submit(graph_job(a, dir_ / "never.bin"), cwd);
    auto next = c.submit(graph_job(a, dir_ / "y.bin"), cwd);
    ASSERT_TRUE(long_job.ok() && queued.ok() && next.ok());
    // Running once its first tasks are committed.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(dir_ / "long.txt") || fs::file_size(dir_ / "long.txt") == 0) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the long job committed nothing:\n" << file_text(dir_ / "server.log");
      auto now = c.status(*long_job);
      ASSERT_TRUE(now.ok() && !finished(now->state)) << "the long job ended: " << (now.ok() ? now->message : now.status().ToString()) << "\n"
                                                      << job_log(*long_job);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto q = c.cancel(*queued);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_EQ(q->state, JobState::kCancelled) << "a queued job is cancelled at once";
    auto r = c.cancel(*long_job);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const JobInfo stopped = wait(c, *long_job, 30);
    EXPECT_EQ(stopped.state, JobState::kCancelled) << stopped.message;
    EXPECT_LT(commit_lines(dir_ / "long.txt").size(), 100000u) << "the cancelled job ran to its end";
    const JobInfo done = wait(c, *next);
    EXPECT_EQ(done.state, JobState::kSucceeded) << done.message;
    EXPECT_EQ(done.starts, 1u);
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    EXPECT_FALSE(fs::exists(dir_ / "never.bin")) << "the cancelled queued job ran";
    auto never = c.status(*queued);
    ASSERT_TRUE(never.ok());
    EXPECT_EQ(never->starts, 0u);
    expect_same_workers_running();
  });
}

TEST_F(ServerCluster, AServerKilledWithJobsRunningAndQueuedResumesFromItsJournal) {
  testing::within_seconds(240, "a server killed and restarted", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    const std::vector<std::string> spits_args = {"tasks=1500", "work_us=8000"};
    const auto spits_expected = spits_reference(spits_args);
    Client c = client();
    const std::string cwd = dir_.string();
    std::vector<std::string> words = {"spits", REDFLOW_SPITS_TEST_JOB};
    words.insert(words.end(), spits_args.begin(), spits_args.end());
    words.push_back("out=s.txt");
    auto spits_job = c.submit(words, cwd);
    const fs::path a = random_input("a.bin", 11);
    auto graph = c.submit(graph_job(a, dir_ / "y.bin"), cwd);
    ASSERT_TRUE(spits_job.ok() && graph.ok());
    // Killed once a few hundred tasks are committed: mid-job.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(dir_ / "s.txt") || commit_lines(dir_ / "s.txt").size() < 200) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << file_text(dir_ / "server.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_server();
    // The driver died with the server (it held the workers' endpoint).
    const std::string log = file_text(dir_ / "server.log");
    const std::string started = "job 1 started (driver pid ";
    const std::size_t at = log.find(started);
    ASSERT_NE(at, std::string::npos) << log;
    const pid_t driver = std::stoi(log.substr(at + started.size()));
    ASSERT_GT(driver, 0) << log;
    const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::kill(driver, 0) == 0 && std::chrono::steady_clock::now() < gone_by) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_NE(::kill(driver, 0), 0) << "the job's driver outlived its server";
    const std::size_t before = commit_lines(dir_ / "s.txt").size();
    ASSERT_LT(before, 1500u) << "the job ended before the kill: nothing to resume";

    EXPECT_EQ(start_server(), endpoint) << "the restarted server listens elsewhere than where the workers redial";
    Client again = client();
    auto listed = again.list();
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    ASSERT_EQ(listed->size(), 2u);
    const JobInfo s = wait(again, *spits_job);
    EXPECT_EQ(s.state, JobState::kSucceeded) << s.message << "\n" << file_text(dir_ / "journal" / "job-1.log");
    EXPECT_EQ(s.starts, 2u) << "the SPITS job was not started again";
    EXPECT_EQ(commit_lines(dir_ / "s.txt"), spits_expected) << "a task missing, or committed twice across the restart";
    EXPECT_NE(s.report_json.find("\"units\": " + std::to_string(1500 - before)), std::string::npos)
        << "the restarted job did not resume from its commit log (" << before << " committed before): " << s.report_json;
    const JobInfo g = wait(again, *graph);
    EXPECT_EQ(g.state, JobState::kSucceeded) << g.message;
    EXPECT_EQ(g.starts, 1u);
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    expect_same_workers_running();
  });
}

// A graph job with --repeat, its server killed with -9 mid-job: started
// again, its driver runs only the executions after the last one completed
// (the server gives it --resume-file in the journal directory), and its
// output is the one-process run's.
TEST_F(ServerCluster, AGraphJobKilledWithItsServerResumesAfterItsLastCompletedExecution) {
  testing::within_seconds(180, "a graph job resumed", [&] {
    const std::string endpoint = start_server(2);
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint, 2, {"--lib", REDFLOW_TEST_PLUGIN});
    std::ofstream(dir_ / "slow.dot") << "digraph \"slow\" {\n  \"X\" [kind=input, bytes=256];\n  \"Y\" [kind=output, bytes=256];\n"
                                        "  \"nap\" [actor=\"test.sleep\", args=\"ms=40\"];\n  \"X\" -> \"nap\" [port=0];\n  \"nap\" -> \"Y\";\n}\n";
    const fs::path x = random_input("x.bin", 5);
    Client c = client();
    const unsigned repeat = 100;
    auto job = c.submit({"run", (dir_ / "slow.dot").string(), "--lib", REDFLOW_TEST_PLUGIN, "--repeat", std::to_string(repeat), "--input",
                         "X=" + x.string(), "--output", "Y=" + (dir_ / "y.bin").string()},
                        dir_.string());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    // Killed once 10 executions are recorded as completed.
    const fs::path resume = dir_ / "journal" / ("job-" + std::to_string(*job) + ".resume");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    unsigned done = 0;
    while (done < 10) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no progress recorded in " << resume << "\n" << cluster_logs() << job_log(*job);
      std::ifstream(resume) >> done;
      auto now = c.status(*job);
      ASSERT_TRUE(now.ok() && !finished(now->state)) << "the job ended: " << (now.ok() ? now->message : now.status().ToString()) << "\n"
                                                      << job_log(*job);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_server();
    EXPECT_EQ(start_server(2), endpoint);
    Client again = client();
    const JobInfo j = wait(again, *job);
    EXPECT_EQ(j.state, JobState::kSucceeded) << j.message << "\n" << job_log(*job);
    EXPECT_EQ(j.starts, 2u);
    EXPECT_EQ(file_text(dir_ / "y.bin"), file_text(x)) << "test.sleep copies its input";
    // The second start says where it resumed, no earlier than where the kill found the job, and ran only the rest.
    const std::string log = job_log(*job);
    const std::string said = "redflow: resuming after execution ";
    const std::size_t at = log.find(said);
    ASSERT_NE(at, std::string::npos) << log;
    const unsigned resumed = static_cast<unsigned>(std::stoul(log.substr(at + said.size())));
    EXPECT_GE(resumed, done) << log;
    EXPECT_LT(resumed, repeat) << log;
    EXPECT_NE(log.find(fmt::format("{} run(s)", repeat - resumed), at), std::string::npos) << "the resumed driver ran more than the rest\n" << log;
    std::ifstream in(resume);
    unsigned final_done = 0, of = 0;
    in >> final_done >> of;
    EXPECT_EQ(final_done, repeat);
    EXPECT_EQ(of, repeat);
  });
}

TEST_F(ServerCluster, AMalformedRequestIsANamedErrorAndTheServerGoesOn) {
  testing::within_seconds(60, "malformed requests", [&] {
    ASSERT_FALSE(start_server().empty());
    std::ifstream in(dir_ / "server");
    std::string endpoint;
    std::getline(in, endpoint);
    zmq::context_t context;
    zmq::socket_t s(context, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 10000);
    s.connect(endpoint);
    s.send(zmq::str_buffer("GET / HTTP/1.0"), zmq::send_flags::none);
    zmq::message_t m;
    ASSERT_TRUE(s.recv(m)) << "no answer to a malformed request";
    auto reply = server::decode_reply(std::span(static_cast<const std::byte*>(m.data()), m.size()));
    ASSERT_FALSE(reply.ok()) << "a malformed request was answered as a good one";
    EXPECT_NE(reply.status().message().find("server: server request: bad magic"), std::string::npos) << reply.status().message();
    Client c = client();
    auto list = c.list();
    ASSERT_TRUE(list.ok()) << "the server stopped answering after a malformed request: " << list.status().ToString();
    EXPECT_TRUE(list->empty());
    // Bad words are refused before anything is sent: by name, exit status 2.
    const std::string server = " --server-file " + (dir_ / "server").string();
    auto listen = run_cli("submit" + server + " run " + std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot --listen tcp://127.0.0.1:9");
    EXPECT_EQ(listen.exit_code, 2) << listen.output;
    EXPECT_NE(listen.output.find("--listen is the server's"), std::string::npos) << listen.output;
    auto missing = run_cli("submit" + server + " run " + (dir_ / "no_such.dot").string());
    EXPECT_EQ(missing.exit_code, 2) << missing.output;
    EXPECT_NE(missing.output.find("no_such.dot"), std::string::npos) << missing.output;
    auto unknown = run_cli("job 99" + server);
    EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
    EXPECT_NE(unknown.output.find("no job 99"), std::string::npos) << unknown.output;
    auto after = c.list();
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->empty()) << "a refused submit was queued";
  });
}

}  // namespace
}  // namespace redflow
