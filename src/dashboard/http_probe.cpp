// http_get and read_events (http_probe.hpp).
#include "dashboard/http_probe.hpp"

#include <httplib.h>

#include <chrono>

namespace redflow::dashboard {

namespace {

void set_timeouts(httplib::Client& c, double timeout_s) {
  const auto t = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(timeout_s));
  c.set_connection_timeout(t);
  c.set_read_timeout(t);
  c.set_write_timeout(t);
}

Status no_answer(const std::string& host, int port, const std::string& path, httplib::Error e) {
  std::string m = "GET http://";
  m += host;
  m += ':';
  m += std::to_string(port);
  m += path;
  m += ": ";
  m += httplib::to_string(e);
  return Status::IOError(std::move(m));
}

}  // namespace

Result<HttpReply> http_get(const std::string& host, int port, const std::string& path, const std::string& authorization, double timeout_s) {
  httplib::Client c(host, port);
  set_timeouts(c, timeout_s);
  httplib::Headers headers;
  if (!authorization.empty()) headers.emplace("Authorization", authorization);
  auto res = c.Get(path, headers);
  if (!res) return no_answer(host, port, path, res.error());
  return HttpReply{res->status, res->get_header_value("Content-Type"), res->body, res->get_header_value("X-Gantt-Version")};
}

Result<std::vector<std::string>> read_events(const std::string& host, int port, const std::string& path, std::size_t count,
                                             double timeout_s, const std::atomic<bool>* stop) {
  httplib::Client c(host, port);
  set_timeouts(c, timeout_s);
  std::vector<std::string> events;
  std::string pending;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto res = c.Get(path, [&](const char* data, std::size_t n) {
    pending.append(data, n);
    for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string block = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (block.rfind("data: ", 0) == 0) events.push_back(block.substr(6));
    }
    return events.size() < count && (stop == nullptr || !stop->load()) && std::chrono::steady_clock::now() < deadline;
  });
  // Ending the stream from the receiver reports a canceled request: the events read are the answer.
  if (!res && res.error() != httplib::Error::Canceled) return no_answer(host, port, path, res.error());
  return events;
}

}  // namespace redflow::dashboard
