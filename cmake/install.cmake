# Installation: `cmake --install build [--prefix DIR]` installs the shared
# library (libredflow.so.MAJOR.MINOR, its SONAME, and the libredflow.so link),
# its headers, the user's `redflow` command (redflow_user_cli), an exported
# CMake package (find_package(redflow) -> redflow::redflow) and a pkg-config
# file (redflow.pc). examples/consumer/ is a separate project that uses them;
# the CTest test `install_consumer` installs into a temporary prefix and
# builds it.
include(CMakePackageConfigHelpers)

set(REDFLOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/redflow)

install(TARGETS redflow_shared EXPORT redflowTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/redflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET redflow_user_cli)
  install(TARGETS redflow_user_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

install(EXPORT redflowTargets NAMESPACE redflow:: DESTINATION ${REDFLOW_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/redflowConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/redflowConfig.cmake INSTALL_DESTINATION ${REDFLOW_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/redflowConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/redflowConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/redflowConfigVersion.cmake
  DESTINATION ${REDFLOW_CMAKE_DIR})

# pkg-config: the prefix is found relative to the .pc file, so the install
# can be moved (and `--prefix` at install time works).
file(RELATIVE_PATH REDFLOW_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" REDFLOW_PC_TO_PREFIX "${REDFLOW_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/redflow.pc.in ${CMAKE_CURRENT_BINARY_DIR}/redflow.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/redflow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(REDFLOW_BUILD_TESTS AND TARGET redflow_user_cli)
  # The sanitizer flags of this build, which an installed sanitized library needs at link time.
  set(REDFLOW_CONSUMER_FLAGS "")
  if(REDFLOW_SANITIZE STREQUAL "address")
    set(REDFLOW_CONSUMER_FLAGS "-fsanitize=address,undefined")
  elseif(REDFLOW_SANITIZE STREQUAL "thread")
    set(REDFLOW_CONSUMER_FLAGS "-fsanitize=thread")
  endif()
  add_test(NAME install_consumer
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
            -DWORK_DIR=${CMAKE_BINARY_DIR}/consumer-test -DCXX=${CMAKE_CXX_COMPILER} "-DFLAGS=${REDFLOW_CONSUMER_FLAGS}"
            "-DPYTHON=$<$<TARGET_EXISTS:redflow_python>:${REDFLOW_PYTHON}>" "-DPYTHON_SITE=${REDFLOW_PYTHON_SITE}"
            -P ${CMAKE_CURRENT_LIST_DIR}/consumer_test.cmake)
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 600)
  add_test(NAME reconfigure_keeps_flags
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DWORK_DIR=${CMAKE_BINARY_DIR}/reconfigure-test
            -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -P ${CMAKE_CURRENT_LIST_DIR}/reconfigure_test.cmake)
  set_tests_properties(reconfigure_keeps_flags PROPERTIES TIMEOUT 120)
endif()
