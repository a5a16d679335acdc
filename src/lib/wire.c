/* Exchange messages: fixed layouts in network byte order, checked field by field. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/wire.h>
#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/qp.h>

/* The buffer fields: 40 bytes, behind the header in a CM_HELLO. */
#define WIRE_BUF_LEN 40
#define CM_HELLO_LEN RK_WIRE_CM_HELLO_LEN
_Static_assert(RK_WIRE_HDR_LEN + WIRE_BUF_LEN == RK_WIRE_CM_HELLO_LEN, "CM_HELLO layout");

/* Where the buffer fields start in a HELLO and in a CM_HELLO. */
#define HELLO_BUF_OFF	 52
#define CM_HELLO_BUF_OFF RK_WIRE_HDR_LEN

#define WHY(...)                                                                                   \
	do {                                                                                       \
		if (why)                                                                           \
			snprintf(why, why_len, __VA_ARGS__);                                       \
	} while (0)

/* Byte-wise, so that neither alignment nor host byte order matters. */
static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	put_u16(p, (uint16_t)(v >> 16));
	put_u16(p + 2, (uint16_t)v);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)get_u16(p) << 16 | get_u16(p + 2);
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

/* Locale-independent: the text crosses machines. */
static bool is_print(uint8_t c)
{
	return c >= 0x20 && c <= 0x7e;
}

size_t rk_wire_len(enum rk_msg_type type)
{
	switch (type) {
	case RK_MSG_HELLO:
		return RK_WIRE_HELLO_LEN;
	case RK_MSG_CM_HELLO:
		return CM_HELLO_LEN;
	case RK_MSG_SYNC:
		return RK_WIRE_SYNC_LEN;
	case RK_MSG_ERROR:
		return RK_WIRE_ERROR_LEN;
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		return RK_WIRE_AUTH_LEN;
	}
	return 0;
}

const char *rk_msg_type_str(enum rk_msg_type type)
{
	switch (type) {
	case RK_MSG_HELLO:
		return "HELLO";
	case RK_MSG_CM_HELLO:
		return "CM_HELLO";
	case RK_MSG_SYNC:
		return "SYNC";
	case RK_MSG_ERROR:
		return "ERROR";
	case RK_MSG_AUTH_BEGIN:
		return "AUTH_BEGIN";
	case RK_MSG_AUTH_CHALLENGE:
		return "AUTH_CHALLENGE";
	case RK_MSG_AUTH_RESPONSE:
		return "AUTH_RESPONSE";
	case RK_MSG_AUTH_OK:
		return "AUTH_OK";
	}
	return "UNKNOWN";
}

/* Field checks shared by encode (why NULL) and decode: what one side may
 * send, the other accepts. */
static bool endpoint_ok(const struct rk_endpoint *ep, char *why, size_t why_len)
{
	if ((unsigned int)ep->transport > RK_UD) {
		WHY("HELLO: transport %u is not RC (0), UC (1) or UD (2)",
		    (unsigned int)ep->transport);
		return false;
	}
	if ((unsigned int)ep->gid_type > RK_GID_ROCE_V2) {
		WHY("HELLO: gid_type %u is not IB (0), RoCE v1 (1) or RoCE v2 (2)",
		    (unsigned int)ep->gid_type);
		return false;
	}
	if (!rk_mtu_bytes(ep->mtu)) {
		WHY("HELLO: mtu %u is not an MTU (1..5 for 256..4096 bytes)",
		    (unsigned int)ep->mtu);
		return false;
	}
	if (ep->qpn > 0xffffff) {
		WHY("HELLO: qpn 0x%x does not fit in 24 bits", ep->qpn);
		return false;
	}
	if (ep->psn > 0xffffff) {
		WHY("HELLO: psn 0x%x does not fit in 24 bits", ep->psn);
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

static void put_hello(uint8_t *p, const struct rk_endpoint *ep, const struct rk_wire_buf *b)
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
	put_buf(p + HELLO_BUF_OFF, b);
}

static void get_hello(const uint8_t *p, struct rk_endpoint *ep, struct rk_wire_buf *b)
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
	get_buf(p + HELLO_BUF_OFF, b);
}

int rk_wire_encode(const struct rk_msg *msg, uint8_t *buf, size_t buf_len)
{
	size_t len = rk_wire_len(msg->type);
	size_t text_len = 0;

	if (!len)
		return -EINVAL;
	switch (msg->type) {
	case RK_MSG_HELLO:
		if (!endpoint_ok(&msg->u.hello.ep, NULL, 0) ||
		    !buf_ok(msg->type, &msg->u.hello.buf, NULL, 0))
			return -EINVAL;
		break;
	case RK_MSG_CM_HELLO:
		if (!buf_ok(msg->type, &msg->u.cm, NULL, 0))
			return -EINVAL;
		break;
	case RK_MSG_ERROR:
		/* Longer text is cut to leave room for the NUL; control bytes
		 * would make the peer refuse the message as garbled. */
		text_len = strnlen(msg->u.error.text, RK_WIRE_ERROR_TEXT);
		if (text_len == RK_WIRE_ERROR_TEXT)
			text_len--;
		for (size_t i = 0; i < text_len; i++)
			if (!is_print((uint8_t)msg->u.error.text[i]))
				return -EINVAL;
		break;
	case RK_MSG_SYNC:
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		break;
	}
	if (buf_len < len)
		return -ENOSPC;

	memset(buf, 0, len);
	put_u32(buf, RK_WIRE_MAGIC);
	put_u16(buf + 4, RK_WIRE_VERSION);
	put_u16(buf + 6, (uint16_t)msg->type);
	put_u32(buf + 8, (uint32_t)len);
	switch (msg->type) {
	case RK_MSG_HELLO:
		put_hello(buf, &msg->u.hello.ep, &msg->u.hello.buf);
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
		memcpy(buf + 16, msg->u.error.text, text_len);
		break;
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		memcpy(buf + RK_WIRE_HDR_LEN, msg->u.auth.data, RK_WIRE_AUTH_DATA);
		break;
	}
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

int rk_wire_decode(const uint8_t *buf, size_t n, struct rk_msg *msg_p, char *why, size_t why_len)
{
	struct rk_msg msg;
	uint16_t reserved;
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

	switch (msg.type) {
	case RK_MSG_HELLO:
		get_hello(buf, &msg.u.hello.ep, &msg.u.hello.buf);
		if (!endpoint_ok(&msg.u.hello.ep, why, why_len) ||
		    !buf_ok(msg.type, &msg.u.hello.buf, why, why_len))
			return -EBADMSG;
		reserved = get_u16(buf + 18);
		if (reserved) {
			WHY("HELLO: reserved bytes 18-19 are 0x%04x, must be 0", reserved);
			return -EBADMSG;
		}
		break;
	case RK_MSG_CM_HELLO:
		get_buf(buf + CM_HELLO_BUF_OFF, &msg.u.cm);
		if (!buf_ok(msg.type, &msg.u.cm, why, why_len))
			return -EBADMSG;
		break;
	case RK_MSG_SYNC:
		msg.u.sync.step = get_u32(buf + 12);
		msg.u.sync.status = (int32_t)get_u32(buf + 16);
		break;
	case RK_MSG_ERROR:
		if (!error_text_ok(buf + 16, why, why_len))
			return -EBADMSG;
		msg.u.error.code = (int32_t)get_u32(buf + 12);
		memcpy(msg.u.error.text, buf + 16, RK_WIRE_ERROR_TEXT);
		break;
	case RK_MSG_AUTH_BEGIN:
	case RK_MSG_AUTH_CHALLENGE:
	case RK_MSG_AUTH_RESPONSE:
	case RK_MSG_AUTH_OK:
		memcpy(msg.u.auth.data, buf + RK_WIRE_HDR_LEN, RK_WIRE_AUTH_DATA);
		break;
	}
	*msg_p = msg;
	return 0;
}
