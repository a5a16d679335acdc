/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Data patterns: position-dependent, so shifts and stale data show. */
#include <ctype.h>
#include <string.h>

#include <rdmakit/pattern.h>

uint8_t rk_pattern_byte(size_t off, uint32_t seed)
{
	uint32_t x = (uint32_t)off * 2654435761u + seed * 40503u + (uint32_t)(off >> 16);

	/* Mix all bits down: seeds must not collide on whole buffers. */
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return (uint8_t)x;
}

void rk_pattern_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = rk_pattern_byte(i, seed);
}

ssize_t rk_pattern_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != rk_pattern_byte(i, seed))
			return (ssize_t)i;
	return -1;
}

ssize_t rk_buf_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;

	if (!memcmp(a, b, len))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (ssize_t)i;
	return -1;
}

void rk_text_fill(void *buf, size_t len, const char *prefix, uint32_t seed)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = prefix ? strlen(prefix) : 0;
	char *p = buf;

	if (n > len)
		n = len;
	memcpy(p, prefix, n);
	for (size_t i = n; i < len; i++)
		p[i] = alphabet[rk_pattern_byte(i, seed) % (sizeof(alphabet) - 1)];
}

const char *rk_preview(const void *buf, size_t len, char *out, size_t out_len)
{
	const unsigned char *p = buf;
	size_t n, i;

	if (!out_len)
		return out;
	n = len < out_len - 1 ? len : out_len - 1;
	if (n < len && n >= 3)
		n -= 3; /* room for "..." */
	for (i = 0; i < n; i++)
		out[i] = isprint(p[i]) ? (char)p[i] : '.';
	if (n < len && out_len >= 4)
		memcpy(out + i, "...", 3), i += 3;
	out[i] = '\0';
	return out;
}
