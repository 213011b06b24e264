// JobDriver (job_driver.hpp): a job's driver as a child process.
#include "server/job_driver.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace redflow::server {

namespace {

// Each flag the server sets for every job, with whether it takes a value.
constexpr std::array<const char*, 14> kServersOwnFlags = {"--listen", "--min-workers", "--min-tiles", "--max-workers", "--max-tiles",
                                                      "--wait", "--tile-wait", "--heartbeat-timeout", "--key", "--authorized-keys",
                                                      "--address-file", "--rendezvous-dir", "--announce", "--report-json"};

// The last line of the driver's output that says what failed.
std::string last_error_line(const std::string& log) {
  std::ifstream in(log);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.find("error") != std::string::npos) error = line;
  }
  return error.empty() ? last : error;
}

// Signals the driver's process group (it leads one: a REM job's scheduler
// processes are in it), or the driver alone if it has not made it yet.
void signal_driver(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

}  // namespace

bool on_workers(const std::string& model) { return model == "run" || model == "spits" || model == "stream"; }

Status check_job_words(const std::vector<std::string>& args) {
  if (args.empty()) return Status::InvalidArgument("submit: no command given (run GRAPH.dot, spits JOB.so, stream PROGRAM.dot or rem GRAPH.dot ...)");
  if (!on_workers(args[0]) && args[0] != "rem")
    return Status::InvalidArgument("submit: '" + args[0] + "' is not a model the server runs (run, spits, stream or rem)");
  for (const auto& word : args) {
    if (word == "--") break;  // the rest are a SPITS job's own args
    for (const char* flag : kServersOwnFlags) {
      const std::size_t n = std::strlen(flag);
      if (word.compare(0, n, flag) == 0 && (word.size() == n || word[n] == '='))
        return Status::InvalidArgument("submit: " + std::string(flag) +
                                       " is the server's: every job runs on its workers (redflow server's flags; `redflow job ID` gives the report)");
    }
  }
  return Status::Ok();
}

DriverFiles driver_files(const std::string& dir, std::uint64_t id) {
  const std::filesystem::path d(dir);
  const std::string stem = "job-" + std::to_string(id);
  return {(d / (stem + ".log")).string(), (d / (stem + ".report.json")).string(), (d / (stem + ".commit.log")).string(),
          (d / (stem + ".resume")).string()};
}

std::vector<std::string> driver_argv(const std::string& exe, const std::vector<std::string>& args, const ClusterOptions& cluster,
                                     const DriverFiles& files) {
  std::vector<std::string> argv = {exe, args.at(0)};
  auto flag = [&](const char* name, const std::string& value) {
    argv.push_back(name);
    argv.push_back(value);
  };
  // A REM job has no driver to meet workers: its scheduler processes meet in its store.
  if (!on_workers(args[0])) {
    flag("--report-json", files.report_json);
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return argv;
  }
  // Before the job's own words: a SPITS job's args after `--` stay its args.
  flag("--listen", cluster.listen);
  flag("--min-workers", std::to_string(cluster.min_workers));
  flag("--wait", std::to_string(cluster.wait_s));
  flag("--heartbeat-timeout", std::to_string(cluster.heartbeat_timeout_s));
  if (!cluster.key_file.empty()) flag("--key", cluster.key_file);
  if (!cluster.authorized_keys_file.empty()) flag("--authorized-keys", cluster.authorized_keys_file);
  flag("--report-json", files.report_json);
  // What lets a job started again after a server restart resume, unless the job names its own.
  auto gives = [&](const std::string& name) {
    for (const auto& w : args) {
      if (w == "--") break;
      if (w == name || w.rfind(name + "=", 0) == 0) return true;
    }
    return false;
  };
  if (args[0] == "spits" && !gives("--log")) flag("--log", files.commit_log);
  if (args[0] == "run" && !gives("--resume-file")) flag("--resume-file", files.resume);
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return argv;
}

Result<JobDriver> JobDriver::start(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log) {
  // Everything the child needs is made before fork: it only changes
  // directory, redirects and execs (other threads, ZeroMQ's, may hold locks).
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return Status::IOError("log '" + log + "': cannot open: " + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out);
    return Status::IOError(std::string("cannot start a job's driver: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the server died before prctl
    ::setpgid(0, 0);  // a Ctrl-C at the server's terminal stops the server, which keeps the job to run again, not the job
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (::chdir(cwd.c_str()) != 0) {
      static const char kMsg[] = "redflow: error: the job's directory does not exist on the server's machine\n";
      (void)!::write(2, kMsg, sizeof kMsg - 1);
      ::_exit(1);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out);
  JobDriver d;
  d.pid_ = pid;
  d.log_ = log;
  return d;
}

void JobDriver::stop(double grace_s) {
  if (pid_ <= 0) return;
  signal_driver(pid_, SIGTERM);
  kill_at_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(grace_s));
}

bool JobDriver::ended(int& exit_status, std::string& message) {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got == 0) {
    if (std::chrono::steady_clock::now() >= kill_at_) {
      signal_driver(pid_, SIGKILL);
      kill_at_ = std::chrono::steady_clock::time_point::max();
    }
    return false;
  }
  pid_ = -1;
  if (got < 0) {
    exit_status = 1;
    message = std::string("lost track of the job's driver: ") + std::strerror(errno);
    return true;
  }
  if (WIFSIGNALED(status)) {
    exit_status = 128 + WTERMSIG(status);
    message = "its driver was ended by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    return true;
  }
  exit_status = WEXITSTATUS(status);
  message = exit_status == 0 ? std::string() : last_error_line(log_);
  return true;
}

}  // namespace redflow::server
