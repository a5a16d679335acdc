/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The remote-memory protocol's pure parts: request checks, the region SEND,
 * reject decoding, and the CIDR blocks of --allow. No device needed. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/memserver.h>
#include <rdmakit/wire.h>

#include "base/bytes.h"

static int cidr_fail(const char *text, const char *what, char *why, size_t why_len)
{
	snprintf(why, why_len, "'%s': %s", text, what);
	return -EINVAL;
}

static int parse_prefix(const char *text, const char *p, unsigned int max, unsigned int *out,
			char *why, size_t why_len)
{
	char *end;
	unsigned long v;

	if (*p < '0' || *p > '9')
		return cidr_fail(text, "the prefix length is not a number", why, why_len);
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || *end)
		return cidr_fail(text, "the prefix length is not a number", why, why_len);
	if (v > max) {
		snprintf(why, why_len, "'%s': the prefix length %lu is above %u", text, v, max);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int rk_cidr_parse(const char *text, struct rk_cidr *cidr_p, char *why, size_t why_len)
{
	struct rk_cidr c;
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text), bytes;
	unsigned int max;
	int ret;

	memset(&c, 0, sizeof(c));
	if (n == 0 || n >= sizeof(host))
		return cidr_fail(text, "not an IPv4 or IPv6 address", why, why_len);
	memcpy(host, text, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, c.addr) == 1)
		c.family = AF_INET;
	else if (inet_pton(AF_INET6, host, c.addr) == 1)
		c.family = AF_INET6;
	else
		return cidr_fail(text, "not an IPv4 or IPv6 address", why, why_len);
	max = c.family == AF_INET ? 32 : 128;
	c.prefix = max;
	if (slash) {
		ret = parse_prefix(text, slash + 1, max, &c.prefix, why, why_len);
		if (ret)
			return ret;
	}
	bytes = max / 8;
	for (size_t i = 0; i < bytes; i++) {
		unsigned int bit0 = (unsigned int)i * 8;
		uint8_t keep = bit0 >= c.prefix ? 0 :
			       c.prefix - bit0 >= 8 ? 0xff :
						      (uint8_t)(0xff << (8 - (c.prefix - bit0)));

		if (c.addr[i] & (uint8_t)~keep)
			return cidr_fail(text, "address bits are set beyond the prefix length", why,
					 why_len);
	}
	*cidr_p = c;
	return 0;
}

static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned int prefix)
{
	unsigned int full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, full))
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool rk_cidr_match(const struct rk_cidr *cidr, const struct sockaddr *sa)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const uint8_t *a;
	int family;

	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		family = AF_INET;
	} else if (sa->sa_family == AF_INET6) {
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		family = AF_INET6;
		if (cidr->family == AF_INET && !memcmp(a, mapped, sizeof(mapped))) {
			a += 12;
			family = AF_INET;
		}
	} else {
		return false;
	}
	return family == cidr->family && prefix_eq(a, cidr->addr, cidr->prefix);
}

const char *rk_cidr_str(const struct rk_cidr *cidr, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (!inet_ntop(cidr->family, cidr->addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, len, "%s/%u", ip, cidr->prefix);
	return buf;
}

/* The fields, in the order memproto.h lays them out. */
static int check_fields(const uint8_t *p, uint64_t max_size, struct rk_mem_request *r, char *why,
			size_t why_len)
{
	uint16_t flags = get_u16(p + 10);
	uint32_t reserved = get_u32(p + 12);

	r->queue = get_u16(p + 6);
	r->queues = get_u16(p + 8);
	r->session = get_u64(p + 16);
	r->size = get_u64(p + 24);
	r->flags = flags;
	if (flags & ~RK_MEM_REQ_SENDS_FIRST) {
		snprintf(why, why_len, "flags 0x%x: only 0x%x (the client sends first) is defined",
			 flags, RK_MEM_REQ_SENDS_FIRST);
		return -EBADMSG;
	}
	if (reserved) {
		snprintf(why, why_len, "reserved is 0x%x, expected 0", reserved);
		return -EBADMSG;
	}
	if (r->queues < 1 || r->queues > RK_MEM_MAX_QUEUES) {
		snprintf(why, why_len, "queues %u is outside 1..%d", r->queues, RK_MEM_MAX_QUEUES);
		return -EINVAL;
	}
	if (r->queue >= r->queues) {
		snprintf(why, why_len, "queue %u is not below queues %u", r->queue, r->queues);
		return -EINVAL;
	}
	if (!r->session && r->queue) {
		snprintf(why, why_len, "queue %u asks for a new session (session 0): only queue 0 "
				       "may", r->queue);
		return -EINVAL;
	}
	if (!r->size) {
		snprintf(why, why_len, "size 0: a region needs at least %u bytes", RK_MEM_BLOCK);
		return -EINVAL;
	}
	if (r->size % RK_MEM_BLOCK) {
		snprintf(why, why_len, "size %llu is not a multiple of %u",
			 (unsigned long long)r->size, RK_MEM_BLOCK);
		return -EINVAL;
	}
	if (max_size && r->size > max_size) {
		snprintf(why, why_len, "size %llu is above the server's --max-size %llu",
			 (unsigned long long)r->size, (unsigned long long)max_size);
		return -ENOSPC;
	}
	return 0;
}

int rk_mem_request_check(const void *data, size_t len, uint64_t max_size,
			 struct rk_mem_request *req_p, char *why, size_t why_len)
{
	const uint8_t *p = data;
	struct rk_mem_request r;
	uint32_t magic;
	int ret;

	if (!data || len < RK_MEM_REQ_LEN) {
		snprintf(why, why_len, "private data is %zu bytes, expected %d", data ? len : 0,
			 RK_MEM_REQ_LEN);
		return -EBADMSG;
	}
	magic = get_u32(p);
	if (magic != RK_MEM_MAGIC) {
		snprintf(why, why_len, "magic 0x%08x is not RKMS (0x%08x)%s", magic, RK_MEM_MAGIC,
			 magic == RK_WIRE_MAGIC ?
				 ": an rdmakit rc, ping or bench client, not rkblk" : "");
		return -EBADMSG;
	}
	memset(&r, 0, sizeof(r));
	r.version = get_u16(p + 4);
	if (r.version != RK_MEM_VERSION) {
		snprintf(why, why_len, "protocol version %u, this server speaks %d", r.version,
			 RK_MEM_VERSION);
		return -EPROTONOSUPPORT;
	}
	ret = check_fields(p, max_size, &r, why, why_len);
	if (ret)
		return ret;
	*req_p = r;
	return 0;
}

void rk_mem_region_encode(uint16_t queue, uint64_t session, uint64_t addr, uint64_t length,
			  uint32_t rkey, uint32_t flags, struct rk_mem_region *out)
{
	memset(out, 0, sizeof(*out));
	out->magic = htobe32(RK_MEM_MAGIC);
	out->version = htobe16(RK_MEM_VERSION);
	out->queue = htobe16(queue);
	out->session = htobe64(session);
	out->addr = htobe64(addr);
	out->length = htobe64(length);
	out->rkey = htobe32(rkey);
	out->flags = htobe32(flags);
}

int rk_mem_reject_decode(const void *data, size_t len, int *code_p, char *text, size_t text_len)
{
	struct rk_msg msg;
	char why[160];

	if (!data || len < RK_WIRE_ERROR_LEN)
		return -EBADMSG;
	if (rk_wire_decode(data, RK_WIRE_ERROR_LEN, &msg, why, sizeof(why)) ||
	    msg.type != RK_MSG_ERROR)
		return -EBADMSG;
	*code_p = msg.u.error.code;
	snprintf(text, text_len, "%.*s", RK_WIRE_ERROR_TEXT, msg.u.error.text);
	return 0;
}
