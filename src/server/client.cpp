// redflow::Client (include/redflow/client.hpp): one DEALER per call, so a
// call that timed out leaves nothing behind for the next.
#include "redflow/client.hpp"

#include <zmq.hpp>

#include <fstream>

#include "server/server_messages.hpp"

namespace redflow {

const char* to_string(JobState state) {
  switch (state) {
    case JobState::kQueued: return "queued";
    case JobState::kRunning: return "running";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
    case JobState::kCancelled: return "cancelled";
  }
  return "unknown";
}

struct Client::Link {
  zmq::context_t context;
  std::string endpoint;
  double timeout_s;

  Result<server::Reply> call(const server::Request& q, double timeout_s) {
    zmq::socket_t s(context, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.connect(endpoint);
    const auto body = server::encode(q);
    if (!s.send(zmq::buffer(body.data(), body.size()), zmq::send_flags::none)) return Status::IOError("cannot send to the server at " + endpoint);
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
    zmq::message_t m;
    if (!(item.revents & ZMQ_POLLIN) || !s.recv(m, zmq::recv_flags::dontwait))
      return Status::IOError("no answer from the server at " + endpoint + " within " + std::to_string(timeout_s) + " s (is `redflow server` running?)");
    return server::decode_reply(std::span(static_cast<const std::byte*>(m.data()), m.size()));
  }
  Result<JobInfo> one(const server::Request& q, double timeout_s) {
    auto r = call(q, timeout_s);
    if (!r.ok()) return r.status();
    if (r->jobs.size() != 1) return Status::Internal("the server answered with " + std::to_string(r->jobs.size()) + " jobs, not 1");
    return std::move(r->jobs[0]);
  }
};

Result<Client> Client::connect(const ClientOptions& options) {
  auto link = std::make_unique<Link>();
  link->endpoint = options.endpoint;
  link->timeout_s = options.timeout_s;
  if (link->endpoint.empty()) {
    if (options.server_file.empty()) return Status::InvalidArgument("no server given: --server ENDPOINT or --server-file FILE");
    std::ifstream in(options.server_file);
    if (!in) return Status::NotFound("server file '" + options.server_file + "' cannot be read (is `redflow server --server-file` running?)");
    std::getline(in, link->endpoint);
    if (link->endpoint.empty()) return Status::InvalidArgument("server file '" + options.server_file + "' names no endpoint");
  }
  return Client(std::move(link));
}

Client::Client(std::unique_ptr<Link> link) : link_(std::move(link)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Result<std::uint64_t> Client::submit(const std::vector<std::string>& args, const std::string& cwd, const SubmitOptions& options) {
  auto r = link_->call({.kind = server::RequestKind::kSubmit, .args = args, .cwd = cwd, .options = options}, link_->timeout_s);
  if (!r.ok()) return r.status();
  return r->id;
}

Result<JobInfo> Client::status(std::uint64_t id) { return link_->one({.kind = server::RequestKind::kStatus, .id = id}, link_->timeout_s); }
Result<JobInfo> Client::wait(std::uint64_t id, double timeout_s) { return link_->one({.kind = server::RequestKind::kWait, .id = id}, timeout_s); }
Result<JobInfo> Client::cancel(std::uint64_t id) { return link_->one({.kind = server::RequestKind::kCancel, .id = id}, link_->timeout_s); }

Result<std::vector<JobFile>> Client::fetch(std::uint64_t id) {
  auto r = link_->call({.kind = server::RequestKind::kFetch, .id = id}, link_->timeout_s);
  if (!r.ok()) return r.status();
  return std::move(r->files);
}

Result<std::vector<JobInfo>> Client::list() {
  auto r = link_->call({.kind = server::RequestKind::kList}, link_->timeout_s);
  if (!r.ok()) return r.status();
  return std::move(r->jobs);
}

Result<Client::Workers> Client::workers() {
  auto r = link_->call({.kind = server::RequestKind::kWorkers}, link_->timeout_s);
  if (!r.ok()) return r.status();
  return std::move(r->workers);
}

}  // namespace redflow
