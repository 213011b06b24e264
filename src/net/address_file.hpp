// Rendezvous through a file on a shared directory, for batch queues that
// start the same job script several times (PY-PITS, section V.B): the first
// starter becomes the driver and writes where it listens; the others read it
// and join as workers (docs/security.md, examples/cluster/).
//
//   auto claim = claim_address_file(path);       // O_EXCL: exactly one wins
//   if (*claim == Claim::kDriver) { bind ...; publish_address(path, {.endpoint = bound, ...}); ... release_address_file(path); }
//   else { auto rec = wait_for_address(path, 60s); connect(rec->endpoint); }
//
// The file is text, one "field value" per line, written whole: a temporary
// file (O_EXCL) is linked into place to claim and renamed over it to publish,
// so a reader never sees half a file. It names its driver (pid, host, the
// process's start time), so a file left by a dead driver is told from a slow
// one and reported, rather than waited on forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "redflow/status.hpp"

namespace redflow::net {

enum class Claim { kDriver, kWorker };

// What an address file holds. `endpoint` is empty while the driver has
// claimed the file but not yet bound its socket.
struct AddressRecord {
  std::string endpoint{};
  std::string server_public_key{};  // Z85, empty without CURVE
  long pid = 0;
  std::string host{};
  std::uint64_t start_ticks = 0;  // the driver's start time (field 22 of /proc/PID/stat), against pid reuse
};

// Creates `path` naming this process (atomically, O_EXCL semantics): kDriver
// when this call created it, kWorker when it already existed. Does not judge
// an existing file: wait_for_address() does.
Result<Claim> claim_address_file(const std::string& path);

// Replaces the claimed file with the full record (this process's pid, host
// and start time are filled in). Refuses if the file is not this process's claim.
Status publish_address(const std::string& path, AddressRecord record);

// Waits (polling) until the file holds an endpoint, at most `timeout`.
// Named errors: the file never appeared, was claimed but never published,
// is stale (its driver, on this host, is gone), or is torn/foreign (does not
// parse for a whole second).
Result<AddressRecord> wait_for_address(const std::string& path, std::chrono::milliseconds timeout);

// Removes the file if this process wrote it (the driver at its end).
Status release_address_file(const std::string& path);

// The text of a record and back; `source` names the file in errors.
std::string format_address_record(const AddressRecord& record);
Result<AddressRecord> parse_address_record(std::string_view text, const std::string& source);

// Whether the driver a record names is known to be gone: true only when it
// ran on this host and its pid is dead or belongs to a later process.
bool driver_is_gone(const AddressRecord& record);

// This process's record fields: pid, host name, start ticks.
AddressRecord this_process_record();

// This machine's name, as the address file and a worker's HELLO give it.
std::string host_name();

}  // namespace redflow::net
