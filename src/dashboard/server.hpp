// DashboardServer: a run's live dashboard over HTTP, inside the run's process
// (cpp-httplib, Debian's libcpp-httplib). It serves the pages embedded at
// build time (web/, web_files.hpp) and the Board's snapshot:
//   /                overview page        /tiles        tiles page        /streams   streams page
//   /jobs            jobs page (`redflow server`)
//   /api/snapshot    the snapshot, JSON   /api/events   server-sent events, one snapshot each
//   /api/gantt       the live Gantt chart, SVG (live_gantt.hpp)
// A publisher thread copies the Board's snapshot and builds its JSON at a
// bounded rate (ServerOptions::period_s, 5 per second by default), whether or
// not anyone watches; requests only read the last JSON built. So the run pays
// the same with a browser connected as without one.
//
// Bound to 127.0.0.1 (or localhost, ::1) it answers anyone on the machine.
// Bound to any other address, 127.0.0.2 included, it answers only requests
// that carry its token (?token=T or the header "Authorization: token T"),
// and 403 to the others; the token is random, made at start, and printed
// in url().
//
// Thread-safe: start() and stop() from one thread; the accessors from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "dashboard/board.hpp"
#include "redflow/status.hpp"

namespace httplib {
class Server;
}

namespace redflow::dashboard {

struct ServerOptions {
  std::string address = "127.0.0.1:0";  // HOST[:PORT]; port 0: any free port
  double period_s = 0.2;                // between two snapshots published
};

// HOST and PORT of "HOST[:PORT]" (port 0 when absent), or an error naming
// the bad part.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> parse_address(const std::string& address);
// Whether `host` is the loopback address the token is not needed on.
bool is_loopback_host(const std::string& host);
// `page` with `snapshot_json` in a <script id="snapshot" type="application/json">
// before its script (the page renders it at once); `page` as it is when
// there is no snapshot yet.
std::string page_with_snapshot(std::string_view page, std::string_view snapshot_json);
// `page` with the Gantt chart in place of its "<!--gantt-->" placeholder (and
// the placeholder's text up to the element's end), and the chart's version and
// execution as data-version and data-execution on the element; `page` as it
// is when there is no chart yet.
std::string page_with_gantt(std::string page, const GanttView& gantt);

class DashboardServer {
 public:
  // Pages following the events at once. Each open event stream holds one of
  // the server's threads, so beyond this a page is told 503 (it then polls
  // /api/snapshot) and the server keeps threads to answer every other request.
  static constexpr int kMaxStreams = 32;

  // Binds, starts serving and publishing. The board must outlive the server.
  static Result<std::unique_ptr<DashboardServer>> start(const Board& board, const ServerOptions& options);
  ~DashboardServer();  // stop()
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // Publishes a last snapshot, ends the event streams and stops serving.
  void stop();

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // "" on loopback.
  const std::string& token() const { return token_; }
  // http://HOST:PORT/ and, beyond loopback, ?token=T.
  std::string url() const;
  // Snapshots published so far.
  std::uint64_t published() const;
  // The last snapshot's JSON.
  std::string latest_json() const;
  // Event streams (/api/events) open now, and opened since the start.
  int open_streams() const { return open_streams_.load(std::memory_order_acquire); }
  std::uint64_t streams_opened() const { return streams_opened_.load(std::memory_order_acquire); }
  // Publishes the board's snapshot now, not at the next period: the run's
  // end reaches the pages and /api/snapshot at once.
  void publish_now() { publish(); }

 private:
  DashboardServer(const Board& board, const ServerOptions& options);
  void publish();
  void publisher_main();
  void add_routes();
  // A request may carry the token as ?token=, as "Authorization: token T",
  // or as the cookie a page opened with ?token= was given, so that the
  // page's own scripts and style sheets load without the token in their URLs.
  bool allowed(const std::string& query_token, const std::string& authorization, const std::string& cookies) const;

  const Board& board_;
  ServerOptions options_;
  std::string host_;
  int port_ = 0;
  std::string token_;
  std::unique_ptr<httplib::Server> http_;
  std::thread http_thread_;
  std::atomic<bool> listen_ended_{false};  // http_thread_'s listen loop returned (or never started)
  std::thread publisher_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a snapshot was published, or stop() began
  std::string latest_;
  std::uint64_t sequence_ = 0;
  bool stopping_ = false;
  bool stopped_ = false;
  std::atomic<int> open_streams_{0};
  std::atomic<std::uint64_t> streams_opened_{0};
};

}  // namespace redflow::dashboard
