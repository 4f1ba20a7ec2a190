# Sanitizer and fuzzing builds. Each is its own build directory
# (scripts/build.sh --sanitize -> build-asan, --tsan -> build-tsan); the flags
# apply to every target so our libraries are instrumented where the
# sanitizers look.
#
# CLUSTERCERT_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer.
# CLUSTERCERT_FUZZ: the libFuzzer targets under fuzz/. Needs clang; it also
#   turns the sanitizer build on and compiles every library with
#   -fsanitize=fuzzer-no-link (coverage for libFuzzer), so one build serves
#   both the ASan+UBSan test run and the fuzzers instead of two builds.
# CLUSTERCERT_TSAN: ThreadSanitizer (not with the other two: the runtimes
#   exclude each other). Debian's gRPC, protobuf and absl are not
#   instrumented; tests/tsan.supp names what that produces.

option(CLUSTERCERT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(CLUSTERCERT_FUZZ "Build the libFuzzer targets under fuzz/ (clang; implies CLUSTERCERT_SANITIZE)" OFF)
option(CLUSTERCERT_TSAN "Build with ThreadSanitizer" OFF)

if(CLUSTERCERT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "CLUSTERCERT_FUZZ=ON needs clang (libFuzzer), but the C++ compiler is "
      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}: configure a fresh build directory with "
      "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ (scripts/build.sh --sanitize does).")
  endif()
  set(CLUSTERCERT_SANITIZE ON CACHE BOOL "" FORCE)
endif()

if(CLUSTERCERT_TSAN AND CLUSTERCERT_SANITIZE)
  message(FATAL_ERROR
    "CLUSTERCERT_TSAN=ON cannot be combined with CLUSTERCERT_SANITIZE or CLUSTERCERT_FUZZ: "
    "ThreadSanitizer and AddressSanitizer cannot share a process; use separate build "
    "directories (scripts/build.sh --tsan and --sanitize).")
endif()

if(CLUSTERCERT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(CLUSTERCERT_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(CLUSTERCERT_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# lld links the sanitizer builds' executables about three times faster than
# ld.bfd (plan_fuzzer: 0.44 s against 1.34 s of CPU); CI links some forty of
# them per build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND (CLUSTERCERT_SANITIZE OR CLUSTERCERT_TSAN))
  find_program(CLUSTERCERT_LLD ld.lld)
  if(CLUSTERCERT_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
