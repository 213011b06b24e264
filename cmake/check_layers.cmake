# The layers of the code (docs/architecture.md), checked by following
# #include lines through src/ and include/ (system headers are left alone):
#
#   CHECK=runtime_without_net: every file of src/runtime, and every header it
#     includes, directly or through others, includes nothing under src/net.
#     The engine takes its remote tiles from runtime/remote_tiles.hpp, which
#     src/net implements. Fails naming each chain of includes that reaches src/net.
#   CHECK=one_public_header: redflow/redflow.hpp reaches every header in
#     include/redflow, so a user includes one header for every model, and the
#     installed headers hold nothing else (a benchmark's header lives beside
#     its code). Fails naming the headers it does not reach.
#
# Run by the CTest tests of the same names:
#   cmake -DSOURCE_DIR=<repository> -DCHECK=<check> -P cmake/check_layers.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR OR NOT CHECK)
  message(FATAL_ERROR "check_layers.cmake: pass -DSOURCE_DIR=<repository> -DCHECK=runtime_without_net|one_public_header")
endif()

# Follows the includes of `start` (paths relative to src/ or include/).
# Sets `seen` to every file reached and `bad` to each chain of includes that
# ends in a path matching `forbidden` (not followed further).
function(follow_includes start forbidden)
  set(queue ${start})
  set(seen ${start})
  foreach(f IN LISTS start)
    set(via_${f} "${f}")
  endforeach()
  set(bad "")
  while(queue)
    list(POP_FRONT queue file)
    if(EXISTS ${SOURCE_DIR}/src/${file})
      set(path ${SOURCE_DIR}/src/${file})
    elseif(EXISTS ${SOURCE_DIR}/include/${file})
      set(path ${SOURCE_DIR}/include/${file})
    else()
      continue()  # a system or third-party header
    endif()
    file(STRINGS ${path} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "#[ \t]*include[ \t]*[\"<]([^\">]+)[\">]")
        continue()
      endif()
      set(inc ${CMAKE_MATCH_1})
      if(forbidden AND inc MATCHES "${forbidden}")
        list(APPEND bad "${via_${file}} -> ${inc}")
        continue()
      endif()
      if(NOT inc IN_LIST seen)
        list(APPEND seen ${inc})
        list(APPEND queue ${inc})
        set(via_${inc} "${via_${file}} -> ${inc}")
      endif()
    endforeach()
  endwhile()
  set(seen ${seen} PARENT_SCOPE)
  set(bad ${bad} PARENT_SCOPE)
endfunction()

if(CHECK STREQUAL "runtime_without_net")
  file(GLOB start RELATIVE ${SOURCE_DIR}/src ${SOURCE_DIR}/src/runtime/*.cpp ${SOURCE_DIR}/src/runtime/*.hpp)
  if(NOT start)
    message(FATAL_ERROR "check_layers.cmake: no files in ${SOURCE_DIR}/src/runtime")
  endif()
  list(APPEND start precompiled.hpp)  # part of every file of the library
  follow_includes("${start}" "^net/")
  if(bad)
    list(JOIN bad "\n  " chains)
    message(FATAL_ERROR "src/runtime includes src/net (it takes remote tiles from runtime/remote_tiles.hpp instead):\n  ${chains}")
  endif()
  list(LENGTH seen n)
  message(STATUS "src/runtime and the files it includes (${n} in all) reach nothing under src/net")
elseif(CHECK STREQUAL "one_public_header")
  follow_includes("redflow/redflow.hpp" "")
  file(GLOB public RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/redflow/*)
  set(missing "")
  foreach(h IN LISTS public)
    if(NOT h IN_LIST seen)
      list(APPEND missing ${h})
    endif()
  endforeach()
  if(missing)
    list(JOIN missing "\n  " names)
    message(FATAL_ERROR "redflow/redflow.hpp does not include these public headers (include them there, "
                        "or move what is not API out of include/):\n  ${names}")
  endif()
  list(LENGTH public n)
  message(STATUS "redflow/redflow.hpp reaches all ${n} public headers")
else()
  message(FATAL_ERROR "check_layers.cmake: CHECK=${CHECK}: expected runtime_without_net or one_public_header")
endif()
