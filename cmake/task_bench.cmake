# Task Bench on redflow (bench/task_bench/, bench/task_bench.sh,
# docs/performance.md): built when REDFLOW_TASK_BENCH_DIR names a task-bench
# tree (github.com/StanfordLegion/task-bench; fetch it, never commit it).
set(REDFLOW_TASK_BENCH_DIR "" CACHE PATH "A task-bench tree: builds task_bench_redflow (bench/task_bench/)")
if(REDFLOW_TASK_BENCH_DIR)
  set(task_bench_core_dir ${REDFLOW_TASK_BENCH_DIR}/core)
  if(NOT EXISTS ${task_bench_core_dir}/core.h)
    message(FATAL_ERROR "REDFLOW_TASK_BENCH_DIR=${REDFLOW_TASK_BENCH_DIR}: no core/core.h there; expected a task-bench tree")
  endif()
  enable_language(C)
  # Task Bench's core library as its own core/Makefile builds it for the
  # other implementations: -O3, AVX2 and FMA where the CPU has them, and its
  # assertions on (TaskGraph::execute_point checks every input it is given).
  # Its warnings are its own.
  add_library(task_bench_core STATIC
    ${task_bench_core_dir}/core.cc ${task_bench_core_dir}/core_c.cc ${task_bench_core_dir}/core_kernel.cc
    ${task_bench_core_dir}/timer.cc ${task_bench_core_dir}/core_random.c ${task_bench_core_dir}/siphash.c)
  # SYSTEM: its headers warn under C++20 (std::is_pod), not ours to fix.
  target_include_directories(task_bench_core SYSTEM PUBLIC ${task_bench_core_dir})
  target_compile_options(task_bench_core PRIVATE -O3 -UNDEBUG -w)
  file(STRINGS /proc/cpuinfo task_bench_avx2 REGEX "^flags.* avx2 " LIMIT_COUNT 1)
  if(task_bench_avx2)
    target_compile_options(task_bench_core PRIVATE -mavx2 -mfma)
  endif()
  add_executable(task_bench_redflow ${CMAKE_CURRENT_SOURCE_DIR}/bench/task_bench/redflow_main.cpp)
  target_link_libraries(task_bench_redflow PRIVATE redflow task_bench_core)
endif()
