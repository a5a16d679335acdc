# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Small helpers so every target gets the same flags and every test the same wiring.

# rdmakit_warnings(TARGET): the project's warning set; errors when RDMAKIT_WERROR is on.
function(rdmakit_warnings target)
  # -Wno-missing-field-initializers: tables of struct cli_opt (src/cli/cli_opts.h)
  # give the first fields in order and leave the optional ones (choices, def)
  # zero, as C does.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wformat=2
                         -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter
                         -Wno-missing-field-initializers)
  if(RDMAKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# rdmakit_instrumentation(): directory-wide flags from RDMAKIT_SANITIZE and
# RDMAKIT_FUZZ (call before adding targets), and RDMAKIT_VALGRIND: whether
# unit tests also run under valgrind memcheck (not with sanitizers).
function(rdmakit_instrumentation)
  if(RDMAKIT_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RDMAKIT_FUZZ needs clang's libFuzzer: -DCMAKE_C_COMPILER=clang")
  endif()
  if(RDMAKIT_SANITIZE OR RDMAKIT_FUZZ)
    # UB fails the run instead of printing and going on.
    add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                        -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
  endif()
  if(RDMAKIT_FUZZ)
    add_compile_options(-fsanitize=fuzzer-no-link) # coverage feedback in the library too
  endif()
  find_program(RDMAKIT_VALGRIND_PROGRAM valgrind)
  if(RDMAKIT_VALGRIND_PROGRAM AND NOT RDMAKIT_SANITIZE AND NOT RDMAKIT_FUZZ)
    set(RDMAKIT_VALGRIND ON PARENT_SCOPE)
  else()
    set(RDMAKIT_VALGRIND OFF PARENT_SCOPE)
  endif()
endfunction()

# rdmakit_valgrind_test(NAME TARGET ARGS...): NAME_valgrind runs TARGET with
# ARGS under valgrind memcheck; any error or leak fails it. Labels "unit" and
# "valgrind" (ctest -L valgrind runs only these).
function(rdmakit_valgrind_test name target)
  if(NOT RDMAKIT_VALGRIND)
    return()
  endif()
  add_test(NAME ${name}_valgrind
           COMMAND ${RDMAKIT_VALGRIND_PROGRAM} -q --error-exitcode=1 --leak-check=full
                   --track-origins=yes $<TARGET_FILE:${target}> ${ARGN})
  set_tests_properties(${name}_valgrind PROPERTIES LABELS "unit;valgrind" TIMEOUT 300)
endfunction()

# rdmakit_unit_test(NAME SOURCES... [LIBS ...]): a host-only cmocka test of pure logic.
function(rdmakit_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  rdmakit_warnings(${name})
  target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${ARG_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 60)
  rdmakit_valgrind_test(${name} ${name})
endfunction()

# rdmakit_rdma_test(NAME [SIW] COMMAND ... [TIMEOUT s]): a test that needs a verbs device.
# Labelled "rdma" so scripts/test.sh runs them inside its Soft-RoCE device guests;
# SIW adds the label "siw": the test also runs in the suite's Soft-iWARP guest
# (siw0; scripts/test.sh's siw stage runs ctest -L '^siw$' there).
# Exit 77 means the device lacks a feature the test needs; the test prints which.
function(rdmakit_rdma_test name)
  cmake_parse_arguments(ARG "SIW" "TIMEOUT" "COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(labels rdma)
  if(ARG_SIW)
    list(APPEND labels siw)
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${ARG_TIMEOUT}
                       SKIP_RETURN_CODE 77)
endfunction()
