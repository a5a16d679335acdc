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

# rdmakit_rdma_test(NAME COMMAND ... [TIMEOUT s] IWARP_SKIP what | IWARP_CASES case... | SIW):
# a test that needs a verbs device. Labelled "rdma" so scripts/test.sh runs them all inside one
# Soft-RoCE guest boot. Exit 77 means the device lacks a feature the test needs; the test prints
# which. Each says what it does on an iWARP device (Soft-iWARP's siw0: QPs connect only through
# RDMA CM, RC only, no atomics, no immediate data):
#   IWARP_SKIP what: exits 77 at once there (tests/rdma/iwarp_gate.sh), printing
#     "SKIP: iWARP (DEV): what": what the test needs that iWARP lacks;
#   IWARP_CASES: a cmocka program (fixture.c's fx_run) runs only these cases there
#     (RDMAKIT_IWARP_CASES; IWARP_SKIP's text then says why the others are left out);
#   SIW: the test itself runs what applies on iWARP.
# Those that run there (IWARP_CASES, SIW) get the label "siw" too (the suite's siw stage).
function(rdmakit_rdma_test name)
  cmake_parse_arguments(ARG "SIW" "TIMEOUT;IWARP_SKIP" "COMMAND;IWARP_CASES" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(labels rdma)
  set(cmd ${ARG_COMMAND})
  if(ARG_IWARP_CASES)
    string(REPLACE ";" " " cases "${ARG_IWARP_CASES}")
    set(env "RDMAKIT_IWARP_CASES=${cases}" "RDMAKIT_IWARP_LEFT_OUT=${ARG_IWARP_SKIP}")
    list(APPEND labels siw)
  elseif(ARG_IWARP_SKIP)
    # add_test() finds a target's file only for a first word that names it.
    list(GET cmd 0 exe)
    if(TARGET ${exe})
      list(REMOVE_AT cmd 0)
      list(PREPEND cmd $<TARGET_FILE:${exe}>)
    endif()
    set(cmd sh ${PROJECT_SOURCE_DIR}/tests/rdma/iwarp_gate.sh "${ARG_IWARP_SKIP}" ${cmd})
  elseif(ARG_SIW)
    list(APPEND labels siw)
  else()
    message(FATAL_ERROR "rdma test ${name}: say what it does on iWARP (IWARP_SKIP, IWARP_CASES or SIW)")
  endif()
  add_test(NAME ${name} COMMAND ${cmd})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${ARG_TIMEOUT}
                       SKIP_RETURN_CODE 77)
  if(env)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
  endif()
endfunction()
