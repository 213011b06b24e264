# SPITS (docs/spits.md): the example jobs and the tests' job plugins, each a
# MODULE a `redflow spits` loads with dlopen. Jobs need only the header
# include/redflow/spits.hpp, never the library.
foreach(job pi block_filter trivial)
  add_library(spits_${job} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/examples/spits/${job}.cpp)
  target_include_directories(spits_${job} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  set_target_properties(spits_${job} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/examples/spits)
endforeach()

if(TARGET redflow_tests)
  set(spits_test_src ${CMAKE_CURRENT_SOURCE_DIR}/tests/spits_jobs/test_job.cpp)
  add_library(spits_test_job MODULE ${spits_test_src})
  add_library(spits_test_job_abi2 MODULE ${spits_test_src})
  target_compile_definitions(spits_test_job_abi2 PRIVATE SPITS_TEST_ABI=2)
  add_library(spits_test_job_no_entry MODULE ${spits_test_src})
  target_compile_definitions(spits_test_job_no_entry PRIVATE SPITS_TEST_NO_ENTRY)
  foreach(t spits_test_job spits_test_job_abi2 spits_test_job_no_entry)
    target_include_directories(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endforeach()
  target_include_directories(redflow_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/examples/spits)
  target_compile_definitions(redflow_tests PRIVATE
    REDFLOW_SPITS_PI="$<TARGET_FILE:spits_pi>"
    REDFLOW_SPITS_FILTER="$<TARGET_FILE:spits_block_filter>"
    REDFLOW_SPITS_TEST_JOB="$<TARGET_FILE:spits_test_job>"
    REDFLOW_SPITS_TEST_JOB_ABI2="$<TARGET_FILE:spits_test_job_abi2>"
    REDFLOW_SPITS_TEST_JOB_NO_ENTRY="$<TARGET_FILE:spits_test_job_no_entry>")
  add_dependencies(redflow_tests spits_pi spits_block_filter spits_test_job spits_test_job_abi2 spits_test_job_no_entry)
endif()

# bench/spits_throughput.cpp runs the trivial job.
if(TARGET spits_throughput)
  target_compile_definitions(spits_throughput PRIVATE REDFLOW_SPITS_TRIVIAL="$<TARGET_FILE:spits_trivial>")
  target_link_libraries(spits_throughput PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(spits_throughput spits_trivial)
endif()
