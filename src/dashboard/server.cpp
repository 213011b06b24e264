// DashboardServer (server.hpp): routes, token check, publisher.
#include "dashboard/server.hpp"

#include <httplib.h>

#include <charconv>
#include <initializer_list>
#include <string_view>
#include <chrono>
#include <random>

#include "dashboard/on_demand_threads.hpp"
#include "dashboard/web_files.hpp"

namespace redflow::dashboard {

namespace {

// 128 random bits as hex, from the system's entropy source.
std::string make_token() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t w = rd();
    for (int b = 0; b < 8; ++b) t += kHex[(w >> (4 * b)) & 0xF];
  }
  return t;
}

// The parts one after the other: messages are built with +=, not long
// operator+ chains (GCC 12 at -O3 reports false -Warray-bounds on those).
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s += p;
  return s;
}

Status bad_address(const std::string& address, const std::string& why) {
  std::string m = "--dashboard '";
  m += address;
  m += "': ";
  m += why;
  m += " (expected HOST[:PORT], e.g. 127.0.0.1:8080)";
  return Status::InvalidArgument(std::move(m));
}

// Compares without stopping at the first difference, so the time taken
// does not tell how much of a guess was right.
bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Result<HostPort> parse_address(const std::string& address) {
  if (address.empty()) return bad_address(address, "empty address");
  HostPort hp;
  const auto colon = address.rfind(':');
  hp.host = address.substr(0, colon);
  if (hp.host.empty()) return bad_address(address, "no host");
  if (hp.host.find_first_of(" /[]") != std::string::npos) return bad_address(address, joined({"host '", hp.host, "' is not a host name or IPv4 address"}));
  if (colon != std::string::npos) {
    const std::string port = address.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || hp.port < 0 || hp.port > 65535)
      return bad_address(address, joined({"port '", port, "' is not a number in 0..65535"}));
  }
  return hp;
}

bool is_loopback_host(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

std::string page_with_gantt(std::string page, const GanttView& gantt) {
  static constexpr std::string_view kHere = "<!--gantt-->";
  const std::size_t at = page.find(kHere);
  if (gantt.svg == nullptr || at == std::string::npos) return page;
  // The placeholder's text after it, up to the element's end, goes.
  const std::size_t end = page.find("</div>", at);
  page.replace(at, end == std::string::npos ? kHere.size() : end - at, *gantt.svg);
  // The chart's version (the page asks only for newer ones) and execution, on the element that holds it.
  static constexpr std::string_view kElement = "id=\"gantt\"";
  if (const std::size_t e = page.rfind(kElement, at); e != std::string::npos)
    page.insert(e + kElement.size(), " data-version=\"" + std::to_string(gantt.version) + "\" data-execution=\"" +
                                         std::to_string(gantt.execution) + "\"");
  return page;
}

std::string page_with_snapshot(std::string_view page, std::string_view snapshot_json) {
  if (snapshot_json.empty()) return std::string(page);
  static constexpr std::string_view kScript = "<script src=\"/static/dashboard.js\">";
  std::size_t at = page.find(kScript);
  if (at == std::string_view::npos) at = page.rfind("</body>");
  if (at == std::string_view::npos) at = page.size();
  std::string out(page.substr(0, at));
  out += "<script id=\"snapshot\" type=\"application/json\">";
  // '<' only occurs inside JSON strings, where \u003c means the same: no
  // text of the run (a failure message, a name) can end the script early.
  for (char c : snapshot_json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  out += "</script>\n";
  out += page.substr(at);
  return out;
}

DashboardServer::DashboardServer(const Board& board, const ServerOptions& options)
    : board_(board), options_(options), http_(std::make_unique<httplib::Server>()) {}

Result<std::unique_ptr<DashboardServer>> DashboardServer::start(const Board& board, const ServerOptions& options) {
  auto hp = parse_address(options.address);
  if (!hp.ok()) return hp.status();
  if (!(options.period_s > 0) || options.period_s > 60)
    return Status::InvalidArgument(joined({"dashboard period ", std::to_string(options.period_s), " s: expected more than 0 and at most 60"}));
  std::unique_ptr<DashboardServer> s(new DashboardServer(board, options));
  s->host_ = hp->host;
  if (!is_loopback_host(s->host_)) s->token_ = make_token();
  s->add_routes();
  if (hp->port == 0) {
    s->port_ = s->http_->bind_to_any_port(s->host_);
  } else {
    s->port_ = s->http_->bind_to_port(s->host_, hp->port) ? hp->port : -1;
  }
  if (s->port_ < 0)
    return Status::IOError(joined({"--dashboard ", options.address, ": cannot listen there (address in use, or not an address of this machine)"}));
  s->publish();  // the first requests find a snapshot
  s->publisher_ = std::thread([p = s.get()] { p->publisher_main(); });
  s->http_thread_ = std::thread([p = s.get()] {
    p->http_->listen_after_bind();
    p->listen_ended_.store(true);
  });
  return s;
}

DashboardServer::~DashboardServer() { stop(); }

void DashboardServer::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  publish();  // the run's final state reaches the open pages
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (publisher_.joinable()) publisher_.join();
  // Every open event stream writes the state published above and ends
  // itself. httplib's stop() would cut a stream whose first write has not
  // happened yet (a page that connected just before), and that page would
  // never see the run's end; a page that stopped reading ends its stream
  // with a failed write, so the wait is bounded.
  const auto streams_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (open_streams_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < streams_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // httplib's stop() does nothing until the listen loop has begun, which
  // then runs on for ever: a run that fails at once (a bad file for `view`)
  // stopped before it began and never ended. Wait for the loop to begin (or
  // to have ended by itself), then stop it.
  while (!http_->is_running() && !listen_ended_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  http_->stop();
  if (http_thread_.joinable()) http_thread_.join();
}

std::string DashboardServer::url() const {
  std::string u = "http://";
  u += host_;
  u += ':';
  u += std::to_string(port_);
  u += '/';
  if (!token_.empty()) {
    u += "?token=";
    u += token_;
  }
  return u;
}

std::uint64_t DashboardServer::published() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sequence_;
}

std::string DashboardServer::latest_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

void DashboardServer::publish() {
  std::string json = to_json(board_.snapshot());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(json);
    ++sequence_;
  }
  changed_.notify_all();
}

void DashboardServer::publisher_main() {
  const auto period = std::chrono::duration<double>(options_.period_s);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!changed_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();
    publish();
    lock.lock();
  }
}

bool DashboardServer::allowed(const std::string& query_token, const std::string& authorization, const std::string& cookies) const {
  if (token_.empty()) return true;
  if (same_token(query_token, token_)) return true;
  static constexpr std::string_view kScheme = "token ";
  if (authorization.size() > kScheme.size() && authorization.compare(0, kScheme.size(), kScheme) == 0 &&
      same_token(authorization.substr(kScheme.size()), token_))
    return true;
  // "Cookie: a=1; redflow_dashboard_token=T; b=2"
  static constexpr std::string_view kCookie = "redflow_dashboard_token=";
  for (std::size_t at = cookies.find(kCookie); at != std::string::npos; at = cookies.find(kCookie, at + 1)) {
    if (at != 0 && cookies[at - 1] != ' ' && cookies[at - 1] != ';') continue;
    const std::size_t from = at + kCookie.size();
    const std::size_t end = cookies.find(';', from);
    if (same_token(cookies.substr(from, end == std::string::npos ? std::string::npos : end - from), token_)) return true;
  }
  return false;
}

void DashboardServer::add_routes() {
  // An idle keep-alive connection holds a server thread this long: stop() waits for it.
  http_->set_keep_alive_timeout(1);
  // Threads for the event streams and, beside them, for pages and
  // snapshots, started as connections come (none for a dashboard nobody opens).
  http_->new_task_queue = [] { return new OnDemandThreads(kMaxStreams + 8); };
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (allowed(req.get_param_value("token"), req.get_header_value("Authorization"), req.get_header_value("Cookie"))) {
      // A page opened with its token hands it on to the files it loads.
      if (!token_.empty() && req.has_param("token")) {
        std::string cookie = "redflow_dashboard_token=";
        cookie += token_;
        cookie += "; Path=/; HttpOnly; SameSite=Strict";
        res.set_header("Set-Cookie", cookie);
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = 403;
    res.set_content("403 Forbidden: this dashboard listens beyond loopback and needs the token printed at its start "
                    "(open the URL it printed, with ?token=...)\n",
                    "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  auto serve_file = [](std::string_view name) {
    return [name](const httplib::Request&, httplib::Response& res) {
      const WebFile* f = find_web_file(name);
      res.set_content(f->body.data(), f->body.size(), std::string(f->content_type));
    };
  };
  // A page carries the latest snapshot in itself: it shows the run at its
  // first paint, without waiting for a request of its own (which a slow
  // machine or a browser that renders once, such as a headless one dumping
  // the DOM, may never wait for).
  auto serve_page = [this](std::string_view name) {
    return [this, name](const httplib::Request&, httplib::Response& res) {
      const WebFile* f = find_web_file(name);
      res.set_header("Cache-Control", "no-store");
      res.set_content(page_with_snapshot(f->body, latest_json()), std::string(f->content_type));
    };
  };
  http_->Get("/", serve_page("overview.html"));
  http_->Get("/streams", serve_page("streams.html"));
  http_->Get("/jobs", serve_page("jobs.html"));
  // The tiles page carries the latest Gantt chart too, for the same reason,
  // and opening it is asking for the chart.
  http_->Get("/tiles", [this](const httplib::Request&, httplib::Response& res) {
    board_.gantt_watched();
    const WebFile* f = find_web_file("tiles.html");
    res.set_header("Cache-Control", "no-store");
    res.set_content(page_with_gantt(page_with_snapshot(f->body, latest_json()), board_.gantt()), std::string(f->content_type));
  });
  for (const WebFile& f : web_files()) {
    std::string path = "/static/";
    path += f.name;
    http_->Get(path, serve_file(f.name));
  }
  http_->Get("/api/snapshot", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(latest_json(), "application/json");
  });
  // The live Gantt chart (live_gantt.hpp), SVG. A page asks for it every
  // second or two with ?since=VERSION, the version it shows: 204 when there
  // is no newer one. Asking is what makes the run trace executions for it.
  http_->Get("/api/gantt", [this](const httplib::Request& req, httplib::Response& res) {
    board_.gantt_watched();
    res.set_header("Cache-Control", "no-store");
    const GanttView g = board_.gantt();
    res.set_header("X-Gantt-Version", std::to_string(g.version));
    res.set_header("X-Gantt-Execution", std::to_string(g.execution));
    if (g.svg == nullptr || req.get_param_value("since") == std::to_string(g.version)) {
      res.status = 204;
      return;
    }
    res.set_content(*g.svg, "image/svg+xml");
  });
  http_->Get("/api/events", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    if (open_streams_.fetch_add(1, std::memory_order_acq_rel) >= kMaxStreams) {
      open_streams_.fetch_sub(1, std::memory_order_acq_rel);
      res.status = 503;
      res.set_content("503: " + std::to_string(kMaxStreams) + " pages already follow this dashboard's events; this one polls /api/snapshot\n",
                      "text/plain");
      return;
    }
    auto seen = std::make_shared<std::uint64_t>(0);
    streams_opened_.fetch_add(1, std::memory_order_acq_rel);
    // Not chunked: the stream ends with its connection. httplib's chunked
    // writer ends a stream with a string it makes once in a function-local
    // static; Debian's library is not built with TSan, which then cannot see
    // the initialisation's guard and reports every later stream's end as a
    // race. The event stream format needs no chunks.
    res.set_header("Connection", "close");
    res.set_content_provider("text/event-stream", [this, seen](std::size_t, httplib::DataSink& sink) {
      std::string event;
      bool end = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // A comment line every second when nothing changed: a closed page is noticed by the failed write.
        changed_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_ || sequence_ != *seen; });
        if (sequence_ != *seen) {
          *seen = sequence_;
          event = "data: ";
          event += latest_;
          event += "\n\n";
        } else if (!stopping_) {
          event = ": idle\n\n";
        }
        end = stopping_;
      }
      if (!event.empty() && !sink.write(event.data(), event.size())) return false;
      if (end) sink.done();
      return true;
    }, [this](bool) { open_streams_.fetch_sub(1, std::memory_order_acq_rel); });
  });
}

}  // namespace redflow::dashboard
