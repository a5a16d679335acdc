/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: data patterns for checking that bytes arrived intact. */
#ifndef RDMAKIT_PATTERN_H
#define RDMAKIT_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Fill buf with a pattern that depends on seed and on each byte's offset, so
 * that shifted, truncated or stale data does not match. */
void rk_pattern_fill(void *buf, size_t len, uint32_t seed);

/* The byte rk_pattern_fill() puts at offset off. */
uint8_t rk_pattern_byte(size_t off, uint32_t seed);

/* Offset of the first byte of buf that differs from the pattern, or -1 when
 * all len bytes match. */
ssize_t rk_pattern_check(const void *buf, size_t len, uint32_t seed);

/* Fill buf with readable text: prefix (cut to len), then printable
 * characters that depend on seed and offset, so a peer can regenerate and
 * check every byte while people can read a preview. */
void rk_text_fill(void *buf, size_t len, const char *prefix, uint32_t seed);

/* A printable preview of the first bytes of buf into out: non-printable bytes
 * as '.', "..." when cut. */
const char *rk_preview(const void *buf, size_t len, char *out, size_t out_len);

/* Offset of the first differing byte of a and b, or -1 when equal. */
ssize_t rk_buf_diff(const void *a, const void *b, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
