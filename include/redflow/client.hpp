// Client: a program's handle on a long-lived `redflow server` (docs/server.md).
// It submits jobs (the words of a one-shot command: {"run", "g.dot", "--input",
// "X=x.bin", ...}, {"spits", "job.so", "tasks=100"}, {"stream", "p.dot"} or
// {"rem", "g.dot", "--store", ...}), asks their state,
// waits for them, cancels them and lists the server's workers. The `redflow
// submit`, `jobs`, `job`, `wait`, `cancel` and `workers` commands are this
// class on the command line.
//
//   auto client = redflow::Client::connect(redflow::ClientOptions{.server_file = "cluster.addr"});
//   auto id = client->submit({"run", "g.dot", "-i", "X=x.bin", "-o", "Y=y.bin"}, "/home/me/work");
//   auto done = client->wait(*id, 600);      // JobInfo: state, exit status, the job's RunReport JSON
//
// Every call is one request and one reply over ZeroMQ on loopback. Not
// thread-safe: one Client per thread (they are cheap).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redflow/status.hpp"

namespace redflow {

enum class JobState : std::uint8_t {
  kQueued,     // waiting for the workers it asked for (first come, first served, with backfilling)
  kRunning,    // its driver runs on the workers
  kSucceeded,  // ended with exit status 0
  kFailed,     // ended with another exit status (JobInfo::exit_status, JobInfo::message)
  kCancelled,  // cancelled before it ended
};
const char* to_string(JobState state);
inline bool finished(JobState s) { return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled; }

// What the server knows of one job.
struct JobInfo {
  std::uint64_t id = 0;
  JobState state = JobState::kQueued;
  std::vector<std::string> args;     // the one-shot command's words, as submitted
  std::string cwd;                   // where its relative paths are read and written
  int exit_status = -1;              // the one-shot command's exit status, once finished (-1 before)
  std::uint32_t starts = 0;          // times its driver was started (more than 1 after a server restart)
  std::string message;               // why it failed or was cancelled; "" otherwise
  std::string report_json;           // its RunReport as JSON (redflow/report.hpp), once it succeeded or failed with one
  std::vector<std::string> workers;  // "NAME on HOST": while it runs, the workers sent to it; then the places of its report
  std::uint32_t workers_asked = 0;   // how many workers it runs on (0: the server's --min-workers; a REM job takes none)
  double time_limit_s = 0;           // its driver is stopped this long after it started (0: no limit)
};

// A file of a finished job, as Client::fetch returns it.
struct JobFile {
  std::string name;              // the path its words gave (relative to its directory), or "report.json"
  std::vector<std::byte> bytes;  // its contents
};

// What a job asks of the server besides its words.
struct SubmitOptions {
  std::uint32_t workers = 0;  // run on this many of the server's workers (0: its --min-workers)
  double time_limit_s = 0;    // stop it, failed with a named error, this long after it starts (0: no limit)
};

struct ClientOptions {
  // The server's client endpoint (what `redflow server` prints), or "" to
  // read it from server_file.
  std::string endpoint = {};
  // The file `redflow server --server-file` writes (its first line is the
  // client endpoint). Default: empty; one of the two is required.
  std::string server_file = {};
  // Seconds to wait for each reply before a call fails naming the server.
  // Default: 10.
  double timeout_s = 10;
};

class Client {
 public:
  static Result<Client> connect(const ClientOptions& options);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  // Queues a job; returns its id at once. `args` are a one-shot command's
  // words ("run ...", "spits ...", "stream ..." or "rem ..."), without the cluster flags (--listen
  // and the like are the server's); `cwd` is where its paths are relative to.
  Result<std::uint64_t> submit(const std::vector<std::string>& args, const std::string& cwd, const SubmitOptions& options = {});
  Result<JobInfo> status(std::uint64_t id);
  // Returns once the job has finished, or fails after timeout_s seconds.
  Result<JobInfo> wait(std::uint64_t id, double timeout_s);
  // A queued job is taken out of the queue; a running one has its driver
  // stopped. Returns the job as it stands after the call.
  Result<JobInfo> cancel(std::uint64_t id);
  // A finished job's files, read by the server where the job wrote them:
  // the outputs its words name (--output NAME=FILE and --stats FILE of run,
  // rem and stream; out=FILE of a SPITS job) that exist, and its RunReport
  // as "report.json". A job not finished, or files over 512 MiB in all, is
  // a named error; so is a succeeded job's output that is gone.
  Result<std::vector<JobFile>> fetch(std::uint64_t id);
  // Every job the server knows, oldest first.
  Result<std::vector<JobInfo>> list();
  // The workers waiting for a job now and those the server's last finished
  // job ran on (name and host), and how many a job runs on by default.
  // One allocation the server asked a batch system (Slurm) for, for
  // workers (`redflow server --slurm-workers`).
  struct Allocation {
    std::string id = {};       // the batch system's job id
    std::string state = {};    // "queued" (waiting in Slurm), "running", "ending" or "ended"
    std::uint32_t workers = 0;  // the workers it starts
    std::uint32_t joined = 0;   // of them, at the server now
    double age_s = 0;          // seconds since the server asked for it
    std::string why = {};      // why the server cancelled it, if it did
  };
  struct Workers {
    std::string endpoint;              // where workers connect
    std::uint32_t per_job = 0;         // workers a job runs on unless it asks otherwise (the server's --min-workers)
    std::vector<std::string> idle;     // "NAME on HOST" of each worker waiting for a job now
    std::vector<std::string> last;     // "NAME on HOST" of the last job that reported its places
    std::string allocating = {};       // "" when the server asks no batch system; else its bounds, and what went wrong last
    std::vector<Allocation> allocations = {};  // the allocations asked for, oldest first (the ended ones: the last few)
  };
  Result<Workers> workers();

 private:
  struct Link;
  explicit Client(std::unique_ptr<Link> link);
  std::unique_ptr<Link> link_;
};

}  // namespace redflow
