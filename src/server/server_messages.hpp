// The client <-> server vocabulary of `redflow server` (docs/server.md):
// one request and one reply per ZeroMQ message, each a "RFSV" frame on the
// one field codec (src/wire/codec.hpp). A request that does not decode is
// answered with an error naming what was wrong, never dropped or fatal.
//
//   request: magic u32 "RFSV", version u8, kind u8, then by kind:
//     submit   args (u32 count, strings), cwd (string), workers u32, time limit f64
//     status, wait, cancel, fetch   job id u64
//     list, workers          nothing
//   reply:   magic, version, ok u8; if not ok: status code u8, message;
//            else: id u64, jobs (u32 count, JobInfo each), workers endpoint,
//            workers per job u32, last job's workers, idle workers (u32 count, strings each),
//            allocating (string), allocations (u32 count; id, state strings, workers,
//            joined u32, age f64, why string each),
//            files (u32 count; name string, bytes each)
//
// Plain functions over plain structs; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "redflow/client.hpp"
#include "wire/codec.hpp"

namespace redflow::server {

enum class RequestKind : std::uint8_t { kSubmit = 1, kStatus, kWait, kCancel, kList, kWorkers, kFetch };

struct Request {
  RequestKind kind = RequestKind::kList;
  std::uint64_t id = 0;            // status, wait, cancel, fetch
  std::vector<std::string> args = {};  // submit
  std::string cwd = {};                // submit
  SubmitOptions options = {};          // submit
};

struct Reply {
  Status status = {};              // not ok: the error, and nothing else is sent
  std::uint64_t id = 0;            // submit: the job's id
  std::vector<JobInfo> jobs = {};  // status, wait, cancel: one; list: all
  Client::Workers workers = {};    // workers
  std::vector<JobFile> files = {};  // fetch
};

// What one fetch sends at most: a job's files, in all.
inline constexpr std::size_t kMaxFetchBytes = std::size_t{512} << 20;

std::vector<std::byte> encode(const Request& r);
Result<Request> decode_request(std::span<const std::byte> bytes);
std::vector<std::byte> encode(const Reply& r);
// An error reply decodes to its error ("server: ..."), not to a Reply.
Result<Reply> decode_reply(std::span<const std::byte> bytes);

// Fields shared with the journal's records.
void put_strings(wire::Writer& w, const std::vector<std::string>& list);
std::vector<std::string> get_strings(wire::Reader& r, const char* field);
void put_job(wire::Writer& w, const JobInfo& j);
JobInfo get_job(wire::Reader& r);

}  // namespace redflow::server
