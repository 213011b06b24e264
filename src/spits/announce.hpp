// The announce list (PY-PITS, section IV.A): a directory, usually on a shared
// file system, where each Task Manager that listens adds a file saying where
// it listens; the Job Manager reads the directory while it runs and connects
// to every Task Manager it finds, so Task Managers join at any time.
//
//   DIR/<name>.tm   one per Task Manager, the text of a net::AddressRecord
//                   (endpoint, its CURVE public key if any, pid, host)
//
// A file is written whole (a temporary renamed into place), so a reader
// never sees half of one; the Task Manager removes its file when it ends.
#pragma once

#include <string>
#include <vector>

#include "net/address_file.hpp"
#include "redflow/status.hpp"

namespace redflow::spits {

struct Announcement {
  std::string name;  // the file's name without ".tm"
  std::string path;
  net::AddressRecord record;
};

// Adds this process as Task Manager `name` listening at `endpoint`. Creates
// DIR if missing. A name already announced by a live process is refused.
Status announce(const std::string& dir, const std::string& name, const std::string& endpoint, const std::string& public_key);

// Removes the entry if this process wrote it.
void withdraw(const std::string& dir, const std::string& name);

// Every complete entry in DIR, skipping temporaries, files that do not parse
// yet, and entries whose Task Manager ran on this host and is gone. A
// missing DIR is empty (the Job Manager may start first).
std::vector<Announcement> read_announcements(const std::string& dir);

// "DIR/NAME.tm".
std::string announcement_path(const std::string& dir, const std::string& name);

}  // namespace redflow::spits
