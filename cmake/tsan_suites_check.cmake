# Run by the CTest tests tsan_suites_declared and tsan_suites_unknown_fails:
#   cmake -DSOURCE_DIR=<redflow> -DSUITES=<suites file> -P tsan_suites_check.cmake
# picks the test files as the TSan build does (tsan_test_sources.cmake) and
# prints how many it kept; it fails, naming the suite, when SUITES names a
# suite no test file declares.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/tsan_test_sources.cmake)
file(GLOB sources ${SOURCE_DIR}/tests/*_test.cpp)
list(LENGTH sources all)
redflow_tsan_test_sources(sources ${SUITES})
list(LENGTH sources kept)
if(kept EQUAL 0)
  message(FATAL_ERROR "${SUITES}: no test file declares any of its suites")
endif()
message(STATUS "the TSan build compiles ${kept} of ${all} test files")
