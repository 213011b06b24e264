// `redflow server` runs jobs of the stream and REM models beside graph and
// SPITS jobs, with real processes: three persistent workers serve a stream
// job's nodes; a REM job's scheduler processes meet in a real memcached or
// redis-server started by the test; 30 jobs of the four models go through
// one server. Every output equals the one-process run of the same command
// line, and the workers are the ones started at first.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rem_servers.hpp"
#include "server_cluster.hpp"

namespace redflow {
namespace {

using testing::run_cli;

class ServerModels : public testing::ServerClusterFixture {
 protected:
  // `redflow stream sum.dot` in one process, its two collect operators to reference_*.bin.
  void stream_reference() {
    auto r = run_cli("stream " + sum_dot() + " --output all=" + (dir_ / "reference_all.bin").string() +
                     " --output total=" + (dir_ / "reference_total.bin").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static std::string sum_dot() { return (std::filesystem::path(REDFLOW_SOURCE_DIR) / "examples/streams/sum.dot").string(); }
  static std::string demo_dot() { return (std::filesystem::path(REDFLOW_SOURCE_DIR) / "examples/demo/pipeline.dot").string(); }
  // A REM job's words on `store`, the demo graph from input `a`, Y to `y`.
  std::vector<std::string> rem_job(const std::string& store, const Path& a, const Path& y) const {
    return {"rem", demo_dot(), "--store", store, "--procs", "2", "--timeout", "60", "--input", "A=" + a.string(), "--output", "Y=" + y.string()};
  }
  // The same REM graph in one process, on the in-process store.
  std::string rem_reference(const Path& a) {
    const Path y = dir_ / ("rem_reference_" + a.filename().string());
    auto r = run_cli("rem " + demo_dot() + " --input A=" + a.string() + " --output Y=" + y.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return file_text(y);
  }
};

TEST_F(ServerModels, AStreamJobRunsOnTheServersWorkersAndEqualsItsOneProcessRun) {
  testing::within_seconds(120, "a stream job through the server", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    stream_reference();
    Client c = client();
    // Relative outputs: written in the submitter's directory.
    auto id = c.submit({"stream", sum_dot(), "--place", "topological", "--output", "all=all.bin", "--output", "total=total.bin"}, dir_.string());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    const JobInfo j = wait(c, *id);
    ASSERT_EQ(j.state, JobState::kSucceeded) << j.message << "\n" << job_log(*id);
    EXPECT_EQ(names(j), (std::set<std::string>{"p0", "p1", "p2"})) << "the stream job did not run a node on each worker";
    EXPECT_NE(j.report_json.find("\"model\": \"stream\""), std::string::npos) << j.report_json;
    const std::string all = file_text(dir_ / "all.bin");
    EXPECT_EQ(all.size(), 1000u * 8) << "1000 sums of 8 bytes";
    EXPECT_EQ(all, file_text(dir_ / "reference_all.bin"));
    EXPECT_EQ(file_text(dir_ / "total.bin"), file_text(dir_ / "reference_total.bin"));
    // A graph job after it: the same workers take the next model's role.
    const Path a = random_input("a.bin", 5);
    auto g = c.submit(graph_job(a, dir_ / "y.bin"), dir_.string());
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(wait(c, *g).state, JobState::kSucceeded) << job_log(*g);
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    expect_same_workers_running();
  });
}

TEST_F(ServerModels, RemJobsOnMemcachedAndRedisEqualTheirOneProcessRuns) {
  testing::within_seconds(120, "REM jobs through the server", [&] {
    testing::ServerProcess memcached, redis;
    ASSERT_EQ(testing::start_memcached(memcached), "");
    ASSERT_EQ(testing::start_redis(redis), "");
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    const Path a1 = random_input("a1.bin", 21), a2 = random_input("a2.bin", 22);
    Client c = client();
    auto m = c.submit(rem_job("memcached://127.0.0.1:" + std::to_string(memcached.port()), a1, dir_ / "m.bin"), dir_.string());
    auto r = c.submit(rem_job("redis://127.0.0.1:" + std::to_string(redis.port()), a2, dir_ / "r.bin"), dir_.string());
    ASSERT_TRUE(m.ok() && r.ok());
    for (std::uint64_t id : {*m, *r}) {
      const JobInfo j = wait(c, id);
      EXPECT_EQ(j.state, JobState::kSucceeded) << j.message << "\n" << job_log(id);
      EXPECT_NE(j.report_json.find("\"model\": \"rem\""), std::string::npos) << j.report_json;
      EXPECT_TRUE(j.workers.empty()) << "a REM job's schedulers are its own processes, not the server's workers";
    }
    const std::string m_out = file_text(dir_ / "m.bin"), r_out = file_text(dir_ / "r.bin");
    EXPECT_FALSE(m_out.empty());
    EXPECT_EQ(m_out, rem_reference(a1));
    EXPECT_EQ(r_out, rem_reference(a2));
    EXPECT_EQ(m_out, graph_reference(a1)) << "REM and the graph runtime disagree on the same graph";
    expect_same_workers_running();
  });
}

// One server, three workers, 30 jobs of the four models: 16 submitted at
// once (asking for 1, 2 or all 3 workers, so several run at a time), then 14
// one after another, each submitted when the last ended.
TEST_F(ServerModels, ThirtyJobsOfAllFourModelsEqualTheirOneProcessRunsOnTheSameWorkers) {
  testing::within_seconds(240, "30 jobs of four models through one server", [&] {
    testing::ServerProcess memcached;
    ASSERT_EQ(testing::start_memcached(memcached), "");
    const std::string store = "memcached://127.0.0.1:" + std::to_string(memcached.port());
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    stream_reference();
    const std::vector<std::string> spits_args = {"tasks=200", "work_us=500"};
    const auto spits_expected = spits_reference(spits_args);
    std::vector<Path> inputs;
    std::vector<std::string> expected_y;
    for (unsigned i = 0; i < 3; ++i) {
      inputs.push_back(random_input("in" + std::to_string(i) + ".bin", 100 + i));
      expected_y.push_back(graph_reference(inputs.back()));
      ASSERT_EQ(rem_reference(inputs.back()), expected_y.back()) << "REM and the graph runtime disagree on input " << i;
    }
    struct Submitted {
      std::uint64_t id;
      char model;      // g, s, t (stream), r
      std::string out; // its output file (the stream job's "all")
      unsigned input;  // graph and REM jobs
    };
    Client c = client();
    auto submit = [&](unsigned k) {
      const char model = "gstr"[k % 4];
      const unsigned input = k % 3;
      const std::string out = "out" + std::to_string(k) + ".bin";
      std::vector<std::string> words;
      if (model == 'g') words = graph_job(inputs[input], dir_ / out);
      if (model == 's') {
        words = {"spits", REDFLOW_SPITS_TEST_JOB};
        words.insert(words.end(), spits_args.begin(), spits_args.end());
        words.push_back("out=" + (dir_ / out).string());  // absolute: the workers' plugin opens it too
      }
      if (model == 't') words = {"stream", sum_dot(), "--place", "topological", "--output", "all=" + out};
      if (model == 'r') {
        words = rem_job(store, inputs[input], dir_ / out);
        words.insert(words.end(), {"--instance", "job" + std::to_string(k)});  // each job its own labels in the one store
      }
      auto id = c.submit(words, dir_.string(), {.workers = k % 3 + 1u});
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      return Submitted{id.ok() ? *id : 0, model, out, input};
    };
    auto check = [&](const Submitted& s) {
      const JobInfo j = wait(c, s.id, 120);
      EXPECT_EQ(j.state, JobState::kSucceeded) << "job " << s.id << " (" << s.model << "): " << j.message << "\n"
                                               << job_log(s.id) << cluster_logs();
      if (s.model == 'g' || s.model == 'r') {
        EXPECT_EQ(file_text(dir_ / s.out), expected_y[s.input]) << "job " << s.id;
      } else if (s.model == 's') {
        EXPECT_EQ(commit_lines(dir_ / s.out), spits_expected) << "job " << s.id;
      } else {
        EXPECT_EQ(file_text(dir_ / s.out), file_text(dir_ / "reference_all.bin")) << "job " << s.id;
      }
      for (const auto& name : names(j)) {
        EXPECT_TRUE(name == "p0" || name == "p1" || name == "p2") << "job " << s.id << " ran on " << name;
      }
    };
    std::vector<Submitted> at_once;
    for (unsigned k = 0; k < 16; ++k) at_once.push_back(submit(k));
    for (const auto& s : at_once) check(s);
    for (unsigned k = 16; k < 30; ++k) check(submit(k));
    auto listed = c.list();
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->size(), 30u);
    expect_same_workers_running();
  });
}

// `submit --array`: one command, one job per index, {} replaced by the index
// in every word; checked whole before any job is queued.
TEST_F(ServerModels, AnArrayIsOneSubmitOfOneJobPerIndex) {
  testing::within_seconds(120, "an array of graph jobs", [&] {
    const std::string endpoint = start_server(1);
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint, 2);
    const std::string server = " --server-file " + (dir_ / "server").string();
    std::vector<Path> inputs;
    for (unsigned i = 1; i <= 4; ++i) inputs.push_back(random_input("a" + std::to_string(i) + ".bin", 40 + i));
    const std::string words = " run " + demo_dot() + " --input A=" + (dir_ / "a{}.bin").string() + " --output Y=" + (dir_ / "y{}.bin").string();
    // Index 5 has no input file: the whole array is refused, naming the index, and nothing is queued.
    auto missing = run_cli("submit" + server + " --array 1..5" + words);
    EXPECT_EQ(missing.exit_code, 2) << missing.output;
    EXPECT_NE(missing.output.find("--array index 5"), std::string::npos) << missing.output;
    EXPECT_NE(missing.output.find("a5.bin"), std::string::npos) << missing.output;
    auto backwards = run_cli("submit" + server + " --array 4..1" + words);
    EXPECT_EQ(backwards.exit_code, 2) << backwards.output;
    EXPECT_NE(backwards.output.find("'4..1' ends before it starts"), std::string::npos) << backwards.output;
    auto same = run_cli("submit" + server + " --array 1..2 run " + demo_dot() + " --input A=" + inputs[0].string());
    EXPECT_EQ(same.exit_code, 2) << same.output;
    EXPECT_NE(same.output.find("no word has {}"), std::string::npos) << same.output;
    Client c = client();
    auto listed = c.list();
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->empty()) << "a refused array queued " << listed->size() << " job(s)";

    auto r = run_cli("submit" + server + " --array 1..2,3-4 --wait" + words);
    ASSERT_EQ(r.exit_code, 0) << r.output << cluster_logs();
    EXPECT_EQ(r.output, "1\n2\n3\n4\n") << "one id per index, in order";
    for (unsigned i = 1; i <= 4; ++i) {
      const JobInfo j = wait(c, i);
      EXPECT_EQ(j.state, JobState::kSucceeded) << j.message;
      EXPECT_NE(std::find(j.args.begin(), j.args.end(), "A=" + (dir_ / ("a" + std::to_string(i) + ".bin")).string()), j.args.end())
          << "job " << i << " did not get index " << i;
      EXPECT_EQ(file_text(dir_ / ("y" + std::to_string(i) + ".bin")), graph_reference(inputs[i - 1])) << "index " << i;
    }

    // `redflow fetch`: the job's output and report, sent by the server, written elsewhere.
    const Path to = dir_ / "fetched";
    auto fetched = run_cli("fetch 2" + server + " --to " + to.string());
    ASSERT_EQ(fetched.exit_code, 0) << fetched.output;
    EXPECT_EQ(file_text(to / "y2.bin"), graph_reference(inputs[1]));
    EXPECT_NE(file_text(to / "job-2.report.json").find("\"failed\""), std::string::npos) << "not the job's RunReport";
    auto again = run_cli("fetch 2" + server + " --to " + to.string());
    EXPECT_EQ(again.exit_code, 1) << again.output;
    EXPECT_NE(again.output.find("exists: give --force"), std::string::npos) << again.output;
    EXPECT_EQ(run_cli("fetch 2" + server + " --to " + to.string() + " --force").exit_code, 0);
    auto unknown = run_cli("fetch 99" + server);
    EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
    EXPECT_NE(unknown.output.find("no job 99"), std::string::npos) << unknown.output;
    // A job whose output is gone since: named.
    std::filesystem::remove(dir_ / "y3.bin");
    auto gone = run_cli("fetch 3" + server + " --to " + to.string());
    EXPECT_EQ(gone.exit_code, 1) << gone.output;
    EXPECT_NE(gone.output.find("output '" + (dir_ / "y3.bin").string() + "' is gone"), std::string::npos) << gone.output;
  });
}

TEST_F(ServerModels, StreamAndRemWordsAreCheckedByTheirOwnParsersBeforeAnythingIsSent) {
  testing::within_seconds(60, "stream and rem usage errors", [&] {
    ASSERT_FALSE(start_server().empty());
    const std::string server = " --server-file " + (dir_ / "server").string();
    auto mode = run_cli("submit" + server + " stream " + sum_dot() + " --mode bogus");
    EXPECT_EQ(mode.exit_code, 2) << mode.output;
    EXPECT_NE(mode.output.find("--mode"), std::string::npos) << mode.output;
    auto address = run_cli("submit" + server + " stream " + sum_dot() + " --address-file x.addr");
    EXPECT_EQ(address.exit_code, 2) << address.output;
    EXPECT_NE(address.output.find("--address-file is the server's"), std::string::npos) << address.output;
    auto missing = run_cli("submit" + server + " rem " + (dir_ / "no_such.dot").string() + " --store inproc");
    EXPECT_EQ(missing.exit_code, 2) << missing.output;
    EXPECT_NE(missing.output.find("no_such.dot"), std::string::npos) << missing.output;
    auto model = run_cli("submit" + server + " campaign x");
    EXPECT_EQ(model.exit_code, 2) << model.output;
    EXPECT_NE(model.output.find("'campaign' is not a model the server runs (run, spits, stream or rem)"), std::string::npos) << model.output;
    Client c = client();
    auto listed = c.list();
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->empty()) << "a refused submit was queued";
  });
}

}  // namespace
}  // namespace redflow
