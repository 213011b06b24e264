# CTest `install_consumer`: install this build into a fresh prefix, then
# build and run examples/consumer/ against it with CMake (find_package: the
# consumer, and a plugin host loading a plugin) and with pkg-config, and run
# the installed `redflow` command. Checks the shared library's SONAME and
# that the installed command links it and not the applications' BLAS and
# FFTW, and offers no developer tools.
# And, when the build has the Python module (PYTHON, the interpreter, and
# PYTHON_SITE, its directory under the prefix), that the installed package
# imports and runs a graph through the installed libredflow.so.
# Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR, CXX, FLAGS (sanitizer flags of the build, may be empty), PYTHON, PYTHON_SITE.
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

# The shared library: libredflow.so -> libredflow.so.MAJOR.MINOR (the SONAME) -> the file; no static library.
file(GLOB_RECURSE archives ${prefix}/*/libredflow.a)
if(archives)
  message(FATAL_ERROR "install_consumer: a static library was installed: ${archives}")
endif()
find_program(READELF readelf REQUIRED)
file(GLOB_RECURSE devlink ${prefix}/*/libredflow.so)
if(NOT devlink)
  message(FATAL_ERROR "install_consumer: no libredflow.so under ${prefix}")
endif()
run("readelf libredflow.so" ${READELF} -d ${devlink})
if(NOT last_output MATCHES "\\(SONAME\\)[^\n]*\\[libredflow\\.so\\.[0-9]+\\.[0-9]+\\]")
  message(FATAL_ERROR "install_consumer: libredflow.so has no SONAME libredflow.so.MAJOR.MINOR:\n${last_output}")
endif()

# The installed command works on its own, through the installed libredflow.so.
run("readelf bin/redflow" ${READELF} -d ${prefix}/bin/redflow)
if(NOT last_output MATCHES "NEEDED[^\n]*\\[libredflow\\.so\\.")
  message(FATAL_ERROR "install_consumer: bin/redflow does not link libredflow.so:\n${last_output}")
endif()
if(last_output MATCHES "openblas|fftw|tbb")
  message(FATAL_ERROR "install_consumer: bin/redflow links the applications' libraries (BLAS, FFTW, TBB):\n${last_output}")
endif()
run("installed redflow actors" ${prefix}/bin/redflow actors)
if(NOT last_output MATCHES "rf.split")
  message(FATAL_ERROR "install_consumer: 'redflow actors' did not list rf.split:\n${last_output}")
endif()
# Grouped help, the user's commands only, and a pointer to the build tree's for the others.
run("installed redflow --help" ${prefix}/bin/redflow --help)
foreach(expected "Run a program" "Run on a cluster" "  run " "  worker ")
  if(NOT last_output MATCHES "${expected}")
    message(FATAL_ERROR "install_consumer: 'redflow --help' lacks '${expected}':\n${last_output}")
  endif()
endforeach()
if(last_output MATCHES "\n  (difftest|launch-probe|table1) ")
  message(FATAL_ERROR "install_consumer: 'redflow --help' lists a developer tool:\n${last_output}")
endif()
execute_process(COMMAND ${prefix}/bin/redflow difftest --seeds 1 RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 2 OR NOT err MATCHES "'difftest' is not in the installed redflow command.*build tree")
  message(FATAL_ERROR "install_consumer: 'redflow difftest' exited ${rc}, expected 2 and a pointer to the build tree's command:\n${err}")
endif()

# 1. CMake: find_package(redflow) in a separate project.
run("configure consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/cmake-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
run("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run("run consumer" ${WORK_DIR}/cmake-build/consumer ${WORK_DIR}/consumer-trace.json ${WORK_DIR}/consumer-gantt.svg)
message(STATUS "consumer (CMake): ${last_output}")
# A plugin host: links redflow::redflow alone and loads a plugin built beside it.
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
  file(GLOB_RECURSE libdir LIST_DIRECTORIES false ${prefix}/*/libredflow.so)
  get_filename_component(libdir ${libdir} DIRECTORY)
  run("build consumer with pkg-config" ${CXX} ${extra} -O1 ${SOURCE_DIR}/examples/consumer/main.cpp -o ${WORK_DIR}/consumer-pc ${pc_flags}
      -Wl,-rpath,${libdir})
  run("run consumer (pkg-config)" ${WORK_DIR}/consumer-pc)
  message(STATUS "consumer (pkg-config): ${last_output}")
endif()

# 3. The Python package, from a directory outside the build tree.
if(PYTHON)
  if(NOT EXISTS ${prefix}/${PYTHON_SITE}/redflow/__init__.py)
    message(FATAL_ERROR "install_consumer: the Python package was not installed in ${prefix}/${PYTHON_SITE}/redflow")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${PYTHON_SITE} ${PYTHON} -c
    "import numpy as np, redflow; x = redflow.input('x', shape=(4,), dtype=np.int32); (y,) = redflow.compute(redflow.call('i32.add', x, x), inputs={'x': np.arange(4, dtype=np.int32)}, tiles=1); assert list(y) == [0, 2, 4, 6], y; print(redflow.__file__, redflow._redflow.__file__)"
    WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^${prefix}/")
    message(FATAL_ERROR "install_consumer: the installed Python package did not run a graph (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "Python package: ${out}")
endif()
