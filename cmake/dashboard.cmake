# The live dashboard (src/dashboard/, docs/dashboard.md): a library of its
# own, so that the redflow library and what installs it do not depend on
# cpp-httplib. The pages under src/dashboard/web/ are compiled in
# (cmake/embed_web_files.cmake). Included after the targets that use it.
pkg_check_modules(CPPHTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
file(GLOB REDFLOW_DASHBOARD_WEB CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/dashboard/web/*)
list(SORT REDFLOW_DASHBOARD_WEB)
set(REDFLOW_DASHBOARD_WEB_CPP ${CMAKE_CURRENT_BINARY_DIR}/dashboard_web_files.cpp)
add_custom_command(OUTPUT ${REDFLOW_DASHBOARD_WEB_CPP}
  COMMAND ${CMAKE_COMMAND} "-DOUT=${REDFLOW_DASHBOARD_WEB_CPP}" "-DFILES=${REDFLOW_DASHBOARD_WEB}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_web_files.cmake
  DEPENDS ${REDFLOW_DASHBOARD_WEB} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_web_files.cmake
  COMMENT "Embedding the dashboard's pages"
  VERBATIM)
file(GLOB REDFLOW_DASHBOARD_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/dashboard/*.cpp)
add_library(redflow_dashboard STATIC ${REDFLOW_DASHBOARD_SOURCES} ${REDFLOW_DASHBOARD_WEB_CPP})
# Private include directories and httplib's flags (a static library passes its
# private libraries on to the link only): its users compile as they did.
target_include_directories(redflow_dashboard PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(redflow_dashboard PRIVATE PkgConfig::CPPHTTPLIB nlohmann_json::nlohmann_json fmt::fmt Threads::Threads)
foreach(user redflow_cli redflow_user_cli redflow_tests dashboard_overhead)
  if(TARGET ${user})
    target_link_libraries(${user} PRIVATE redflow_dashboard)
  endif()
endforeach()
# The browser test decodes chromium's screenshots (tests/png_pixels.hpp).
if(TARGET redflow_tests)
  find_package(ZLIB REQUIRED)
  target_link_libraries(redflow_tests PRIVATE ZLIB::ZLIB)
endif()
if(TARGET dashboard_overhead)
  # redflow again after the dashboard's library, which draws with its Gantt writer.
  target_link_libraries(dashboard_overhead PRIVATE redflow_apps redflow)
endif()
