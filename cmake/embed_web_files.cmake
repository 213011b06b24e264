# Writes OUT, a C++ file holding every file of FILES (a ;-list) as bytes, and
# redflow::dashboard::web_files() over them (src/dashboard/web_files.hpp).
# Run at build time by cmake/dashboard.cmake whenever a file under
# src/dashboard/web/ changes: the pages live in the program, nothing is
# fetched at run time.
set(arrays "")
set(entries "")
set(i 0)
foreach(f IN LISTS FILES)
  get_filename_component(name "${f}" NAME)
  get_filename_component(ext "${f}" LAST_EXT)
  if(ext STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(ext STREQUAL ".js")
    set(type "text/javascript; charset=utf-8")
  elseif(ext STREQUAL ".css")
    set(type "text/css; charset=utf-8")
  elseif(ext STREQUAL ".svg")
    set(type "image/svg+xml")
  else()
    set(type "application/octet-stream")
  endif()
  file(READ "${f}" hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND arrays "const unsigned char kFile${i}[] = {${bytes}0x00};\n")
  string(APPEND entries "    {\"${name}\", \"${type}\", {reinterpret_cast<const char*>(kFile${i}), ${size}}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE "${OUT}.tmp" "// Written by cmake/embed_web_files.cmake from src/dashboard/web/: do not edit.
#include \"dashboard/web_files.hpp\"

#include <array>

namespace redflow::dashboard {

namespace {
${arrays}
const WebFile kWebFiles[] = {
${entries}};
}  // namespace

std::span<const WebFile> web_files() { return kWebFiles; }

const WebFile* find_web_file(std::string_view name) {
  for (const WebFile& f : kWebFiles)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace redflow::dashboard
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
