/* Ping-pong engines' pure logic: RTT statistics, ibv_*_pingpong's text
 * exchange, rping's buffer advertisement and data pattern. */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/ping.h>

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int rk_rtt_stats_compute(const double *samples, size_t n, struct rk_rtt_stats *stats_p)
{
	struct rk_rtt_stats st = {.n = n};
	double *s, sum = 0;
	size_t rank;

	if (!samples || !n || !stats_p)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	st.min = s[0];
	st.max = s[n - 1];
	st.mean = sum / (double)n;
	st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	/* Nearest rank: ceil(0.99 n), counted from 1. */
	rank = (99 * n + 99) / 100;
	st.p99 = s[rank - 1];
	free(s);
	*stats_p = st;
	return 0;
}

/* ---- ibv_*_pingpong ---- */

int rk_pp_encode(const struct rk_pp_dest *d, char *buf, size_t buf_len)
{
	int n;

	if (!d || !buf || buf_len < RK_PP_MSG_LEN || d->qpn > 0xffffff || d->psn > 0xffffff)
		return -EINVAL;
	n = snprintf(buf, buf_len, "%04x:%06x:%06x:", d->lid, d->qpn, d->psn);
	for (int i = 0; i < 16; i++)
		n += snprintf(buf + n, buf_len - (size_t)n, "%02x", d->gid.raw[i]);
	return n + 1 == RK_PP_MSG_LEN ? 0 : -EINVAL;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Read ndigits hex digits at p into *v; the offset of the first bad one, or -1. */
static int read_hex(const char *p, int ndigits, uint32_t *v)
{
	uint32_t x = 0;

	for (int i = 0; i < ndigits; i++) {
		int d = hex_val(p[i]);

		if (d < 0)
			return i;
		x = x << 4 | (uint32_t)d;
	}
	*v = x;
	return -1;
}

static const char *printable(char c, char *buf, size_t len)
{
	if (isprint((unsigned char)c))
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned char)c);
	return buf;
}

int rk_pp_parse(const char *buf, size_t n, struct rk_pp_dest *dest_p, char *why, size_t why_len)
{
	static const struct {
		const char *name;
		int at, digits;
	} fields[] = {{"LID", 0, 4}, {"QPN", 5, 6}, {"PSN", 12, 6}};
	struct rk_pp_dest d;
	uint32_t v[3];
	char c[16];

	if (!buf || !dest_p)
		return -EINVAL;
	if (n != RK_PP_MSG_LEN) {
		snprintf(why, why_len, "%zu bytes, not the %d of \"LID:QPN:PSN:GID\"", n,
			 RK_PP_MSG_LEN);
		return -EBADMSG;
	}
	for (int f = 0; f < 3; f++) {
		int bad = read_hex(buf + fields[f].at, fields[f].digits, &v[f]);
		int sep = fields[f].at + fields[f].digits;

		if (bad >= 0) {
			snprintf(why, why_len, "%s: %s at offset %d is not a hex digit",
				 fields[f].name, printable(buf[fields[f].at + bad], c, sizeof(c)),
				 fields[f].at + bad);
			return -EBADMSG;
		}
		if (buf[sep] != ':') {
			snprintf(why, why_len, "%s at offset %d where ':' belongs after the %s",
				 printable(buf[sep], c, sizeof(c)), sep, fields[f].name);
			return -EBADMSG;
		}
	}
	for (int i = 0; i < 16; i++) {
		uint32_t b;
		int bad = read_hex(buf + 19 + 2 * i, 2, &b);

		if (bad >= 0) {
			snprintf(why, why_len, "GID: %s at offset %d is not a hex digit",
				 printable(buf[19 + 2 * i + bad], c, sizeof(c)), 19 + 2 * i + bad);
			return -EBADMSG;
		}
		d.gid.raw[i] = (uint8_t)b;
	}
	if (buf[RK_PP_MSG_LEN - 1] != '\0') {
		snprintf(why, why_len, "%s at offset %d where the message ends with NUL",
			 printable(buf[RK_PP_MSG_LEN - 1], c, sizeof(c)), RK_PP_MSG_LEN - 1);
		return -EBADMSG;
	}
	d.lid = (uint16_t)v[0];
	d.qpn = v[1];
	d.psn = v[2];
	*dest_p = d;
	return 0;
}

/* ---- rping ---- */

void rk_rping_info_encode(const struct rk_rping_info *info, uint8_t out[RK_RPING_INFO_LEN])
{
	uint64_t a = htobe64(info->addr);
	uint32_t k = htobe32(info->rkey), s = htobe32(info->size);

	memcpy(out, &a, 8);
	memcpy(out + 8, &k, 4);
	memcpy(out + 12, &s, 4);
}

int rk_rping_info_decode(const uint8_t *buf, size_t n, struct rk_rping_info *info_p, char *why,
			 size_t why_len)
{
	uint64_t a;
	uint32_t k, s;

	if (!buf || !info_p)
		return -EINVAL;
	if (n != RK_RPING_INFO_LEN) {
		snprintf(why, why_len, "%zu bytes, not rping's %d-byte {addr, rkey, size}", n,
			 RK_RPING_INFO_LEN);
		return -EBADMSG;
	}
	memcpy(&a, buf, 8);
	memcpy(&k, buf + 8, 4);
	memcpy(&s, buf + 12, 4);
	info_p->addr = be64toh(a);
	info_p->rkey = be32toh(k);
	info_p->size = be32toh(s);
	return 0;
}

#define RPING_FIRST 'A' /* 65 */
#define RPING_LAST 'z'	/* 122 */
#define RPING_SPAN (RPING_LAST - RPING_FIRST + 1)

/* The byte rping's client puts at offset off of ping number ping, given the
 * length of its "rdma-ping-N: " prefix (hdr). */
static uint8_t rping_byte(size_t off, size_t size, uint32_t ping, const char *hdr, size_t hdr_len)
{
	if (off == size - 1)
		return 0;
	if (off < hdr_len)
		return (uint8_t)hdr[off];
	return (uint8_t)(RPING_FIRST + (ping % RPING_SPAN + (off - hdr_len)) % RPING_SPAN);
}

void rk_rping_fill(void *buf, size_t size, uint32_t ping)
{
	char hdr[32];
	size_t len;
	uint8_t *p = buf;

	if (!size)
		return;
	len = (size_t)snprintf(hdr, sizeof(hdr), "rdma-ping-%u: ", ping);
	for (size_t i = 0; i < size; i++)
		p[i] = rping_byte(i, size, ping, hdr, len);
}

ssize_t rk_rping_check(const void *buf, size_t size, uint32_t ping)
{
	const uint8_t *p = buf;
	char hdr[32];
	size_t len;

	len = (size_t)snprintf(hdr, sizeof(hdr), "rdma-ping-%u: ", ping);
	for (size_t i = 0; i < size; i++)
		if (p[i] != rping_byte(i, size, ping, hdr, len))
			return (ssize_t)i;
	return -1;
}
