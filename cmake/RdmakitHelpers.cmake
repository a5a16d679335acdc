# Small helpers so every target gets the same flags and every test the same wiring.

# rdmakit_warnings(TARGET): the project's warning set; errors when RDMAKIT_WERROR is on.
function(rdmakit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wformat=2
                         -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter)
  if(RDMAKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# rdmakit_unit_test(NAME SOURCES... [LIBS ...]): a host-only cmocka test of pure logic.
function(rdmakit_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  rdmakit_warnings(${name})
  target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${ARG_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 60)
endfunction()

# rdmakit_rdma_test(NAME COMMAND ... [TIMEOUT s]): a test that needs a verbs device.
# Labelled "rdma" so scripts/test.sh runs them all inside one Soft-RoCE guest boot.
# Exit 77 means the device lacks a feature the test needs; the test prints which.
function(rdmakit_rdma_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS rdma TIMEOUT ${ARG_TIMEOUT}
                       SKIP_RETURN_CODE 77)
endfunction()
