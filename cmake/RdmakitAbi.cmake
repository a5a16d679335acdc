# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# librdmakit's ABI: what the shared library exports is decided in two places
# that must agree, and tests/abi checks that they do.
#  - The objects are compiled with -fvisibility=hidden; the public headers
#    (include/rdmakit/*.h) put their declarations between
#    `#pragma GCC visibility push(default)` and `pop`, so a function declared
#    there keeps default visibility and everything else (internal headers,
#    file-local helpers) is hidden. Calls inside the library to hidden
#    functions bind locally: no PLT, no interposition.
#  - The version script (src/lib/librdmakit.map) names each exported symbol
#    under its version node (RDMAKIT_0.1, ...) and makes the rest local.
# The static library is made of the same objects; hidden visibility does not
# change what a static link finds, so tests may call internal functions there.

# rdmakit_abi(OBJECTS target SHARED target MAP file): hidden visibility for
# OBJECTS, MAP as the version script of SHARED, and SHARED relinked when MAP
# changes.
function(rdmakit_abi)
  cmake_parse_arguments(ARG "" "OBJECTS;SHARED;MAP" "" ${ARGN})
  if(NOT ARG_OBJECTS OR NOT ARG_SHARED OR NOT ARG_MAP)
    message(FATAL_ERROR "rdmakit_abi: OBJECTS, SHARED and MAP are all needed")
  endif()
  set_target_properties(${ARG_OBJECTS} PROPERTIES C_VISIBILITY_PRESET hidden)
  target_link_options(${ARG_SHARED} PRIVATE "LINKER:--version-script=${ARG_MAP}")
  set_property(TARGET ${ARG_SHARED} APPEND PROPERTY LINK_DEPENDS ${ARG_MAP})
  # tests/abi reads the map the library was linked with.
  set_property(GLOBAL PROPERTY RDMAKIT_ABI_MAP ${ARG_MAP})
endfunction()
