// The dashboard's pages, scripts and styles (src/dashboard/web/), compiled
// into the program at build time (cmake/dashboard.cmake writes the table),
// so a dashboard fetches nothing from anywhere at run time.
// Thread-safe: constant data.
#pragma once

#include <span>
#include <string_view>

namespace redflow::dashboard {

struct WebFile {
  std::string_view name;          // its file name under web/, e.g. "overview.html"
  std::string_view content_type;  // from its extension
  std::string_view body;
};

std::span<const WebFile> web_files();
// The file named `name`, or null.
const WebFile* find_web_file(std::string_view name);

}  // namespace redflow::dashboard
