// The headers most of the library's files include, compiled once per build
// (CMakeLists.txt, target_precompile_headers): the library builds in each of
// scripts/test's four builds, and parsing these took ~2 s of every file's
// ~3.5 s. Files still include what they use; this only makes it free.
#pragma once

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "redflow/redflow.hpp"
