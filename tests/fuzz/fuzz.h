/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared by the fuzz targets: the libFuzzer entry point, and a check that
 * prints what was expected and what came, then aborts (libFuzzer keeps the
 * input as a crash artifact). */
#ifndef RDMAKIT_TESTS_FUZZ_H
#define RDMAKIT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FUZZ CHECK FAILED at %s:%d: ", __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
