// A network namespace for tests, joined to the root namespace by a veth
// pair with addresses in a private /30 (10.231.x.y): the test can run a
// process "on another machine", cut its link, or slow it with tc netem, and
// everything is removed again in the destructor, also when the test fails.
// Needs root (CAP_NET_ADMIN) and the `ip` command; `skip_reason()` says
// which is missing. With both, a namespace that cannot be made is a failure
// (the test's ns.ok() check), not a skip: CI runs as root.
// Names carry the pid ("rfk<pid>_<n>"), so parallel test processes never
// meet, and a namespace left by a test process that died is removed by the
// next one.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "spawn_process.hpp"

namespace redflow::testing {

class NetNamespace {
 public:
  // Runs a command through the shell; its exit code and output.
  static std::pair<int, std::string> sh(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) return {-1, "popen failed"};
    std::string out;
    char buf[1024];
    while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  // What this machine lacks to make namespaces, or nullopt when it has it all.
  static std::optional<std::string> skip_reason() {
    if (geteuid() != 0) return "network namespaces need root (CAP_NET_ADMIN); this test runs as uid " + std::to_string(geteuid());
    if (!has_net_admin()) return "this root process lacks CAP_NET_ADMIN (a container started without it)";
    if (sh("command -v ip").first != 0) return "the ip command (iproute2) is not installed";
    return std::nullopt;
  }
  // Whether the effective capabilities (/proc/self/status CapEff) hold CAP_NET_ADMIN (bit 12).
  static bool has_net_admin() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 12) & 1;
    return false;
  }

  NetNamespace() {
    remove_orphans();
    static int counter = 0;
    const int n = counter++;
    const std::string tag = std::to_string(getpid()) + "_" + std::to_string(n);
    name_ = "rfk" + tag;
    host_if_ = "rfk" + std::to_string(getpid() % 1000000) + "h" + std::to_string(n % 100);
    ns_if_ = "rfk" + std::to_string(getpid() % 1000000) + "n" + std::to_string(n % 100);
    // A /30 not in use yet: 16384 of them in 10.231.0.0/16, starting from one the pid picks.
    for (int attempt = 0; attempt < 64 && host_address_.empty(); ++attempt) {
      const int index = (static_cast<int>(getpid()) * 7 + n * 131 + attempt) % 16384;
      const std::string base = "10.231." + std::to_string(index / 64) + ".";
      const std::string host = base + std::to_string((index % 64) * 4 + 1), ns = base + std::to_string((index % 64) * 4 + 2);
      if (sh("ip -o addr show | grep -F ' " + host + "/'").first != 0) host_address_ = host, ns_address_ = ns;
    }
    const std::vector<std::string> steps = {
        "ip netns add " + name_,
        "ip link add " + host_if_ + " type veth peer name " + ns_if_,
        "ip link set " + ns_if_ + " netns " + name_,
        "ip addr add " + host_address_ + "/30 dev " + host_if_,
        "ip link set " + host_if_ + " up",
        "ip -n " + name_ + " addr add " + ns_address_ + "/30 dev " + ns_if_,
        "ip -n " + name_ + " link set " + ns_if_ + " up",
        "ip -n " + name_ + " link set lo up",
    };
    if (host_address_.empty()) error_ = "no free /30 in 10.231.0.0/16";
    for (const auto& step : steps) {
      if (!error_.empty()) break;
      if (auto [code, out] = sh(step); code != 0) error_ = step + ": " + out;
    }
  }

  ~NetNamespace() {
    for (pid_t pid : children_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    sh("ip netns del " + name_);  // takes the namespace's end of the pair, and so the pair, with it
    sh("ip link del " + host_if_);
  }
  NetNamespace(const NetNamespace&) = delete;
  NetNamespace& operator=(const NetNamespace&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& name() const { return name_; }
  const std::string& host_address() const { return host_address_; }  // the root namespace's end
  const std::string& ns_address() const { return ns_address_; }      // the namespace's end

  // Cuts or restores the link on the namespace's side (as if its cable were pulled).
  bool set_link_up(bool up) { return sh("ip -n " + name_ + " link set " + ns_if_ + (up ? " up" : " down")).first == 0; }

  // Delays (and optionally rate-limits, e.g. "10mbit") what the root side
  // sends into the namespace. False when tc refuses: tc_error() says why
  // (some kernels, e.g. small VMs, are built without sch_netem).
  bool set_netem(int delay_ms, const std::string& rate = "") {
    std::string cmd = "tc qdisc replace dev " + host_if_ + " root netem delay " + std::to_string(delay_ms) + "ms";
    if (!rate.empty()) cmd += " rate " + rate;
    return tc(cmd);
  }
  // Limits what the root side sends into the namespace to `rate` (e.g.
  // "2mbit") with a token bucket (sch_tbf), for kernels without netem.
  bool set_rate(const std::string& rate) {
    return tc("tc qdisc replace dev " + host_if_ + " root tbf rate " + rate + " burst 16kbit latency 2s");
  }
  bool clear_qdisc() { return tc("tc qdisc del dev " + host_if_ + " root"); }
  const std::string& tc_error() const { return tc_error_; }
  // Whether the last tc command failed because this kernel lacks the
  // queueing discipline (the one reason to skip a test of it, not fail).
  bool qdisc_missing() const { return tc_error_.find("qdisc kind is unknown") != std::string::npos; }

  // Starts `argv` inside the namespace (ip netns exec), output to
  // `output_file`. The destructor kills it if it is still running.
  pid_t spawn(const std::vector<std::string>& argv, const std::string& output_file) {
    std::vector<std::string> all = {"ip", "netns", "exec", name_};
    all.insert(all.end(), argv.begin(), argv.end());
    const int fd = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = spawn_process(std::move(all), {.out_fd = fd, .err_fd = fd, .search_path = true});
    if (fd >= 0) ::close(fd);
    if (pid > 0) children_.push_back(pid);
    return pid;
  }

  // Waits for a child spawn() started: its exit code, or -1 if it has not
  // ended within `limit` (it is killed then).
  int wait(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        forget(pid);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    forget(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  bool tc(const std::string& command) {
    auto [code, out] = sh(command);
    tc_error_ = code == 0 ? "" : command + ": " + out;
    return code == 0;
  }
  void forget(pid_t pid) { std::erase(children_, pid); }
  // Namespaces named after a test process that no longer exists.
  static void remove_orphans() {
    auto [code, out] = sh("ip netns list");
    if (code != 0) return;
    std::size_t pos = 0;
    while ((pos = out.find("rfk", pos)) != std::string::npos) {
      const std::size_t end = out.find_first_of(" \n", pos);
      const std::string ns = out.substr(pos, end - pos);
      pos = end;
      const std::size_t underscore = ns.find('_');
      if (underscore == std::string::npos) continue;
      const long owner = std::strtol(ns.c_str() + 3, nullptr, 10);
      if (owner > 0 && ::kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH) sh("ip netns del " + ns);
    }
  }

  std::string name_, host_if_, ns_if_, host_address_, ns_address_, error_, tc_error_;
  std::vector<pid_t> children_;
};

}  // namespace redflow::testing
