// What the Job Manager and a Task Manager process say to each other over the
// transport of src/net/ (the envelope, its heartbeats and keys): the bodies
// of HELLO, WELCOME, REQUEST and REPLY when the peers are SPITS ones
// (docs/spits.md, "Over the network").
//
// Dial-in (the Task Manager is a role of `redflow worker`, which connects):
//
//   Task Manager -> Job Manager   HELLO    net::HelloMessage offering the task manager role
//   Job Manager -> Task Manager   WELCOME  net::WelcomeMessage whose `service` is a JobWelcome:
//                                          the job's plugin path, name and args
//
// Announce list (the Task Manager listens, the Job Manager connects, as in PY-PITS):
//
//   Job Manager -> Task Manager   HELLO    JobHello: which job, its args, the heartbeat rhythm
//   Task Manager -> Job Manager   WELCOME  TaskManagerInfo: who it is, how many Workers
//                                 REFUSED  why not (it serves another live Job Manager)
//
// Then, either way:
//
//   Job Manager -> Task Manager   REQUEST  a batch of tasks; answered by ACK with the same id
//   Task Manager -> Job Manager   REPLY    a batch of results, its capacity now and its time per task;
//                                          kept until the ACK with the same id comes back
//
// Batches: one message carries as many tasks or results as are ready, so a
// trivial task costs a few bytes on the wire, not a round trip.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "redflow/status.hpp"
#include "spits/task_manager.hpp"

namespace redflow::spits {

// 2: a result batch says the Task Manager's time per task.
inline constexpr std::uint16_t kSpitsProtocolVersion = 2;
inline constexpr std::size_t kMaxBatch = std::size_t{1} << 24;        // tasks or results in one message
inline constexpr std::size_t kMaxJobArgs = 4096;
inline constexpr std::size_t kMaxNameBytes = std::size_t{1} << 12;
inline constexpr std::size_t kMaxItemBytes = (std::size_t{1} << 31) - 1;  // one task's or result's bytes
// A Task Manager across the network takes twice what its Workers need, so
// the round trip to the Job Manager is hidden behind work already there.
inline constexpr std::size_t kNetworkMargin = 2;

struct JobHello {
  std::uint16_t protocol = kSpitsProtocolVersion;
  // A random number per Job Manager process: a HELLO with the same one is the
  // same Job Manager coming back after a partition (the Task Manager re-sends
  // the results it kept); another one is a new Job Manager (a restart).
  std::uint64_t incarnation = 0;
  std::string job;  // the job's name, checked against the Task Manager's plugin
  std::vector<std::string> args;
  std::uint32_t heartbeat_interval_ms = 250;
  std::uint32_t heartbeat_timeout_ms = 2000;
  friend bool operator==(const JobHello&, const JobHello&) = default;
};

// What a dial-in Task Manager needs to start: the job to load and set up.
// `plugin` is a path on the worker's machine (a shared file system).
struct JobWelcome {
  std::string plugin;
  std::string job;  // the job's name, checked against the plugin's
  std::vector<std::string> args;
  friend bool operator==(const JobWelcome&, const JobWelcome&) = default;
};

struct TaskManagerInfo {
  std::string name;
  std::string host;
  std::uint32_t pid = 0;
  std::uint32_t workers = 1;
  std::uint32_t capacity = 1;  // tasks it takes at once, queued and running
  friend bool operator==(const TaskManagerInfo&, const TaskManagerInfo&) = default;
};

void encode(const JobHello& m, std::vector<std::byte>& out);
void encode(const TaskManagerInfo& m, std::vector<std::byte>& out);
void encode(const JobWelcome& m, std::vector<std::byte>& out);
void encode_tasks(std::span<const TaskMessage> tasks, std::vector<std::byte>& out);
// A result batch: the Task Manager's capacity (tasks it takes at once) and
// its Workers' mean time per task so far in nanoseconds (0: none measured
// yet), then the results.
void encode_results(std::uint32_t capacity, std::uint64_t ns_per_task, std::span<const ResultMessage> results, std::vector<std::byte>& out);

// Each refuses anything malformed with a named error ("spits HELLO: <name>: ...")
// and leaves nothing half-decoded in `out` on failure.
Status decode(std::span<const std::byte> body, JobHello& out);
Status decode(std::span<const std::byte> body, TaskManagerInfo& out);
Status decode(std::span<const std::byte> body, JobWelcome& out);
Status decode_tasks(std::span<const std::byte> body, std::vector<TaskMessage>& out);
Status decode_results(std::span<const std::byte> body, std::uint32_t& capacity, std::uint64_t& ns_per_task, std::vector<ResultMessage>& out);

}  // namespace redflow::spits
