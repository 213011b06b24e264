// A small HTTP client over cpp-httplib for what watches a dashboard from
// outside: the tests and bench/dashboard_overhead. It hides httplib's types
// so that its users compile without the library's headers and flags.
//
//   auto r = dashboard::http_get("127.0.0.1", port, "/api/snapshot");
//   if (r.ok() && r->status == 200) use(r->body);
//
// Thread-safe: each call opens its own connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "redflow/status.hpp"

namespace redflow::dashboard {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  std::string gantt_version;  // the X-Gantt-Version header of /api/gantt; "" without one
};

// GET `path` (with its query) from HOST:PORT; `authorization`, when not
// empty, is sent as the Authorization header. An error only when no HTTP
// answer came (refused, timed out after `timeout_s`).
Result<HttpReply> http_get(const std::string& host, int port, const std::string& path, const std::string& authorization = "",
                           double timeout_s = 10);

// Reads server-sent events from GET `path` until `count` events arrived,
// `stop` became true, or `timeout_s` passed; returns each event's data.
Result<std::vector<std::string>> read_events(const std::string& host, int port, const std::string& path, std::size_t count,
                                             double timeout_s = 10, const std::atomic<bool>* stop = nullptr);

}  // namespace redflow::dashboard
