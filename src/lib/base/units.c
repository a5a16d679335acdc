/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Whole numbers, bandwidth units, rates and limits written as text, the
 * share of a link. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/units.h>

static const struct {
	const char *name, *str;
	double bytes; /* bytes per second in one unit */
} units[RK_BW_UNITS] = {
	[RK_BW_MIB] = {"MiB", "MiB/s", 1024.0 * 1024.0},
	[RK_BW_GBYTE] = {"GB", "GB/s", 1e9},
	[RK_BW_GBIT] = {"Gb", "Gb/s", 1e9 / 8},
};

static bool unit_ok(enum rk_bw_unit unit)
{
	return (unsigned int)unit < RK_BW_UNITS;
}

const char *rk_bw_unit_name(enum rk_bw_unit unit)
{
	return unit_ok(unit) ? units[unit].name : "?";
}

const char *rk_bw_unit_str(enum rk_bw_unit unit)
{
	return unit_ok(unit) ? units[unit].str : "?";
}

int rk_bw_unit_parse(const char *text, enum rk_bw_unit *unit_p)
{
	if (!text)
		return -EINVAL;
	for (int i = 0; i < RK_BW_UNITS; i++) {
		size_t n = strlen(units[i].name);

		if (!strncmp(text, units[i].name, n) && (!text[n] || !strcmp(text + n, "/s"))) {
			*unit_p = (enum rk_bw_unit)i;
			return 0;
		}
	}
	return -EINVAL;
}

double rk_bw_in(double bytes_per_s, enum rk_bw_unit unit)
{
	return unit_ok(unit) ? bytes_per_s / units[unit].bytes : bytes_per_s;
}

double rk_bw_bytes(double value, enum rk_bw_unit unit)
{
	return unit_ok(unit) ? value * units[unit].bytes : value;
}

int rk_decimal_scan(const char *text, double *value_p, const char **end_p)
{
	const char *p = text;
	int digits = 0, points = 0;
	char buf[64], *end;
	double v;

	if (!text)
		return -EINVAL;
	/* Checked by hand: strtod would also take a sign, blanks, exponents,
	 * hex floats, "inf" and "nan". Only the checked part is converted. */
	for (; isdigit((unsigned char)*p) || (*p == '.' && !points); p++) {
		if (*p == '.')
			points++;
		else
			digits++;
	}
	if (!digits || (size_t)(p - text) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, (size_t)(p - text));
	buf[p - text] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	*value_p = v;
	*end_p = p;
	return 0;
}

static int check_range(const char *text, double v, double max, char *err, size_t err_len)
{
	if (!(v > 0)) {
		snprintf(err, err_len, "'%s' is not above 0", text);
		return -ERANGE;
	}
	if (v > max) {
		snprintf(err, err_len, "'%s' is above the maximum %.10g", text, max);
		return -ERANGE;
	}
	return 0;
}

int rk_limit_parse(const char *text, double max, double *value_p, char *err, size_t err_len)
{
	const char *end;
	double v;
	int ret;

	if (rk_decimal_scan(text, &v, &end) || *end) {
		snprintf(err, err_len, "'%s' is not a number (examples: 90, 12.5)",
			 text ? text : "");
		return -EINVAL;
	}
	ret = check_range(text, v, max, err, err_len);
	if (ret)
		return ret;
	*value_p = v;
	return 0;
}

int rk_rate_parse(const char *text, enum rk_bw_unit default_unit, double *bytes_per_s_p,
		  char *err, size_t err_len)
{
	enum rk_bw_unit unit = default_unit;
	const char *end;
	double v;
	int ret;

	if (rk_decimal_scan(text, &v, &end) || (*end && rk_bw_unit_parse(end, &unit))) {
		snprintf(err, err_len, "'%s' is not a rate (a number in %s, or with a unit: "
			 "90Gb for 10^9 bits/s, 11.5GB for 10^9 bytes/s, 1000MiB for 2^20 "
			 "bytes/s)", text ? text : "", rk_bw_unit_name(default_unit));
		return -EINVAL;
	}
	v = rk_bw_bytes(v, unit);
	ret = check_range(text, v, RK_RATE_MAX, err, err_len);
	if (ret == -ERANGE && v > 0)
		snprintf(err, err_len, "'%s' is above the maximum %.0f Gb/s", text,
			 rk_bw_in(RK_RATE_MAX, RK_BW_GBIT));
	if (ret)
		return ret;
	*bytes_per_s_p = v;
	return 0;
}

double rk_link_pct(double bytes_per_s, double link_gbps)
{
	if (!(link_gbps > 0))
		return -1;
	return bytes_per_s * 800.0 / (link_gbps * 1e9); /* one rounding: 90% stays 90 */
}

int rk_parse_u64(const char *text, uint64_t min, uint64_t max, unsigned int suffix_base,
		 uint64_t *out, char *err, size_t err_len)
{
	unsigned long long v;
	uint64_t mult = 1;
	const char *digits = text;
	int base = 10;
	char *end;

	if (!text || !*text || isspace((unsigned char)text[0]) || text[0] == '-' ||
	    text[0] == '+') {
		snprintf(err, err_len, "'%s' is not a non-negative number", text ? text : "");
		return -EINVAL;
	}
	/* Decimal, or hex with 0x; never octal: "010" is ten. strtoull would
	 * also take a sign or spaces after "0x": only digits may follow. */
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		digits = text + 2;
		base = 16;
	}
	if (base == 16 ? !isxdigit((unsigned char)digits[0]) : !isdigit((unsigned char)digits[0])) {
		snprintf(err, err_len, "'%s' is not a number", text);
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(digits, &end, base);
	if (end == digits) {
		snprintf(err, err_len, "'%s' is not a number", text);
		return -EINVAL;
	}
	if (errno == ERANGE) {
		snprintf(err, err_len, "'%s' is too large", text);
		return -ERANGE;
	}
	if (*end && suffix_base) {
		switch (*end) {
		case 'k': case 'K': mult = suffix_base; break;
		case 'm': case 'M': mult = (uint64_t)suffix_base * suffix_base; break;
		case 'g': case 'G': mult = (uint64_t)suffix_base * suffix_base * suffix_base; break;
		default: mult = 0; break;
		}
		if (mult) {
			end++;
			/* "4KiB"/"4kB" read naturally; accept them with binary suffixes. */
			if (suffix_base == 1024 && (*end == 'i' || *end == 'I') && end[1] == 'B')
				end += 2;
			else if (*end == 'B' || (suffix_base == 1024 && *end == 'b'))
				end++;
		}
	}
	if (*end || !mult) {
		snprintf(err, err_len, "'%s' is not a number%s", text,
			 suffix_base == 1024 ? " (examples: 4096, 0x1000, 4k, 1M)" :
			 suffix_base ? " (examples: 1000, 10k, 1M)" : "");
		return -EINVAL;
	}
	if (v && mult > UINT64_MAX / v) {
		snprintf(err, err_len, "'%s' is too large", text);
		return -ERANGE;
	}
	v *= mult;
	if (v < min || v > max) {
		snprintf(err, err_len, "%s is outside the range %" PRIu64 "..%" PRIu64, text, min,
			 max);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int rk_parse_i64(const char *text, int64_t min, int64_t max, int64_t *out, char *err,
		 size_t err_len)
{
	long long v;
	char *end;

	if (!text || !*text || isspace((unsigned char)text[0])) {
		snprintf(err, err_len, "'%s' is not a number", text ? text : "");
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || *end) {
		snprintf(err, err_len, "'%s' is not a number", text);
		return -EINVAL;
	}
	if (errno == ERANGE || v < min || v > max) {
		snprintf(err, err_len, "%s is outside the range %" PRId64 "..%" PRId64, text, min,
			 max);
		return -ERANGE;
	}
	*out = v;
	return 0;
}
