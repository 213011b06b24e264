// LoopbackCapture: what crosses the loopback interface on chosen TCP ports,
// as a man in the middle would see it, for tests that check a link carries
// no plain text between processes whose sockets the test cannot put a relay
// in front of (workers announce their own peer ports).
//
// It reads every IPv4 packet on `lo` from a packet socket (needs
// CAP_NET_RAW: root), keeps the TCP payloads of segments to or from one of
// the given ports, and appends each to its flow's bytes in the order seen.
// Each segment is kept once (loopback shows it twice: going out and coming
// in). Ports are chosen with watch() before the traffic of interest. One
// thread reads; watch(), flows(), drops() and the destructor may be called
// from any other thread.
//
// The socket sees all of lo's traffic (other tests' too), and a reader
// starved on a loaded machine (the sanitizer stages) would let the kernel
// drop packets from a default-sized buffer; it gets 64 MB (root may exceed
// rmem_max), and drops() says how many the kernel dropped all the same, so
// a missing byte is told from a missed packet.
//
// Also here: the TCP ports a process listens on, from /proc.
#pragma once

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace redflow::testing {

class LoopbackCapture {
 public:
  LoopbackCapture() {
    fd_ = ::socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
    if (fd_ < 0) {
      error_ = std::string("packet socket: ") + std::strerror(errno);
      return;
    }
    sockaddr_ll at{};
    at.sll_family = AF_PACKET;
    at.sll_protocol = htons(ETH_P_IP);
    at.sll_ifindex = static_cast<int>(::if_nametoindex("lo"));
    if (at.sll_ifindex == 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
      error_ = std::string("binding the packet socket to lo: ") + std::strerror(errno);
      return;
    }
    const int buffer = 64 << 20;
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);  // without CAP_NET_ADMIN: up to rmem_max
    reader_ = std::thread([this] { read(); });
  }
  LoopbackCapture(const LoopbackCapture&) = delete;
  LoopbackCapture& operator=(const LoopbackCapture&) = delete;
  ~LoopbackCapture() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  // Empty when capturing; else why not (not root, no lo).
  const std::string& error() const { return error_; }

  // Segments to or from `port` are kept from now on.
  void watch(std::uint16_t port) {
    std::lock_guard lock(mutex_);
    ports_.insert(port);
  }

  // The payload bytes seen so far, per flow "FROM_PORT>TO_PORT".
  std::map<std::string, std::string> flows() const {
    std::lock_guard lock(mutex_);
    return flows_;
  }

  // Packets the kernel dropped for want of room in the socket's buffer, so
  // far (any port's: the kernel cannot tell which were watched).
  std::uint64_t drops() {
    tpacket_stats st{};
    socklen_t len = sizeof st;
    if (fd_ >= 0 && ::getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) drops_ += st.tp_drops;  // reading resets them
    return drops_;
  }

 private:
  void read() {
    std::vector<unsigned char> packet(1 << 16);
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      sockaddr_ll from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING) continue;  // each segment once: as it comes in
      keep(packet.data(), static_cast<std::size_t>(n));
    }
  }
  void keep(const unsigned char* ip, std::size_t n) {
    if (n < 20 || (ip[0] >> 4) != 4 || ip[9] != IPPROTO_TCP) return;
    const std::size_t ip_header = (ip[0] & 0x0f) * 4u;
    const std::size_t total = std::min<std::size_t>(n, (std::size_t{ip[2]} << 8) | ip[3]);
    if (total < ip_header + 20) return;
    const unsigned char* tcp = ip + ip_header;
    const std::uint16_t from = static_cast<std::uint16_t>((tcp[0] << 8) | tcp[1]);
    const std::uint16_t to = static_cast<std::uint16_t>((tcp[2] << 8) | tcp[3]);
    const std::size_t tcp_header = (tcp[12] >> 4) * 4u;
    if (total < ip_header + tcp_header) return;
    std::lock_guard lock(mutex_);
    if (!ports_.count(from) && !ports_.count(to)) return;
    flows_[std::to_string(from) + ">" + std::to_string(to)].append(reinterpret_cast<const char*>(tcp + tcp_header), total - ip_header - tcp_header);
  }

  int fd_ = -1;
  std::string error_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> drops_{0};
  mutable std::mutex mutex_;
  std::set<std::uint16_t> ports_;
  std::map<std::string, std::string> flows_;
  std::thread reader_;
};

// The TCP ports process `pid` listens on (IPv4 and IPv6), from its sockets'
// inodes in /proc/PID/fd and the tables in /proc/PID/net.
inline std::vector<std::uint16_t> listening_ports(pid_t pid) {
  namespace fs = std::filesystem;
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator(proc / "fd", ec)) {
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<std::uint16_t> ports;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::ifstream in(proc / table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      ports.push_back(static_cast<std::uint16_t>(std::stoul(local.substr(local.rfind(':') + 1), nullptr, 16)));
    }
  }
  return ports;
}

}  // namespace redflow::testing
