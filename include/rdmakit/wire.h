/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the exchange messages, as bytes.
 *
 * Every message has a fixed layout in network byte order behind a 12-byte
 * header: magic "RDKT", version, type, total length. Decoding checks all of
 * it (magic, version, type, exact length for the type, every field's range)
 * and says what was wrong; nothing from a peer is trusted before that.
 *
 *   header   0  u32 magic  0x52444b54 ("RDKT")
 *            4  u16 version (RK_WIRE_VERSION)
 *            6  u16 type    (enum rk_msg_type)
 *            8  u32 length  (header included)
 *   HELLO   12  u8  transport (enum rk_transport)   13 u8 link_layer
 *           14  u8  gid_type  (enum rk_gid_type)    15 u8 mtu (enum ibv_mtu)
 *           16  u16 lid                              18 u16 reserved (0)
 *           20  u32 qpn        24 u32 psn        28 u32 qkey      32 u32 gid_index
 *           36  u8  gid[16]
 *           52  u64 buf_addr   60 u64 buf_len    68 u32 rkey      72 u32 buf_flags
 *           76  u32 op         80 u32 size       84 u64 offset             (92 bytes)
 *   SYNC    12  u32 step       16 i32 status                               (20 bytes)
 *   ERROR   12  i32 code       16 char text[112], NUL-padded               (128 bytes)
 *   AUTH_*  12  u8  data[32]: a nonce (BEGIN, CHALLENGE) or an HMAC-SHA256
 *               (RESPONSE, OK); see auth.h                                 (44 bytes)
 *
 * The benchmark's exchange (bench.h), versioned on its own (bench_version,
 * RK_WIRE_BENCH_VERSION; version 1 was carried in HELLO messages, version 2
 * had an 88-byte BENCH_SETUP ending at threads, then reserved):
 *   BENCH_SETUP   12..51 the endpoint of QP `qp`, laid out as in HELLO
 *                 52 u64 buf_addr   60 u64 buf_len   68 u32 rkey   72 u32 max_size
 *                 76 u16 bench_version   78 u8 test   79 u8 mode
 *                 80 u8 transport   81 u8 bidir   82 u16 qps   84 u16 qp
 *                 86 u16 threads    88 u16 nsizes    90 u16 reserved (0)
 *                 92 u32 min_size   96 u32 sizes_hash   100 u32 duration_ms
 *                 104 u64 iters                                             (112 bytes)
 *                 (86.. is the client's plan, bench.h's rk_bench_plan; the
 *                 server sends the client's back)
 *   BENCH_ROUND   12 u32 round      16 u32 size      20 u32 duration_ms
 *                 24 u64 iters                                              (32 bytes)
 *   BENCH_RESULT  12 u32 round      16 u32 qp        20 u64 elapsed_ns
 *                 28 u64 completed  36 u64 received                         (44 bytes)
 *   BENCH_FIN     the header alone: the client has no more rounds; from the   (12 bytes)
 *                 server during a round: it was asked to stop, end the round
 *
 * RDMA CM carries a shorter form in its private data (56 bytes at most on
 * RC): the header, then buf_addr, buf_len, rkey, buf_flags, op, size, offset
 * at the same relative order (RK_MSG_CM_HELLO, 52 bytes).
 */
#ifndef RDMAKIT_WIRE_H
#define RDMAKIT_WIRE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_WIRE_MAGIC 0x52444b54u
#define RK_WIRE_VERSION 1
#define RK_WIRE_HDR_LEN 12
#define RK_WIRE_HELLO_LEN 92
#define RK_WIRE_CM_HELLO_LEN 52
#define RK_WIRE_SYNC_LEN 20
#define RK_WIRE_ERROR_LEN 128
#define RK_WIRE_MAX_LEN 128 /* no message is longer: a larger length is refused */
#define RK_WIRE_ERROR_TEXT 112
#define RK_WIRE_AUTH_LEN 44
#define RK_WIRE_AUTH_DATA 32
#define RK_WIRE_BENCH_SETUP_LEN 112
/* Version 2's BENCH_SETUP: read as far as its bench_version, and refused. */
#define RK_WIRE_BENCH_SETUP_V2_LEN 88
#define RK_WIRE_BENCH_ROUND_LEN 32
#define RK_WIRE_BENCH_RESULT_LEN 44
#define RK_WIRE_BENCH_FIN_LEN 12
/* The bench exchange's own version: 3, these messages (1 was HELLO-coded, 2
 * had no plan in its BENCH_SETUP). */
#define RK_WIRE_BENCH_VERSION 3

enum rk_msg_type {
	RK_MSG_HELLO = 1,
	RK_MSG_CM_HELLO = 2,
	RK_MSG_SYNC = 3,
	RK_MSG_ERROR = 4,
	/* Shared-secret authentication on the control channel (auth.h). */
	RK_MSG_AUTH_BEGIN = 5,     /* client: "I hold the secret", its nonce */
	RK_MSG_AUTH_CHALLENGE = 6, /* server: its nonce */
	RK_MSG_AUTH_RESPONSE = 7,  /* client: HMAC over both nonces */
	RK_MSG_AUTH_OK = 8,        /* server: accepted, and its own HMAC */
	/* The benchmark (bench.h), types of its own from 0x10: set up one
	 * data QP, run a round, its results, no more rounds. */
	RK_MSG_BENCH_SETUP = 0x10,
	RK_MSG_BENCH_ROUND = 0x11,
	RK_MSG_BENCH_RESULT = 0x12,
	RK_MSG_BENCH_FIN = 0x13,
};

/* buf_flags */
#define RK_BUF_DM 0x1          /* the buffer is device memory */
#define RK_BUF_ZERO_BASED 0x2  /* remote addresses start at 0 */
/* CM only: in a request, "this client authenticates with a shared secret";
 * in a reply, "authenticate first: the buffer follows on the control channel"
 * (address, length and rkey are then 0 in the private data). */
#define RK_BUF_AUTH 0x4
/* CM only: the sender's port MTU (enum ibv_mtu, 1-5; 0: not said) in bits
 * 16-18. RoCE's CM does not take the smaller MTU by itself; rdmakit's two
 * sides do, with this (cm.c). */
#define RK_BUF_MTU_SHIFT 16
#define RK_BUF_MTU_MASK (0x7u << RK_BUF_MTU_SHIFT)
#define RK_BUF_FLAGS_ALL (RK_BUF_DM | RK_BUF_ZERO_BASED | RK_BUF_AUTH | RK_BUF_MTU_MASK)

/* A buffer one side exposes, and what the requester wants done with it. */
struct rk_wire_buf {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t flags;  /* RK_BUF_* */
	uint32_t op;     /* requester: its command's request code (RK_WIRE_OP_*) */
	uint32_t size;   /* requester: bytes per operation */
	uint64_t offset; /* requester: where in the peer's buffer */
};

/* Request codes (rk_wire_buf.op): each command whose client speaks this
 * exchange has its own, so that a server meeting another command's client
 * can say whose it is. rc asks for one operation (enum rk_op + 1, 1..7) or
 * the whole flow; ping, bench, ud and doctor for themselves. 0: no code (a bench client
 * of an rdmakit before bench had one). */
#define RK_WIRE_OP_RC_ALL 0x100u     /* rc --op all */
#define RK_WIRE_OP_PING 0x50494e47u  /* "PING": rdmakit ping (native) */
#define RK_WIRE_OP_BENCH 0x424e4348u /* "BNCH": rdmakit bench */
#define RK_WIRE_OP_UD 0x55444750u    /* "UDGP": rdmakit ud over the TCP exchange */
/* "DOCT": rdmakit doctor HOST; the doctor server's reply carries the MTU of
 * its port's netdev in size (bytes, 0: unknown). */
#define RK_WIRE_OP_DOCTOR 0x444f4354u

/* The bench engine's (bench.h) tests, modes and limits, as BENCH_SETUP
 * carries them. */
enum rk_bench_test {
	RK_BENCH_SEND = 0,
	RK_BENCH_WRITE,
	RK_BENCH_READ,
	RK_BENCH_FETCH_ADD,
	RK_BENCH_CMP_SWAP,
};

enum rk_bench_mode {
	RK_BENCH_BW = 0,
	RK_BENCH_LAT,
};

/* Data QPs of one side: as many as perftest's -q is used with (setup of 128
 * QPs is measured against ib_write_bw -q 128), and at most what the device
 * allows (its max_qp, checked when connecting). Memory per QP stays bounded:
 * the send and receive depths shrink so that every QP's completions fit its
 * worker's CQs (the device's max_cqe), and the buffers are 2 slots per QP
 * within RK_BENCH_MAX_MEM (bench.h). */
#define RK_BENCH_MAX_QPS 1024
/* Bandwidth threads on one side, each driving its own QPs and CQs. */
#define RK_BENCH_MAX_THREADS 16
#define RK_BENCH_MAX_SIZE (1u << 30)

/* BENCH_SETUP: what the client asks for, and one data QP of either side.
 * Decoding checks every field against the limits above. */
struct rk_wire_bench_setup {
	struct rk_endpoint ep;  /* data QP `qp` */
	uint64_t buf_addr;      /* the sender's in-slots, all QPs */
	uint64_t buf_len;
	uint32_t rkey;
	uint32_t max_size;      /* bytes: the largest message, 1..RK_BENCH_MAX_SIZE */
	uint8_t test;           /* enum rk_bench_test */
	uint8_t mode;           /* enum rk_bench_mode */
	uint8_t transport;      /* enum rk_transport of the data QPs */
	uint8_t bidir;          /* 0 or 1 */
	uint16_t qps;           /* 1..RK_BENCH_MAX_QPS */
	uint16_t qp;            /* which one this is: below qps */
	/* the client's plan (the server sends it back) */
	uint16_t threads;       /* 1..RK_BENCH_MAX_THREADS */
	uint16_t nsizes;        /* 1.. */
	uint32_t min_size;      /* 1..max_size */
	uint32_t sizes_hash;
	uint32_t duration_ms;   /* 0: by iters; RK_BENCH_UNTIL_STOPPED */
	uint64_t iters;         /* at most UINT32_MAX */
};

/* BENCH_ROUND: the client's next round. */
struct rk_wire_bench_round {
	uint32_t round;         /* from 0 */
	uint32_t size;          /* 1..RK_BENCH_MAX_SIZE */
	uint32_t duration_ms;   /* 0 when iters is set; UINT32_MAX: until stopped */
	uint64_t iters;         /* per QP, at most UINT32_MAX; 0 when duration_ms is set */
};

/* BENCH_RESULT: one QP's counts after a round, and the sender's time. */
struct rk_wire_bench_result {
	uint32_t round;
	uint32_t qp;            /* below RK_BENCH_MAX_QPS */
	uint64_t elapsed_ns;    /* the round's time on the sender */
	uint64_t completed;     /* requests completed on the QP */
	uint64_t received;      /* messages received on the QP */
};

struct rk_msg {
	enum rk_msg_type type;
	union {
		struct {
			struct rk_endpoint ep;
			struct rk_wire_buf buf;
		} hello;                 /* RK_MSG_HELLO */
		struct rk_wire_buf cm;   /* RK_MSG_CM_HELLO */
		struct {
			uint32_t step;
			int32_t status;
		} sync;                  /* RK_MSG_SYNC */
		struct {
			int32_t code;
			char text[RK_WIRE_ERROR_TEXT];
		} error;                 /* RK_MSG_ERROR */
		struct {
			uint8_t data[RK_WIRE_AUTH_DATA];
		} auth;                  /* RK_MSG_AUTH_* */
		struct rk_wire_bench_setup bench_setup;   /* RK_MSG_BENCH_SETUP */
		struct rk_wire_bench_round bench_round;   /* RK_MSG_BENCH_ROUND */
		struct rk_wire_bench_result bench_result; /* RK_MSG_BENCH_RESULT */
	} u;
};

/* Length of the encoded form of a message type, 0 for an unknown type. */
size_t rk_wire_len(enum rk_msg_type type);

/* Encode msg into buf (at least rk_wire_len(msg->type) bytes). Returns the
 * length written, or -EINVAL for an unknown type or a field out of range. */
int rk_wire_encode(const struct rk_msg *msg, uint8_t *buf, size_t buf_len);

/* Check a header alone (the first RK_WIRE_HDR_LEN bytes): magic, version,
 * known type, and a length that is exactly that type's (a BENCH_SETUP may
 * also have version 2's RK_WIRE_BENCH_SETUP_V2_LEN: rk_wire_decode() then
 * refuses it by its bench_version). On success the
 * message's total length is in *len_p. -EBADMSG (or -EPROTONOSUPPORT for
 * another version) with a reason in why. */
int rk_wire_check_header(const uint8_t *buf, size_t n, size_t *len_p, char *why,
			 size_t why_len);

/* Decode one whole message of n bytes. -EBADMSG for anything malformed
 * (truncated, oversized, bad magic, unknown type, a field out of range),
 * -EPROTONOSUPPORT for another version (of the exchange, or a BENCH_SETUP's
 * bench_version); why says what, naming the field. */
int rk_wire_decode(const uint8_t *buf, size_t n, struct rk_msg *msg_p, char *why,
		   size_t why_len);

/* An ERROR message with code and the text fmt makes. Text longer than the
 * field's RK_WIRE_ERROR_TEXT - 1 characters is cut and ends in "...", so
 * that the peer's reader sees it was cut. */
void rk_msg_error(struct rk_msg *msg, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rk_msg_verror(struct rk_msg *msg, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* "HELLO", "CM_HELLO", "SYNC", "ERROR", "AUTH_BEGIN", "AUTH_CHALLENGE",
 * "AUTH_RESPONSE", "AUTH_OK", "BENCH_SETUP", "BENCH_ROUND", "BENCH_RESULT",
 * "BENCH_FIN", or "UNKNOWN". */
const char *rk_msg_type_str(enum rk_msg_type type);

/* The rdmakit command whose client sends request code op: "rc", "ping",
 * "bench", "ud" or "doctor"; NULL for a code none of them sends. */
const char *rk_wire_op_command(uint32_t op);

/* Why a server of command refuses request code op, in why: "this is an
 * rdmakit bench server; the client is rdmakit ping (request code
 * 0x50494e47)", or that no rdmakit command sends that code. Short enough
 * for an ERROR message's text behind "the server refused: ". */
void rk_wire_op_refusal(const char *command, uint32_t op, char *why, size_t why_len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
