// The headers nearly every subcommand's file includes, CLI11 above all
// (header-only and the slowest to parse), compiled once per build
// (CMakeLists.txt, target_precompile_headers). Files still include what they
// use; this only makes the second inclusion free.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "redflow/redflow.hpp"
