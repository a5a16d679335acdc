/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the units bandwidth is shown in, rates written as text, and the
 * share of a link rate a bandwidth is.
 *
 *   MiB  MiB/s, 2^20 bytes per second (rdmakit's default, as perftest's tables)
 *   GB   GB/s, 10^9 bytes per second
 *   Gb   Gb/s, 10^9 bits per second (perftest's --report_gbits; link rates)
 *
 * Figures are kept in bytes per second; these convert them for display and
 * read them back from text. Pure logic.
 */
#ifndef RDMAKIT_UNITS_H
#define RDMAKIT_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_bw_unit {
	RK_BW_MIB = 0, /* 2^20 bytes per second */
	RK_BW_GBYTE,   /* 10^9 bytes per second */
	RK_BW_GBIT,    /* 10^9 bits per second */
};

#define RK_BW_UNITS 3

/* The largest rate rk_rate_parse() takes: 10^6 Gb/s, in bytes per second. */
#define RK_RATE_MAX 1.25e14

/* "MiB", "GB", "Gb": the unit as --units takes it ("?" out of range). */
const char *rk_bw_unit_name(enum rk_bw_unit unit);

/* "MiB/s", "GB/s", "Gb/s": the unit as figures are labelled. */
const char *rk_bw_unit_str(enum rk_bw_unit unit);

/* The unit named text: exactly "MiB", "GB" or "Gb" (the case tells bits from
 * bytes), each optionally followed by "/s". 0, or -EINVAL. */
int rk_bw_unit_parse(const char *text, enum rk_bw_unit *unit_p);

/* Bytes per second in unit, and back. */
double rk_bw_in(double bytes_per_s, enum rk_bw_unit unit);
double rk_bw_bytes(double value, enum rk_bw_unit unit);

/* Whole numbers as options and arguments take them, checked to the end.
 *
 * text as an unsigned number in [min, max]: decimal, or hex with 0x, never
 * octal. suffix_base 1024 accepts k/M/G as 1024^n, 1000 as 1000^n, 0 no
 * suffix. On failure writes a reason ("'10x' is not a number", "8192 is
 * outside the range 1..4096") into err and returns -EINVAL or -ERANGE. *out
 * is set only on success. */
int rk_parse_u64(const char *text, uint64_t min, uint64_t max, unsigned int suffix_base,
		 uint64_t *out, char *err, size_t err_len);

/* Parse a signed decimal in [min, max]; same error convention. */
int rk_parse_i64(const char *text, int64_t min, int64_t max, int64_t *out, char *err,
		 size_t err_len);

/* A plain non-negative decimal at the start of text: digits with at most one
 * point ("90", "12.5", ".5", "3."); no sign, exponent, hex, blank, "inf" or
 * "nan". *end_p is set to the first character after it. 0, or -EINVAL (no
 * number there). *value_p and *end_p are set only on success. */
int rk_decimal_scan(const char *text, double *value_p, const char **end_p);

/* A limit: a decimal (rk_decimal_scan()) and nothing after it, above 0 and at
 * most max. On failure writes a reason naming the text ("'9x' is not a
 * number", "'0' is not above 0", "'101' is above the maximum 100") into err
 * and returns -EINVAL (not a number) or -ERANGE. */
int rk_limit_parse(const char *text, double max, double *value_p, char *err, size_t err_len);

/* A rate: a decimal, then optionally a unit (MiB, GB or Gb, each optionally
 * with "/s": "90Gb", "11.5GB/s", "1000MiB"); a bare number is in
 * default_unit. Above 0 and at most RK_RATE_MAX. *bytes_per_s_p gets it in
 * bytes per second. Errors as rk_limit_parse(), the reason naming the text. */
int rk_rate_parse(const char *text, enum rk_bw_unit default_unit, double *bytes_per_s_p,
		  char *err, size_t err_len);

/* The percentage of a link of link_gbps (Gb/s, as rk_port_link_rate() gives
 * it) that bytes_per_s is; -1 when link_gbps is not above 0. */
double rk_link_pct(double bytes_per_s, double link_gbps);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
