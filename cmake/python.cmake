# The Python module (python/, docs/python.md): `import redflow` builds graphs,
# passes NumPy arrays in and out, runs Python callables as actors. pybind11
# (Debian pybind11-dev) against Debian's python3 and its python3-numpy: this
# machine may have another python3 first on PATH, whose numpy and headers
# are not Debian's, so the interpreter is /usr/bin/python3 unless
# REDFLOW_PYTHON names another. Not in sanitizer or fuzz builds (a Python
# interpreter built without them would load the module).
set(REDFLOW_PYTHON "/usr/bin/python3" CACHE FILEPATH "The Python interpreter the module is built for and tested with")
option(REDFLOW_BUILD_PYTHON "Build the Python module (needs pybind11-dev and python3-dev)" ON)
if(NOT REDFLOW_BUILD_PYTHON OR REDFLOW_SANITIZE)
  return()
endif()
if(NOT EXISTS "${REDFLOW_PYTHON}")
  message(STATUS "redflow: no Python module (${REDFLOW_PYTHON} not found; set REDFLOW_PYTHON)")
  return()
endif()
set(PYBIND11_FINDPYTHON ON)
set(Python_EXECUTABLE "${REDFLOW_PYTHON}")
find_package(pybind11 CONFIG QUIET)
if(NOT pybind11_FOUND)
  message(STATUS "redflow: no Python module (pybind11 not found: apt-get install pybind11-dev)")
  return()
endif()

file(GLOB REDFLOW_PYTHON_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/module/*.cpp)
pybind11_add_module(redflow_python MODULE ${REDFLOW_PYTHON_SOURCES})
# The package directory of the build tree: build/python/redflow/ holds the
# pure-Python part (copied at build time) and the compiled _redflow module,
# so `PYTHONPATH=build/python python3 -c "import redflow"` works.
set(REDFLOW_PYTHON_PACKAGE_DIR ${CMAKE_CURRENT_BINARY_DIR}/python/redflow)
set_target_properties(redflow_python PROPERTIES OUTPUT_NAME _redflow LIBRARY_OUTPUT_DIRECTORY ${REDFLOW_PYTHON_PACKAGE_DIR})
target_include_directories(redflow_python PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
# The shared library, not the static one: actor plugins loaded from Python
# resolve Registry::add against it (python/module/module.cpp makes its
# symbols global once the module is loaded).
target_link_libraries(redflow_python PRIVATE redflow_shared ${CMAKE_DL_LIBS})
file(GLOB REDFLOW_PYTHON_PACKAGE_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/redflow/*.py)
set(REDFLOW_PYTHON_PACKAGE_COPIES "")
foreach(f ${REDFLOW_PYTHON_PACKAGE_FILES})
  get_filename_component(n ${f} NAME)
  add_custom_command(OUTPUT ${REDFLOW_PYTHON_PACKAGE_DIR}/${n} COMMAND ${CMAKE_COMMAND} -E copy ${f} ${REDFLOW_PYTHON_PACKAGE_DIR}/${n}
                     DEPENDS ${f} VERBATIM)
  list(APPEND REDFLOW_PYTHON_PACKAGE_COPIES ${REDFLOW_PYTHON_PACKAGE_DIR}/${n})
endforeach()
add_custom_target(redflow_python_package ALL DEPENDS ${REDFLOW_PYTHON_PACKAGE_COPIES})
add_dependencies(redflow_python redflow_python_package)

if(TARGET redflow_tests)
  # The pytest suites (tests/python/), with Debian's pytest.
  add_test(NAME python_tests COMMAND ${REDFLOW_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tests/python)
  set_tests_properties(python_tests PROPERTIES TIMEOUT 300
    ENVIRONMENT "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}/python;REDFLOW_TEST_PLUGIN=$<TARGET_FILE:redflow_test_plugin>;REDFLOW_COMMAND=$<TARGET_FILE:redflow_cli>")
endif()

# cmake --install: the package into PREFIX/lib/python3.X/dist-packages/redflow,
# which Debian's python3 searches for the prefix /usr/local (another prefix:
# add that directory to PYTHONPATH); the module finds libredflow.so in
# PREFIX/lib, three directories up.
execute_process(COMMAND ${REDFLOW_PYTHON} -c "import sys; print(f'lib/python{sys.version_info[0]}.{sys.version_info[1]}/dist-packages')"
  OUTPUT_VARIABLE REDFLOW_PYTHON_SITE OUTPUT_STRIP_TRAILING_WHITESPACE)
set_target_properties(redflow_python PROPERTIES INSTALL_RPATH "$ORIGIN/../../..")
install(TARGETS redflow_python LIBRARY DESTINATION ${REDFLOW_PYTHON_SITE}/redflow)
install(FILES ${REDFLOW_PYTHON_PACKAGE_FILES} DESTINATION ${REDFLOW_PYTHON_SITE}/redflow)
