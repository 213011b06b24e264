// The client <-> server frames (server_messages.hpp).
#include "server/server_messages.hpp"

namespace redflow::server {

namespace {

constexpr std::uint32_t kServerMagic = 0x56534652;  // "RFSV"
constexpr std::uint8_t kServerVersion = 4;
constexpr std::size_t kServerMaxString = 1 << 24;   // a report's JSON can be long
constexpr std::size_t kServerMaxList = 1 << 20;
constexpr const char* kServerFormat = "server request";

void put_header(wire::Writer& w) {
  w.u32(kServerMagic);
  w.u8(kServerVersion);
}

void get_header(wire::Reader& r) {
  const std::uint32_t magic = r.u32("magic");
  if (!r.failed() && magic != kServerMagic) r.fail(wire::Error::kBadMagic, "not a redflow server message");
  const std::uint8_t version = r.u8("version");
  if (!r.failed() && version != kServerVersion)
    r.fail(wire::Error::kWrongVersion, "version " + std::to_string(version) + ", this build speaks " + std::to_string(kServerVersion));
}

// The error a reply carries, of the kind the server gave it.
Status remote_status(std::uint8_t code, std::string message) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kInvalidArgument: return Status::InvalidArgument(std::move(message));
    case C::kNotFound: return Status::NotFound(std::move(message));
    case C::kIOError: return Status::IOError(std::move(message));
    case C::kResourceExhausted: return Status::ResourceExhausted(std::move(message));
    default: return Status::Internal(std::move(message));
  }
}

}  // namespace

void put_strings(wire::Writer& w, const std::vector<std::string>& list) {
  w.u32(static_cast<std::uint32_t>(list.size()));
  for (const auto& s : list) w.str(s);
}

std::vector<std::string> get_strings(wire::Reader& r, const char* field) {
  std::vector<std::string> out(r.count(field, kServerMaxList, 4));
  for (auto& s : out) s = r.str(field, kServerMaxString);
  return out;
}

void put_job(wire::Writer& w, const JobInfo& j) {
  w.u64(j.id);
  w.u8(static_cast<std::uint8_t>(j.state));
  put_strings(w, j.args);
  w.str(j.cwd);
  w.u32(static_cast<std::uint32_t>(j.exit_status));
  w.u32(j.starts);
  w.str(j.message);
  w.str(j.report_json);
  put_strings(w, j.workers);
  w.u32(j.workers_asked);
  w.f64(j.time_limit_s);
}

JobInfo get_job(wire::Reader& r) {
  JobInfo j;
  j.id = r.u64("job id");
  const std::uint8_t state = r.u8("job state");
  if (!r.failed() && state > static_cast<std::uint8_t>(JobState::kCancelled))
    r.fail(wire::Error::kMalformed, "job state " + std::to_string(state));
  j.state = static_cast<JobState>(state);
  j.args = get_strings(r, "job args");
  j.cwd = r.str("job cwd", kServerMaxString);
  j.exit_status = static_cast<int>(r.u32("exit status"));
  j.starts = r.u32("starts");
  j.message = r.str("message", kServerMaxString);
  j.report_json = r.str("report", kServerMaxString);
  j.workers = get_strings(r, "job workers");
  j.workers_asked = r.u32("workers asked");
  j.time_limit_s = r.f64("time limit");
  return j;
}

std::vector<std::byte> encode(const Request& q) {
  std::vector<std::byte> out;
  wire::Writer w(out);
  put_header(w);
  w.u8(static_cast<std::uint8_t>(q.kind));
  switch (q.kind) {
    case RequestKind::kSubmit:
      put_strings(w, q.args);
      w.str(q.cwd);
      w.u32(q.options.workers);
      w.f64(q.options.time_limit_s);
      break;
    case RequestKind::kStatus:
    case RequestKind::kWait:
    case RequestKind::kCancel:
    case RequestKind::kFetch:
      w.u64(q.id);
      break;
    case RequestKind::kList:
    case RequestKind::kWorkers:
      break;
  }
  return out;
}

Result<Request> decode_request(std::span<const std::byte> bytes) {
  wire::Reader r(bytes, "request");
  get_header(r);
  Request q;
  const std::uint8_t kind = r.u8("kind");
  if (!r.failed() && (kind < static_cast<std::uint8_t>(RequestKind::kSubmit) || kind > static_cast<std::uint8_t>(RequestKind::kFetch)))
    r.fail(wire::Error::kUnknownKind, "request kind " + std::to_string(kind));
  q.kind = static_cast<RequestKind>(kind);
  if (!r.failed()) {
    switch (q.kind) {
      case RequestKind::kSubmit:
        q.args = get_strings(r, "args");
        q.cwd = r.str("cwd", kServerMaxString);
        q.options.workers = r.u32("workers");
        q.options.time_limit_s = r.f64("time limit");
        if (!r.failed() && q.args.empty()) r.fail(wire::Error::kMalformed, "a submit without the command's words");
        if (!r.failed() && !(q.options.time_limit_s >= 0 && q.options.time_limit_s < 1e9))
          r.fail(wire::Error::kMalformed, "time limit " + std::to_string(q.options.time_limit_s) + " s");
        break;
      case RequestKind::kStatus:
      case RequestKind::kWait:
      case RequestKind::kCancel:
      case RequestKind::kFetch:
        q.id = r.u64("job id");
        break;
      case RequestKind::kList:
      case RequestKind::kWorkers:
        break;
    }
  }
  r.finish("the request");
  if (r.failed()) return wire::status(kServerFormat, r.error(), r.what());
  return q;
}

std::vector<std::byte> encode(const Reply& p) {
  std::vector<std::byte> out;
  wire::Writer w(out);
  put_header(w);
  w.boolean(p.status.ok());
  if (!p.status.ok()) {
    w.u8(static_cast<std::uint8_t>(p.status.code()));
    w.str(p.status.message());
    return out;
  }
  w.u64(p.id);
  w.u32(static_cast<std::uint32_t>(p.jobs.size()));
  for (const auto& j : p.jobs) put_job(w, j);
  w.str(p.workers.endpoint);
  w.u32(p.workers.per_job);
  put_strings(w, p.workers.last);
  put_strings(w, p.workers.idle);
  w.str(p.workers.allocating);
  w.u32(static_cast<std::uint32_t>(p.workers.allocations.size()));
  for (const auto& a : p.workers.allocations) {
    w.str(a.id);
    w.str(a.state);
    w.u32(a.workers);
    w.u32(a.joined);
    w.f64(a.age_s);
    w.str(a.why);
  }
  w.u32(static_cast<std::uint32_t>(p.files.size()));
  for (const auto& f : p.files) {
    w.str(f.name);
    w.bytes(f.bytes);
  }
  return out;
}

Result<Reply> decode_reply(std::span<const std::byte> bytes) {
  wire::Reader r(bytes, "reply");
  get_header(r);
  Reply p;
  const bool ok = r.boolean("ok");
  if (!r.failed() && !ok) {
    const std::uint8_t code = r.u8("status code");
    std::string message = r.str("message", kServerMaxString);
    r.finish("the reply");
    if (r.failed()) return wire::status("server reply", r.error(), r.what());
    return remote_status(code, "server: " + message);
  }
  p.id = r.u64("job id");
  const std::size_t n = r.count("jobs", kServerMaxList, 8);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) p.jobs.push_back(get_job(r));
  p.workers.endpoint = r.str("workers endpoint", kServerMaxString);
  p.workers.per_job = r.u32("workers per job");
  p.workers.last = get_strings(r, "worker names");
  p.workers.idle = get_strings(r, "idle workers");
  p.workers.allocating = r.str("allocating", kServerMaxString);
  const std::size_t allocations = r.count("allocations", kServerMaxList, 4 * 4 + 8);
  for (std::size_t i = 0; i < allocations && !r.failed(); ++i) {
    Client::Allocation a;
    a.id = r.str("allocation id", kServerMaxString);
    a.state = r.str("allocation state", kServerMaxString);
    a.workers = r.u32("allocation workers");
    a.joined = r.u32("allocation joined");
    a.age_s = r.f64("allocation age");
    a.why = r.str("allocation why", kServerMaxString);
    p.workers.allocations.push_back(std::move(a));
  }
  const std::size_t files = r.count("files", kServerMaxList, 8);
  for (std::size_t i = 0; i < files && !r.failed(); ++i) {
    JobFile f;
    f.name = r.str("file name", kServerMaxString);
    const auto bytes = r.bytes("file bytes", kMaxFetchBytes);
    f.bytes.assign(bytes.begin(), bytes.end());
    p.files.push_back(std::move(f));
  }
  r.finish("the reply");
  if (r.failed()) return wire::status("server reply", r.error(), r.what());
  return p;
}

}  // namespace redflow::server
