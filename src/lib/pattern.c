/* Data patterns: position-dependent, so shifts and stale data show. */
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
