# Precompiled headers for the clang builds (build-asan, build-tsan).
#
# A file of ours spends most of its compile parsing the standard, absl,
# protobuf and gRPC headers: cell_run.cc under clang ASan+UBSan took 4.42 s,
# 2.13 s with them precompiled (plan_parser.cc 2.81 s against 1.84 s), and
# the header set itself 3.1 s once per target. CI compiles the tree twice
# with clang, so this is minutes of its budget. gcc gains less (cell_run.cc
# at -O2 4.55 s against 3.53 s) for a 175 MB .gch per target, and the
# normal build stays without, which also proves every file includes what it
# uses. CLUSTERCERT_PCH=OFF turns it off.
option(CLUSTERCERT_PCH "Precompile the common headers in clang builds" ON)

# Every target defined under `dir` and its subdirectories.
function(clustercert_targets_under dir out)
  get_property(found DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    clustercert_targets_under(${sub} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Gives each C++ target of three or more .cc files (one of two files would
# pay the header set's compile without winning it back) cmake/pch/common.h,
# or cmake/pch/tests.h for the test suites. Targets with CUDA sources are
# left alone. Called once every target exists.
function(clustercert_precompile_headers)
  if(NOT CLUSTERCERT_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    return()
  endif()
  clustercert_targets_under(${CMAKE_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    set(cuda ${sources})
    list(FILTER cuda INCLUDE REGEX "\\.cu$")
    list(FILTER sources INCLUDE REGEX "\\.cc$")
    list(LENGTH sources count)
    if(cuda OR count LESS 3)
      continue()
    endif()
    set(header common.h)
    if(target MATCHES "^(unit|integration|lab)_")
      set(header tests.h)
    endif()
    target_precompile_headers(${target} PRIVATE
                              "$<$<COMPILE_LANGUAGE:CXX>:${CMAKE_SOURCE_DIR}/cmake/pch/${header}>")
  endforeach()
endfunction()
