/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Exchange messages: fixed layouts in network byte order, checked field by field. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/wire.h>
#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/qp.h>
#include <rdmakit/ops.h>

#include "base/bytes.h"

/* The buffer fields: 40 bytes, behind the header in a CM_HELLO. */
#define WIRE_BUF_LEN 40
#define CM_HELLO_LEN RK_WIRE_CM_HELLO_LEN
_Static_assert(RK_WIRE_HDR_LEN + WIRE_BUF_LEN == RK_WIRE_CM_HELLO_LEN, "CM_HELLO layout");

/* Where the buffer fields start in a HELLO and in a CM_HELLO. */
#define HELLO_BUF_OFF	 52
#define CM_HELLO_BUF_OFF RK_WIRE_HDR_LEN
/* Where a BENCH_SETUP's fields follow its endpoint. */
#define SETUP_BUF_OFF 52

#define WHY(...)                                                                                   \
	do {                                                                                       \
		if (why)                                                                           \
			snprintf(why, why_len, __VA_ARGS__);                                       \
	} while (0)

/* Locale-independent: the text crosses machines. */
static bool is_print(uint8_t c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* Every message type: its name, and its length on the wire (header
 * included). A type without a name is none of rdmakit's. */
static const struct {
	const char *name;
	size_t len;
} msg_types[] = {
	[RK_MSG_HELLO] = {"HELLO", RK_WIRE_HELLO_LEN},
	[RK_MSG_CM_HELLO] = {"CM_HELLO", CM_HELLO_LEN},
	[RK_MSG_SYNC] = {"SYNC", RK_WIRE_SYNC_LEN},
	[RK_MSG_ERROR] = {"ERROR", RK_WIRE_ERROR_LEN},
	[RK_MSG_AUTH_BEGIN] = {"AUTH_BEGIN", RK_WIRE_AUTH_LEN},
	[RK_MSG_AUTH_CHALLENGE] = {"AUTH_CHALLENGE", RK_WIRE_AUTH_LEN},
	[RK_MSG_AUTH_RESPONSE] = {"AUTH_RESPONSE", RK_WIRE_AUTH_LEN},
	[RK_MSG_AUTH_OK] = {"AUTH_OK", RK_WIRE_AUTH_LEN},
	[RK_MSG_BENCH_SETUP] = {"BENCH_SETUP", RK_WIRE_BENCH_SETUP_LEN},
	[RK_MSG_BENCH_ROUND] = {"BENCH_ROUND", RK_WIRE_BENCH_ROUND_LEN},
	[RK_MSG_BENCH_RESULT] = {"BENCH_RESULT", RK_WIRE_BENCH_RESULT_LEN},
	[RK_MSG_BENCH_FIN] = {"BENCH_FIN", RK_WIRE_BENCH_FIN_LEN},
};

static bool known_type(enum rk_msg_type type)
{
	return (unsigned int)type < sizeof(msg_types) / sizeof(msg_types[0]) &&
	       msg_types[type].name;
}

size_t rk_wire_len(enum rk_msg_type type)
{
	return known_type(type) ? msg_types[type].len : 0;
}

const char *rk_msg_type_str(enum rk_msg_type type)
{
	return known_type(type) ? msg_types[type].name : "UNKNOWN";
}

const char *rk_wire_op_command(uint32_t op)
{
	if ((op >= 1 && op <= RK_OP_CMP_SWAP + 1) || op == RK_WIRE_OP_RC_ALL)
		return "rc";
	if (op == RK_WIRE_OP_PING)
		return "ping";
	if (op == RK_WIRE_OP_BENCH || op == 0)
		return "bench";
	if (op == RK_WIRE_OP_UD)
		return "ud";
	if (op == RK_WIRE_OP_DOCTOR)
		return "doctor";
	return NULL;
}

void rk_wire_op_refusal(const char *command, uint32_t op, char *why, size_t why_len)
{
	const char *theirs = rk_wire_op_command(op);

	if (theirs)
		snprintf(why, why_len, "this is an rdmakit %s server; the client is rdmakit %s "
			 "(request code 0x%x)", command, theirs, op);
	else
		snprintf(why, why_len, "this is an rdmakit %s server; request code 0x%x is no "
			 "rdmakit command's", command, op);
}

/* Field checks shared by encode (why NULL) and decode: what one side may
 * send, the other accepts. */
static bool endpoint_ok(enum rk_msg_type type, const struct rk_endpoint *ep, char *why,
			size_t why_len)
{
	const char *name = rk_msg_type_str(type);

	if ((unsigned int)ep->transport > RK_UD) {
		WHY("%s: transport %u is not RC (0), UC (1) or UD (2)", name,
		    (unsigned int)ep->transport);
		return false;
	}
	if ((unsigned int)ep->gid_type > RK_GID_ROCE_V2) {
		WHY("%s: gid_type %u is not IB (0), RoCE v1 (1) or RoCE v2 (2)", name,
		    (unsigned int)ep->gid_type);
		return false;
	}
	if (!rk_mtu_bytes(ep->mtu)) {
		WHY("%s: mtu %u is not an MTU (1..5 for 256..4096 bytes)", name,
		    (unsigned int)ep->mtu);
		return false;
	}
	if (ep->qpn > 0xffffff) {
		WHY("%s: qpn 0x%x does not fit in 24 bits", name, ep->qpn);
		return false;
	}
	if (ep->psn > 0xffffff) {
		WHY("%s: psn 0x%x does not fit in 24 bits", name, ep->psn);
		return false;
	}
	return true;
}

static bool buf_ok(enum rk_msg_type type, const struct rk_wire_buf *b, char *why, size_t why_len)
{
	if (b->flags & ~(uint32_t)RK_BUF_FLAGS_ALL) {
		WHY("%s: buf_flags 0x%x has unknown bits 0x%x", rk_msg_type_str(type), b->flags,
		    b->flags & ~(uint32_t)RK_BUF_FLAGS_ALL);
		return false;
	}
	if ((b->flags & RK_BUF_MTU_MASK) >> RK_BUF_MTU_SHIFT > IBV_MTU_4096) {
		WHY("%s: buf_flags 0x%x: MTU code %u is not 1-5 (256-4096 bytes)",
		    rk_msg_type_str(type), b->flags, (b->flags & RK_BUF_MTU_MASK) >> RK_BUF_MTU_SHIFT);
		return false;
	}
	return true;
}

static void put_buf(uint8_t *p, const struct rk_wire_buf *b)
{
	put_u64(p, b->addr);
	put_u64(p + 8, b->len);
	put_u32(p + 16, b->rkey);
	put_u32(p + 20, b->flags);
	put_u32(p + 24, b->op);
	put_u32(p + 28, b->size);
	put_u64(p + 32, b->offset);
}

static void get_buf(const uint8_t *p, struct rk_wire_buf *b)
{
	b->addr = get_u64(p);
	b->len = get_u64(p + 8);
	b->rkey = get_u32(p + 16);
	b->flags = get_u32(p + 20);
	b->op = get_u32(p + 24);
	b->size = get_u32(p + 28);
	b->offset = get_u64(p + 32);
}

/* The endpoint fields of a HELLO or BENCH_SETUP (bytes 12..51 of p, the
 * message). */
static void put_endpoint(uint8_t *p, const struct rk_endpoint *ep)
{
	p[12] = (uint8_t)ep->transport;
	p[13] = ep->link_layer;
	p[14] = (uint8_t)ep->gid_type;
	p[15] = (uint8_t)ep->mtu;
	put_u16(p + 16, ep->lid);
	put_u16(p + 18, 0);
	put_u32(p + 20, ep->qpn);
	put_u32(p + 24, ep->psn);
	put_u32(p + 28, ep->qkey);
	put_u32(p + 32, ep->gid_index);
	memcpy(p + 36, ep->gid.raw, sizeof(ep->gid.raw));
}

static void get_endpoint(const uint8_t *p, struct rk_endpoint *ep)
{
	ep->transport = (enum rk_transport)p[12];
	ep->link_layer = p[13];
	ep->gid_type = (enum rk_gid_type)p[14];
	ep->mtu = (enum ibv_mtu)p[15];
	ep->lid = get_u16(p + 16);
	ep->qpn = get_u32(p + 20);
	ep->psn = get_u32(p + 24);
	ep->qkey = get_u32(p + 28);
	ep->gid_index = get_u32(p + 32);
	memcpy(ep->gid.raw, p + 36, sizeof(ep->gid.raw));
}

/* The endpoint, then its reserved bytes 18-19, which must be 0. */
static bool endpoint_in(enum rk_msg_type type, const uint8_t *p, struct rk_endpoint *ep,
			char *why, size_t why_len)
{
	uint16_t reserved = get_u16(p + 18);

	get_endpoint(p, ep);
	if (!endpoint_ok(type, ep, why, why_len))
		return false;
	if (reserved) {
		WHY("%s: reserved bytes 18-19 are 0x%04x, must be 0", rk_msg_type_str(type),
		    reserved);
		return false;
	}
	return true;
}

/* ---- the benchmark's messages ---- */

/* A count field of msg in 1..max, else false with why: "MSG: name V is
 * outside 1..max". */
static bool count_ok(const char *msg, const char *name, uint32_t v, uint32_t max, char *why,
		     size_t why_len)
{
	if (v >= 1 && v <= max)
		return true;
	WHY("%s: %s %u is outside 1..%u", msg, name, v, max);
	return false;
}

/* The iterations of msg: 64 bits on the wire, a 32-bit count. */
static bool iters_ok(const char *msg, uint64_t iters, char *why, size_t why_len)
{
	if (iters <= UINT32_MAX)
		return true;
	WHY("%s: iters %" PRIu64 " is above %u", msg, iters, UINT32_MAX);
	return false;
}

static bool bench_setup_ok(const struct rk_wire_bench_setup *s, char *why, size_t why_len)
{
	if (!endpoint_ok(RK_MSG_BENCH_SETUP, &s->ep, why, why_len))
		return false;
	if (s->test > RK_BENCH_CMP_SWAP) {
		WHY("BENCH_SETUP: test %u is not send (0) .. cmp-swap (%d)", s->test,
		    RK_BENCH_CMP_SWAP);
		return false;
	}
	if (s->mode > RK_BENCH_LAT) {
		WHY("BENCH_SETUP: mode %u is not bw (0) or lat (1)", s->mode);
		return false;
	}
	if (s->transport > RK_UD) {
		WHY("BENCH_SETUP: transport %u is not RC (0), UC (1) or UD (2)", s->transport);
		return false;
	}
	if (s->bidir > 1) {
		WHY("BENCH_SETUP: bidir %u is not 0 or 1", s->bidir);
		return false;
	}
	if (!count_ok("BENCH_SETUP", "qps", s->qps, RK_BENCH_MAX_QPS, why, why_len))
		return false;
	if (s->qp >= s->qps) {
		WHY("BENCH_SETUP: qp %u is not below qps %u", s->qp, s->qps);
		return false;
	}
	if (!count_ok("BENCH_SETUP", "max_size", s->max_size, RK_BENCH_MAX_SIZE, why, why_len) ||
	    !count_ok("BENCH_SETUP", "threads", s->threads, RK_BENCH_MAX_THREADS, why, why_len))
		return false;
	if (s->nsizes < 1) {
		WHY("BENCH_SETUP: nsizes is 0");
		return false;
	}
	if (s->min_size < 1 || s->min_size > s->max_size) {
		WHY("BENCH_SETUP: min_size %u is outside 1..max_size %u", s->min_size, s->max_size);
		return false;
	}
	return iters_ok("BENCH_SETUP", s->iters, why, why_len);
}

static bool bench_round_ok(const struct rk_wire_bench_round *r, char *why, size_t why_len)
{
	return count_ok("BENCH_ROUND", "size", r->size, RK_BENCH_MAX_SIZE, why, why_len) &&
	       iters_ok("BENCH_ROUND", r->iters, why, why_len);
}

static bool bench_result_ok(const struct rk_wire_bench_result *r, char *why, size_t why_len)
{
	if (r->qp >= RK_BENCH_MAX_QPS) {
		WHY("BENCH_RESULT: qp %u is not below %d", r->qp, RK_BENCH_MAX_QPS);
		return false;
	}
	return true;
}

/* A field of a message's layout: its offset, its width in bytes (1, 2, 4
 * or 8) and the struct member it is. One table per message serves encoding
 * and decoding both, so the two cannot drift apart. */
struct wire_field {
	uint8_t off, width;
	void *val;
};

#define WIRE_FIELD(o, member) {(o), sizeof(member), &(member)}
#define BENCH_MAX_FIELDS 16

static void put_fields(uint8_t *p, const struct wire_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *d = p + f[i].off;

		switch (f[i].width) {
		case 1: *d = *(const uint8_t *)f[i].val; break;
		case 2: put_u16(d, *(const uint16_t *)f[i].val); break;
		case 4: put_u32(d, *(const uint32_t *)f[i].val); break;
		default: put_u64(d, *(const uint64_t *)f[i].val); break;
		}
	}
}

static void get_fields(const uint8_t *p, const struct wire_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *s = p + f[i].off;

		switch (f[i].width) {
		case 1: *(uint8_t *)f[i].val = *s; break;
		case 2: *(uint16_t *)f[i].val = get_u16(s); break;
		case 4: *(uint32_t *)f[i].val = get_u32(s); break;
		default: *(uint64_t *)f[i].val = get_u64(s); break;
		}
	}
}

/* The layout of a bench message's fields into f (BENCH_MAX_FIELDS at
 * most); the count, 0 for a message with none. A BENCH_SETUP's endpoint,
 * bench_version and reserved bytes are apart. */
static size_t bench_layout(struct rk_msg *m, struct wire_field *f)
{
	struct rk_wire_bench_setup *s = &m->u.bench_setup;
	struct rk_wire_bench_round *r = &m->u.bench_round;
	struct rk_wire_bench_result *res = &m->u.bench_result;
	const struct wire_field setup[] = {
		WIRE_FIELD(SETUP_BUF_OFF, s->buf_addr), WIRE_FIELD(60, s->buf_len),
		WIRE_FIELD(68, s->rkey), WIRE_FIELD(72, s->max_size), WIRE_FIELD(78, s->test),
		WIRE_FIELD(79, s->mode), WIRE_FIELD(80, s->transport), WIRE_FIELD(81, s->bidir),
		WIRE_FIELD(82, s->qps), WIRE_FIELD(84, s->qp), WIRE_FIELD(86, s->threads),
		WIRE_FIELD(88, s->nsizes), WIRE_FIELD(92, s->min_size),
		WIRE_FIELD(96, s->sizes_hash), WIRE_FIELD(100, s->duration_ms),
		WIRE_FIELD(104, s->iters),
	};
	const struct wire_field round[] = {
		WIRE_FIELD(12, r->round), WIRE_FIELD(16, r->size), WIRE_FIELD(20, r->duration_ms),
		WIRE_FIELD(24, r->iters),
	};
	const struct wire_field result[] = {
		WIRE_FIELD(12, res->round), WIRE_FIELD(16, res->qp),
		WIRE_FIELD(20, res->elapsed_ns), WIRE_FIELD(28, res->completed),
		WIRE_FIELD(36, res->received),
	};
	_Static_assert(sizeof(setup) / sizeof(setup[0]) <= BENCH_MAX_FIELDS, "bench fields");

	switch (m->type) {
	case RK_MSG_BENCH_SETUP:
		memcpy(f, setup, sizeof(setup));
		return sizeof(setup) / sizeof(setup[0]);
	case RK_MSG_BENCH_ROUND:
		memcpy(f, round, sizeof(round));
		return sizeof(round) / sizeof(round[0]);
	case RK_MSG_BENCH_RESULT:
		memcpy(f, result, sizeof(result));
		return sizeof(result) / sizeof(result[0]);
	default:
		return 0;
	}
}

/* A bench message's fields behind the header. */
static void put_bench(uint8_t *p, const struct rk_msg *msg)
{
	struct wire_field f[BENCH_MAX_FIELDS];
	struct rk_msg m = *msg;
	size_t n = bench_layout(&m, f);

	put_fields(p, f, n);
	if (m.type == RK_MSG_BENCH_SETUP) {
		put_endpoint(p, &m.u.bench_setup.ep);
		put_u16(p + 76, RK_WIRE_BENCH_VERSION);
	}
}

/* A BENCH_SETUP's endpoint, bench_version and reserved bytes (its other
 * fields already read), each checked. */
static int get_bench_setup(const uint8_t *p, struct rk_msg *m, char *why, size_t why_len)
{
	uint16_t reserved = get_u16(p + 90);

	if (!endpoint_in(RK_MSG_BENCH_SETUP, p, &m->u.bench_setup.ep, why, why_len))
		return -EBADMSG;
	if (reserved) {
		WHY("BENCH_SETUP: reserved bytes 90-91 are 0x%04x, must be 0", reserved);
		return -EBADMSG;
	}
	return bench_setup_ok(&m->u.bench_setup, why, why_len) ? 0 : -EBADMSG;
}

/* A bench message's fields, each checked: 0, -EBADMSG, or -EPROTONOSUPPORT
 * for a BENCH_SETUP of another bench_version. */
static int get_bench(const uint8_t *p, struct rk_msg *m, char *why, size_t why_len)
{
	struct wire_field f[BENCH_MAX_FIELDS];
	size_t n = bench_layout(m, f);

	get_fields(p, f, n);	/* a BENCH_SETUP's bench_version was checked first */
	switch (m->type) {
	case RK_MSG_BENCH_SETUP:
		return get_bench_setup(p, m, why, why_len);
	case RK_MSG_BENCH_ROUND:
		return bench_round_ok(&m->u.bench_round, why, why_len) ? 0 : -EBADMSG;
	case RK_MSG_BENCH_RESULT:
		return bench_result_ok(&m->u.bench_result, why, why_len) ? 0 : -EBADMSG;
	default:
		return 0;
	}
}

/* ---- encoding ---- */

void rk_msg_verror(struct rk_msg *msg, int code, const char *fmt, va_list ap)
{
	char *t = msg->u.error.text;
	const size_t max = sizeof(msg->u.error.text);
	int n;

	memset(msg, 0, sizeof(*msg));
	msg->type = RK_MSG_ERROR;
	msg->u.error.code = code;
	n = vsnprintf(t, max, fmt, ap);
	if (n >= (int)max)
		memcpy(t + max - 4, "...", 4);
}

void rk_msg_error(struct rk_msg *msg, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rk_msg_verror(msg, code, fmt, ap);
	va_end(ap);
}

/* ERROR text: longer text is cut to leave room for the NUL; control bytes
 * would make the peer refuse the message as garbled. The length to send, or
 * -EINVAL. */
static int error_text_len(const char *text)
{
	size_t len = strnlen(text, RK_WIRE_ERROR_TEXT);

	if (len == RK_WIRE_ERROR_TEXT)
		len--;
	for (size_t i = 0; i < len; i++)
		if (!is_print((uint8_t)text[i]))
			return -EINVAL;
	return (int)len;
}

/* What one side may send, the other accepts: the same checks as decoding. */
static bool encodable(const struct rk_msg *msg)
{
	switch (msg->type) {
	case RK_MSG_HELLO:
		return endpoint_ok(msg->type, &msg->u.hello.ep, NULL, 0) &&
		       buf_ok(msg->type, &msg->u.hello.buf, NULL, 0);
	case RK_MSG_CM_HELLO:
		return buf_ok(msg->type, &msg->u.cm, NULL, 0);
	case RK_MSG_ERROR:
		return error_text_len(msg->u.error.text) >= 0;
	case RK_MSG_BENCH_SETUP:
		return bench_setup_ok(&msg->u.bench_setup, NULL, 0);
	case RK_MSG_BENCH_ROUND:
		return bench_round_ok(&msg->u.bench_round, NULL, 0);
	case RK_MSG_BENCH_RESULT:
		return bench_result_ok(&msg->u.bench_result, NULL, 0);
	case RK_MSG_SYNC:
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
	case RK_MSG_BENCH_FIN:
		return true;
	}
	return false;
}

/* The fields behind the header. */
static void put_body(const struct rk_msg *msg, uint8_t *buf)
{
	switch (msg->type) {
	case RK_MSG_HELLO:
		put_endpoint(buf, &msg->u.hello.ep);
		put_buf(buf + HELLO_BUF_OFF, &msg->u.hello.buf);
		break;
	case RK_MSG_CM_HELLO:
		put_buf(buf + CM_HELLO_BUF_OFF, &msg->u.cm);
		break;
	case RK_MSG_SYNC:
		put_u32(buf + 12, msg->u.sync.step);
		put_u32(buf + 16, (uint32_t)msg->u.sync.status);
		break;
	case RK_MSG_ERROR:
		put_u32(buf + 12, (uint32_t)msg->u.error.code);
		memcpy(buf + 16, msg->u.error.text, (size_t)error_text_len(msg->u.error.text));
		break;
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		memcpy(buf + RK_WIRE_HDR_LEN, msg->u.auth.data, RK_WIRE_AUTH_DATA);
		break;
	case RK_MSG_BENCH_SETUP:
	case RK_MSG_BENCH_ROUND:
	case RK_MSG_BENCH_RESULT:
	case RK_MSG_BENCH_FIN:
		put_bench(buf, msg);
		break;
	}
}

int rk_wire_encode(const struct rk_msg *msg, uint8_t *buf, size_t buf_len)
{
	size_t len = rk_wire_len(msg->type);

	if (!len || !encodable(msg))
		return -EINVAL;
	if (buf_len < len)
		return -ENOSPC;

	memset(buf, 0, len);
	put_u32(buf, RK_WIRE_MAGIC);
	put_u16(buf + 4, RK_WIRE_VERSION);
	put_u16(buf + 6, (uint16_t)msg->type);
	put_u32(buf + 8, (uint32_t)len);
	put_body(msg, buf);
	return (int)len;
}

/* Why a wrong magic: the usual culprit is another tool's peer, and the
 * pingpong examples and perftest exchange their addresses as text. */
static void why_magic(const uint8_t *buf, uint32_t magic, char *why, size_t why_len)
{
	size_t text = 0;

	while (text < RK_WIRE_HDR_LEN && is_print(buf[text]))
		text++;
	if (text >= 4)
		WHY("magic 0x%08x is the text \"%.*s\": not an rdmakit peer (ibv_rc_pingpong and "
		    "perftest send their addresses as text)",
		    magic, (int)text, (const char *)buf);
	else
		WHY("magic 0x%08x, expected 0x%08x (\"RDKT\"): not an rdmakit peer", magic,
		    RK_WIRE_MAGIC);
}

int rk_wire_check_header(const uint8_t *buf, size_t n, size_t *len_p, char *why, size_t why_len)
{
	uint32_t magic, length;
	uint16_t version, type;
	size_t want;

	if (n < RK_WIRE_HDR_LEN) {
		WHY("truncated header: %zu of %d bytes", n, RK_WIRE_HDR_LEN);
		return -EBADMSG;
	}
	magic = get_u32(buf);
	version = get_u16(buf + 4);
	type = get_u16(buf + 6);
	length = get_u32(buf + 8);
	if (magic != RK_WIRE_MAGIC) {
		why_magic(buf, magic, why, why_len);
		return -EBADMSG;
	}
	/* Before the type: another version may have other types. */
	if (version != RK_WIRE_VERSION) {
		WHY("peer speaks exchange version %u, this side %d", version, RK_WIRE_VERSION);
		return -EPROTONOSUPPORT;
	}
	want = rk_wire_len((enum rk_msg_type)type);
	if (!want) {
		WHY("unknown message type %u", type);
		return -EBADMSG;
	}
	if (length > RK_WIRE_MAX_LEN) {
		WHY("oversized %s message: the header claims %u bytes, no message is longer than "
		    "%d",
		    rk_msg_type_str((enum rk_msg_type)type), length, RK_WIRE_MAX_LEN);
		return -EBADMSG;
	}
	/* Bench version 2's shorter BENCH_SETUP: decoded only as far as its
	 * bench_version, to be refused by name. */
	if (type == RK_MSG_BENCH_SETUP && length == RK_WIRE_BENCH_SETUP_V2_LEN)
		want = length;
	if (length != want) {
		WHY("a %s message is %zu bytes, this one claims %u",
		    rk_msg_type_str((enum rk_msg_type)type), want, length);
		return -EBADMSG;
	}
	*len_p = want;
	return 0;
}

/* NUL-terminated printable text, then only NUL padding. */
static bool error_text_ok(const uint8_t *p, char *why, size_t why_len)
{
	const uint8_t *nul = memchr(p, 0, RK_WIRE_ERROR_TEXT);

	if (!nul) {
		WHY("ERROR: garbled text: no NUL in its %d bytes", RK_WIRE_ERROR_TEXT);
		return false;
	}
	for (const uint8_t *c = p; c < nul; c++) {
		if (!is_print(*c)) {
			WHY("ERROR: garbled text: byte 0x%02x at offset %td is not printable", *c,
			    c - p);
			return false;
		}
	}
	for (const uint8_t *c = nul; c < p + RK_WIRE_ERROR_TEXT; c++) {
		if (*c) {
			WHY("ERROR: garbled text: byte 0x%02x at offset %td follows its NUL (the "
			    "rest must be NUL padding)",
			    *c, c - p);
			return false;
		}
	}
	return true;
}

/* HELLO's fields: the endpoint, the buffer, then the reserved bytes. */
static bool get_hello(const uint8_t *p, struct rk_msg *msg, char *why, size_t why_len)
{
	uint16_t reserved = get_u16(p + 18);

	get_endpoint(p, &msg->u.hello.ep);
	get_buf(p + HELLO_BUF_OFF, &msg->u.hello.buf);
	if (!endpoint_ok(msg->type, &msg->u.hello.ep, why, why_len) ||
	    !buf_ok(msg->type, &msg->u.hello.buf, why, why_len))
		return false;
	if (reserved) {
		WHY("HELLO: reserved bytes 18-19 are 0x%04x, must be 0", reserved);
		return false;
	}
	return true;
}

/* The fields behind a checked header, each checked: 0, -EBADMSG, or
 * -EPROTONOSUPPORT (a BENCH_SETUP of another bench_version). */
static int get_body(const uint8_t *buf, struct rk_msg *msg, char *why, size_t why_len)
{
	switch (msg->type) {
	case RK_MSG_HELLO:
		return get_hello(buf, msg, why, why_len) ? 0 : -EBADMSG;
	case RK_MSG_CM_HELLO:
		get_buf(buf + CM_HELLO_BUF_OFF, &msg->u.cm);
		return buf_ok(msg->type, &msg->u.cm, why, why_len) ? 0 : -EBADMSG;
	case RK_MSG_SYNC:
		msg->u.sync.step = get_u32(buf + 12);
		msg->u.sync.status = (int32_t)get_u32(buf + 16);
		return 0;
	case RK_MSG_ERROR:
		if (!error_text_ok(buf + 16, why, why_len))
			return -EBADMSG;
		msg->u.error.code = (int32_t)get_u32(buf + 12);
		memcpy(msg->u.error.text, buf + 16, RK_WIRE_ERROR_TEXT);
		return 0;
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		memcpy(msg->u.auth.data, buf + RK_WIRE_HDR_LEN, RK_WIRE_AUTH_DATA);
		return 0;
	case RK_MSG_BENCH_SETUP:
	case RK_MSG_BENCH_ROUND:
	case RK_MSG_BENCH_RESULT:
	case RK_MSG_BENCH_FIN:
		return get_bench(buf, msg, why, why_len);
	}
	return -EBADMSG; /* not reached: the header check knows the types */
}

/* A BENCH_SETUP's bench_version (at 76 in every version since 2) against
 * this side's, and its length against the version's. */
static int bench_setup_version(const uint8_t *buf, size_t len, char *why, size_t why_len)
{
	uint16_t version = get_u16(buf + 76);

	if (version != RK_WIRE_BENCH_VERSION) {
		WHY("BENCH_SETUP: bench_version %u, this side speaks %d (run the same rdmakit on "
		    "both sides)",
		    version, RK_WIRE_BENCH_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (len != RK_WIRE_BENCH_SETUP_LEN) {
		WHY("a BENCH_SETUP message of bench_version %d is %d bytes, this one claims %zu",
		    RK_WIRE_BENCH_VERSION, RK_WIRE_BENCH_SETUP_LEN, len);
		return -EBADMSG;
	}
	return 0;
}

int rk_wire_decode(const uint8_t *buf, size_t n, struct rk_msg *msg_p, char *why, size_t why_len)
{
	struct rk_msg msg;
	size_t len;
	int ret;

	ret = rk_wire_check_header(buf, n, &len, why, why_len);
	if (ret)
		return ret;
	memset(&msg, 0, sizeof(msg));
	msg.type = (enum rk_msg_type)get_u16(buf + 6);
	if (n < len) {
		WHY("truncated %s message: %zu of %zu bytes", rk_msg_type_str(msg.type), n, len);
		return -EBADMSG;
	}
	if (n > len) {
		WHY("%zu bytes of %s message followed by %zu extra", len, rk_msg_type_str(msg.type),
		    n - len);
		return -EBADMSG;
	}
	if (msg.type == RK_MSG_BENCH_SETUP) {
		/* The version first: another may lay out (and size) the rest
		 * differently. */
		ret = bench_setup_version(buf, len, why, why_len);
		if (ret)
			return ret;
	}
	ret = get_body(buf, &msg, why, why_len);
	if (ret)
		return ret;
	*msg_p = msg;
	return 0;
}
