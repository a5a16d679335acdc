/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared includes and helpers for the host-only cmocka tests. */
#ifndef RDMAKIT_TESTS_UNIT_H
#define RDMAKIT_TESTS_UNIT_H

/* cmocka.h needs these first. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

/* Substring checks that, like cmocka's own assertions, print both values. */
#define assert_contains(haystack, needle)                                                          \
	do {                                                                                       \
		const char *h_ = (haystack), *n_ = (needle);                                       \
		if (!h_ || !strstr(h_, n_))                                                        \
			fail_msg("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);        \
	} while (0)

#define assert_not_contains(haystack, needle)                                                      \
	do {                                                                                       \
		const char *h_ = (haystack), *n_ = (needle);                                       \
		if (!h_ || strstr(h_, n_))                                                         \
			fail_msg("\"%s\" contains \"%s\"", h_ ? h_ : "(null)", n_);                \
	} while (0)

/* Non-empty string, printed when it is not. */
#define assert_nonempty(s)                                                                         \
	do {                                                                                       \
		const char *s_ = (s);                                                              \
		if (!s_ || !s_[0])                                                                 \
			fail_msg("%s is %s", #s, s_ ? "\"\"" : "NULL");                            \
	} while (0)

/* Two floating-point figures within 1e-9 of each other (NaN never is), both
 * printed when not. */
#define assert_close(a, b)                                                                         \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(a_ - b_ <= 1e-9 && b_ - a_ <= 1e-9))                                         \
			fail_msg("%s = %.9f, expected %.9f", #a, a_, b_);                          \
	} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
