// The headers nearly every test file includes, compiled once per build for
// all of them (CMakeLists.txt: target_precompile_headers). Parsing gtest,
// nlohmann/json, the public API and the standard library took 3-5 s of each
// test file's 5-12 s, in each of scripts/test's three builds. Test files
// still include what they use; this only makes the second inclusion free.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redflow/redflow.hpp"
