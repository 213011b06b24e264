# CTest `install_consumer`: install this build into a fresh prefix, then
# build and run examples/consumer/ against it with CMake (find_package: the
# consumer, and a plugin host loading a plugin) and with pkg-config, and run
# the installed `redflow` command.
# Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR, CXX, FLAGS (sanitizer flags of the build, may be empty).
cmake_minimum_required(VERSION 3.20)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(f include/redflow/redflow.hpp include/redflow/visualize.hpp bin/redflow)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install_consumer: ${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/redflowConfig.cmake)
file(GLOB_RECURSE pc ${prefix}/*/redflow.pc)
if(NOT config OR NOT pc)
  message(FATAL_ERROR "install_consumer: redflowConfig.cmake or redflow.pc missing under ${prefix}")
endif()

# The installed command works on its own.
run("installed redflow actors" ${prefix}/bin/redflow actors)
if(NOT last_output MATCHES "rf.split")
  message(FATAL_ERROR "install_consumer: 'redflow actors' did not list rf.split:\n${last_output}")
endif()

# 1. CMake: find_package(redflow) in a separate project.
run("configure consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/cmake-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
run("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run("run consumer" ${WORK_DIR}/cmake-build/consumer ${WORK_DIR}/consumer-trace.json ${WORK_DIR}/consumer-gantt.svg)
message(STATUS "consumer (CMake): ${last_output}")
# A plugin host: links redflow::plugin_host alone and loads a plugin built beside it.
run("run plugin_host" ${WORK_DIR}/cmake-build/plugin_host ${WORK_DIR}/cmake-build/libconsumer_actors.so)
if(NOT last_output MATCHES "plugin_host: ok")
  message(FATAL_ERROR "install_consumer: plugin_host did not run the plugin's actor:\n${last_output}")
endif()
message(STATUS "plugin_host (CMake): ${last_output}")
foreach(f consumer-trace.json consumer-gantt.svg)
  if(NOT EXISTS ${WORK_DIR}/${f})
    message(FATAL_ERROR "install_consumer: the consumer did not write ${f}")
  endif()
endforeach()

# 2. pkg-config: the same program built by hand from `pkg-config --cflags --libs redflow`.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  get_filename_component(pcdir ${pc} DIRECTORY)
  run("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir} ${PKG_CONFIG} --cflags --libs redflow)
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  separate_arguments(extra UNIX_COMMAND "${FLAGS}")
  run("build consumer with pkg-config" ${CXX} ${extra} -O1 ${SOURCE_DIR}/examples/consumer/main.cpp -o ${WORK_DIR}/consumer-pc ${pc_flags})
  run("run consumer (pkg-config)" ${WORK_DIR}/consumer-pc)
  message(STATUS "consumer (pkg-config): ${last_output}")
endif()
