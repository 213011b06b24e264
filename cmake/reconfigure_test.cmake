# A promise of docs/testing.md: a build directory's second configure writes
# the compile flags its first wrote, so a second build (the README's second
# command after its first) rebuilds only what changed. libzmq's pkg-config
# file once broke it (CMakeLists.txt), and every object was built twice.
# Configures a fresh directory twice and compares every target's flags.make.
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DBUILD_TYPE=... [-DOPTIONS=...] -P reconfigure_test.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
function(configure_once)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE} ${OPTIONS}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring ${SOURCE_DIR} into ${WORK_DIR} failed: ${err}")
  endif()
endfunction()

configure_once()
file(GLOB_RECURSE flag_files "${WORK_DIR}/CMakeFiles/*/flags.make")
list(LENGTH flag_files count)
if(count EQUAL 0)
  message(FATAL_ERROR "the first configure wrote no flags.make under ${WORK_DIR}/CMakeFiles")
endif()
set(i 0)
foreach(f IN LISTS flag_files)
  file(READ "${f}" first_${i})
  math(EXPR i "${i} + 1")
endforeach()
configure_once()
set(changed "")
set(i 0)
foreach(f IN LISTS flag_files)
  file(READ "${f}" now)
  set(before "${first_${i}}")
  math(EXPR i "${i} + 1")
  if(NOT now STREQUAL before)
    string(REPLACE "${WORK_DIR}/CMakeFiles/" "" target "${f}")
    list(APPEND changed "${target}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
if(changed)
  message(FATAL_ERROR "a second configure changed the compile flags of ${changed}: every object of those targets would be built again")
endif()
message(STATUS "${count} targets: a second configure wrote the same flags")
