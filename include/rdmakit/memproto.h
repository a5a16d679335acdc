/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the remote-memory protocol between `rdmakit memserver` (user
 * space, librdmakit) and the rkblk kernel module (kernel/), as bytes.
 *
 * This header is included by both sides, so it uses only <linux/types.h>
 * (the kernel's own, or linux-libc-dev's in user space). Every field is big
 * endian; every structure has a fixed size checked below.
 *
 * One client session is one region of server memory, made of one or more
 * queues, each an RC connection through RDMA CM (port space TCP):
 *
 *  1. For each queue the client posts a receive of RK_MEM_REJECT_LEN bytes
 *     (room for a struct rk_mem_region or a struct rk_mem_reject), then
 *     connects with a struct rk_mem_req as the CM private data (session 0
 *     and queue 0 ask for a new session; later queues, and every queue of a
 *     reconnect, name the session the server gave).
 *  2. The server checks the request (magic, version, sizes, --allow, its
 *     limits) and either rejects it with an rdmakit ERROR wire message as the
 *     REJ private data (struct rk_mem_reject: a negative errno and a reason
 *     text), or accepts it (no private data).
 *  3. After the accept, not before, the server allocates the region of a
 *     new session and registers it (a resumed session's is registered
 *     already, unless its device went away): registering a large region
 *     takes seconds, and iWARP gives a connect request only a few (siw: 10 s)
 *     to be accepted before the peer resets it.
 *  4. Once the connection is ESTABLISHED and the region is registered, the
 *     server SENDs one struct rk_mem_region: where the session's region is,
 *     its length and rkey. When step 3 failed it SENDs instead a struct
 *     rk_mem_reject (the same bytes a REJ would carry: the reason and its
 *     code, e.g. -ENOSPC), then disconnects; the client tells the two apart
 *     by length and magic and reports the second as a reject. The server
 *     never relies on RNR retry (the client's receive is posted before it
 *     connects).
 *     A request with RK_MEM_REQ_SENDS_FIRST (rkblk sets it): once ESTABLISHED
 *     the client SENDs its struct rk_mem_req again (32 bytes), and the server
 *     SENDs nothing before that arrived (it posts the receive for it before
 *     it accepts). iWARP needs this: MPA lets the responder send only after
 *     the initiator's first frame, and siw fails a connect whose MPA reply
 *     has data behind it when the initiator reads the reply ("peer sent
 *     extra data", -EPROTO, reported as RDMA_CM_EVENT_CONNECT_ERROR). The
 *     client may SEND the request once more (RK_MEM_REQ_SENDS in all) when
 *     no answer came within a few seconds: siw leaves data that reaches the
 *     responder between its MPA reply and the QP taking the socket over
 *     unread until more data comes. The server posts RK_MEM_REQ_SENDS
 *     receives and answers the first that arrives. Without the flag (older
 *     clients) the server SENDs as soon as it can.
 *  5. The client moves data with RDMA READ and RDMA WRITE at region.addr +
 *     offset, offset < region.length. All queues of a session share the one
 *     region; a session outlives its connections for the server's --keep.
 *
 * Reject codes a client acts on (rk_mem_reject.code):
 *   -EBADMSG          malformed or foreign private data
 *   -EPROTONOSUPPORT  another protocol version
 *   -EACCES           the client's address is outside the server's --allow
 *   -ENOENT           no such session (expired, or the server lost it):
 *                     a reconnecting client fails its I/O for good
 *   -EINVAL           a size or queue field out of range, or a resume whose
 *                     size differs from the session's
 *   -ENOSPC           larger than --max-size, or (step 4) no memory for it
 *                     or no registration of it
 *   -EUSERS           --max-clients sessions exist already
 *   -EEXIST           that queue of that session is connected already
 *   -EXDEV            the session's region is registered on another device
 *   -EMSGSIZE         the REQ's path MTU is above the server port's active
 *                     MTU (RDMA CM over RoCE hands the server the client's):
 *                     rkblk connects again asking one MTU lower
 */
#ifndef RDMAKIT_MEMPROTO_H
#define RDMAKIT_MEMPROTO_H

#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RK_MEM_MAGIC 0x524b4d53u /* "RKMS" */
#define RK_MEM_VERSION 1
#define RK_MEM_DEFAULT_PORT 7471
#define RK_MEM_BLOCK 4096u       /* sizes and offsets are multiples of this */
#define RK_MEM_MAX_QUEUES 64

/* CM connect request private data (32 bytes; a REQ carries 56 at most). */
struct rk_mem_req {
	__be32 magic;    /* RK_MEM_MAGIC */
	__be16 version;  /* RK_MEM_VERSION */
	__be16 queue;    /* this connection's queue, 0 .. queues - 1 */
	__be16 queues;   /* how many queues the client opens, 1 .. RK_MEM_MAX_QUEUES */
	__be16 flags;    /* RK_MEM_REQ_*, others 0 */
	__be32 reserved; /* 0 */
	__be64 session;  /* 0: a new session (queue 0 only); else the one to resume */
	__be64 size;     /* bytes, a non-zero multiple of RK_MEM_BLOCK */
} __attribute__((packed));

#define RK_MEM_REQ_LEN 32

/* rk_mem_req.flags */
#define RK_MEM_REQ_SENDS_FIRST 0x1 /* the client SENDs first (step 4) */
#define RK_MEM_REQ_SENDS 2         /* ... its request, at most this many times */

/* rk_mem_region.flags */
#define RK_MEM_REGION_NEW 0x1     /* the session was made by this request (zeroed) */
#define RK_MEM_REGION_RESUMED 0x2 /* an existing session, its data kept */

/* The server's one SEND on each established queue (40 bytes). */
struct rk_mem_region {
	__be32 magic;   /* RK_MEM_MAGIC */
	__be16 version; /* RK_MEM_VERSION */
	__be16 queue;   /* the request's queue, echoed */
	__be64 session; /* non-zero; the client names it to add queues or reconnect */
	__be64 addr;    /* remote address of the region's first byte */
	__be64 length;  /* bytes: the session's size */
	__be32 rkey;    /* REMOTE_READ | REMOTE_WRITE */
	__be32 flags;   /* RK_MEM_REGION_* */
} __attribute__((packed));

#define RK_MEM_REGION_LEN 40

/* A reject's private data, and the SEND of step 4 when the region could not
 * be made: rdmakit's ERROR wire message (wire.h), so that every rdmakit
 * client prints the reason the same way (128 bytes). */
#define RK_MEM_REJECT_MAGIC 0x52444b54u /* RK_WIRE_MAGIC, "RDKT" */
#define RK_MEM_REJECT_VERSION 1         /* RK_WIRE_VERSION */
#define RK_MEM_REJECT_TYPE 4            /* RK_MSG_ERROR */
#define RK_MEM_REJECT_TEXT 112

struct rk_mem_reject {
	__be32 magic;   /* RK_MEM_REJECT_MAGIC */
	__be16 version; /* RK_MEM_REJECT_VERSION */
	__be16 type;    /* RK_MEM_REJECT_TYPE */
	__be32 length;  /* RK_MEM_REJECT_LEN, header included */
	__be32 code;    /* a negative errno, two's complement */
	char text[RK_MEM_REJECT_TEXT]; /* NUL-padded */
} __attribute__((packed));

#define RK_MEM_REJECT_LEN 128

#ifdef __cplusplus
#define RK_MEM_ASSERT static_assert
#else
#define RK_MEM_ASSERT _Static_assert
#endif
RK_MEM_ASSERT(sizeof(struct rk_mem_req) == RK_MEM_REQ_LEN, "rk_mem_req is 32 bytes");
RK_MEM_ASSERT(sizeof(struct rk_mem_region) == RK_MEM_REGION_LEN, "rk_mem_region is 40 bytes");
RK_MEM_ASSERT(sizeof(struct rk_mem_reject) == RK_MEM_REJECT_LEN, "rk_mem_reject is 128 bytes");
#undef RK_MEM_ASSERT

#ifdef __cplusplus
}
#endif
#endif
