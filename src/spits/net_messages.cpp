// Encoding and decoding of the SPITS messages (net_messages.hpp), with the
// field codec of src/wire/codec.hpp.
#include "spits/net_messages.hpp"

#include "wire/codec.hpp"

namespace redflow::spits {

namespace {

// A job's args, as HELLO (announce list) and the role's WELCOME both carry them.
void write_args(wire::Writer& w, const std::vector<std::string>& args) {
  w.u32(static_cast<std::uint32_t>(args.size()));
  for (const auto& a : args) w.str(a);
}
std::vector<std::string> read_args(wire::Reader& r) {
  std::vector<std::string> args;
  const std::size_t n = r.count("args", kMaxJobArgs, 4);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) args.push_back(r.str("arg", kMaxNameBytes));
  return args;
}

}  // namespace

void encode(const JobHello& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u16(m.protocol);
  w.u64(m.incarnation);
  w.str(m.job);
  write_args(w, m.args);
  w.u32(m.heartbeat_interval_ms);
  w.u32(m.heartbeat_timeout_ms);
}

void encode(const TaskManagerInfo& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.str(m.name);
  w.str(m.host);
  w.u32(m.pid);
  w.u32(m.workers);
  w.u32(m.capacity);
}

void encode(const JobWelcome& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.str(m.plugin);
  w.str(m.job);
  write_args(w, m.args);
}

void encode_tasks(std::span<const TaskMessage> tasks, std::vector<std::byte>& out) {
  std::size_t bytes = 4;
  for (const auto& t : tasks) bytes += 12 + t.bytes.size();
  out.reserve(out.size() + bytes);
  wire::Writer w(out);
  w.u32(static_cast<std::uint32_t>(tasks.size()));
  for (const auto& t : tasks) {
    w.u64(t.id);
    w.str(t.bytes);
  }
}

void encode_results(std::uint32_t capacity, std::uint64_t ns_per_task, std::span<const ResultMessage> results, std::vector<std::byte>& out) {
  std::size_t bytes = 16;
  for (const auto& r : results) bytes += 13 + r.bytes.size();
  out.reserve(out.size() + bytes);
  wire::Writer w(out);
  w.u32(capacity);
  w.u64(ns_per_task);
  w.u32(static_cast<std::uint32_t>(results.size()));
  for (const auto& r : results) {
    w.u64(r.id);
    w.u8(static_cast<std::uint8_t>(r.outcome));
    w.str(r.bytes);
  }
}

Status decode(std::span<const std::byte> body, JobHello& out) {
  wire::Reader r(body);
  JobHello m;
  m.protocol = r.u16("protocol version");
  m.incarnation = r.u64("incarnation");
  m.job = r.str("job name", kMaxNameBytes);
  m.args = read_args(r);
  m.heartbeat_interval_ms = r.u32("heartbeat interval");
  m.heartbeat_timeout_ms = r.u32("heartbeat timeout");
  r.finish("HELLO");
  if (!r.failed() && m.protocol != kSpitsProtocolVersion)
    r.fail(wire::Error::kWrongVersion, "SPITS protocol " + std::to_string(m.protocol) + ", this build speaks " + std::to_string(kSpitsProtocolVersion));
  if (!r.failed() && (m.heartbeat_interval_ms == 0 || m.heartbeat_timeout_ms < m.heartbeat_interval_ms))
    r.fail(wire::Error::kMalformed, "heartbeat interval " + std::to_string(m.heartbeat_interval_ms) + " ms, timeout " +
                                     std::to_string(m.heartbeat_timeout_ms) + " ms");
  if (r.failed()) return wire::status("spits HELLO", r.error(), r.what());
  out = std::move(m);
  return Status::Ok();
}

Status decode(std::span<const std::byte> body, TaskManagerInfo& out) {
  wire::Reader r(body);
  TaskManagerInfo m;
  m.name = r.str("name", kMaxNameBytes);
  m.host = r.str("host", kMaxNameBytes);
  m.pid = r.u32("pid");
  m.workers = r.u32("workers");
  m.capacity = r.u32("capacity");
  r.finish("WELCOME");
  if (!r.failed() && (m.workers == 0 || m.capacity < m.workers))
    r.fail(wire::Error::kMalformed, std::to_string(m.workers) + " workers, capacity " + std::to_string(m.capacity) + " (need >= 1 and capacity >= workers)");
  if (r.failed()) return wire::status("spits WELCOME", r.error(), r.what());
  out = std::move(m);
  return Status::Ok();
}

Status decode(std::span<const std::byte> body, JobWelcome& out) {
  wire::Reader r(body);
  JobWelcome m;
  m.plugin = r.str("plugin path", kMaxNameBytes);
  m.job = r.str("job name", kMaxNameBytes);
  m.args = read_args(r);
  r.finish("job");
  if (!r.failed() && m.plugin.empty()) r.fail(wire::Error::kMalformed, "an empty plugin path");
  if (r.failed()) return wire::status("spits WELCOME", r.error(), r.what());
  out = std::move(m);
  return Status::Ok();
}

Status decode_tasks(std::span<const std::byte> body, std::vector<TaskMessage>& out) {
  wire::Reader r(body);
  std::vector<TaskMessage> tasks;
  const std::size_t n = r.count("tasks", kMaxBatch, 12);
  tasks.reserve(n);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    TaskMessage& t = tasks.emplace_back();
    t.id = r.u64("task id");
    t.bytes = r.str("task bytes", kMaxItemBytes);
  }
  r.finish("task batch");
  if (r.failed()) return wire::status("spits REQUEST", r.error(), r.what());
  for (auto& t : tasks) out.push_back(std::move(t));
  return Status::Ok();
}

Status decode_results(std::span<const std::byte> body, std::uint32_t& capacity, std::uint64_t& ns_per_task, std::vector<ResultMessage>& out) {
  wire::Reader r(body);
  std::vector<ResultMessage> results;
  const std::uint32_t cap = r.u32("capacity");
  const std::uint64_t ns = r.u64("time per task");
  const std::size_t n = r.count("results", kMaxBatch, 13);
  results.reserve(n);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    ResultMessage& m = results.emplace_back();
    m.id = r.u64("task id");
    const std::uint8_t outcome = r.u8("outcome");
    if (outcome > static_cast<std::uint8_t>(ResultMessage::Outcome::kFailed))
      r.fail(wire::Error::kMalformed, "outcome " + std::to_string(outcome) + " of task " + std::to_string(m.id) + " (a Task Manager sends ok or failed)");
    m.outcome = static_cast<ResultMessage::Outcome>(outcome);
    m.bytes = r.str("result bytes", kMaxItemBytes);
  }
  r.finish("result batch");
  if (!r.failed() && cap == 0) r.fail(wire::Error::kMalformed, "capacity 0");
  if (r.failed()) return wire::status("spits REPLY", r.error(), r.what());
  capacity = cap;
  ns_per_task = ns;
  for (auto& m : results) out.push_back(std::move(m));
  return Status::Ok();
}

}  // namespace redflow::spits
