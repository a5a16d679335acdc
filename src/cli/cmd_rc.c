/* rdmakit rc: a server exposes one buffer (host or device memory); a client
 * connects over the TCP exchange or RDMA CM and works on it: SEND, SEND or
 * WRITE with immediate, RDMA WRITE, RDMA READ, fetch-add, compare-swap, or
 * the whole flow ("all"). Steps are kept in order by sync points on the
 * control channel, and after each step each side shows its buffer. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define RC_OP_ALL 0x100u /* wire code for the whole flow; single ops are rk_op + 1 */
#define FADD_START 1000u
#define FADD_ADD 1u
#define CSWAP_SWAP 2000u
#define MAX_SGE 64
#define MAX_STEPS 5

struct rc_opts {
	struct cli_dev_opts dev;
	bool server;
	uint64_t port;
	bool cm;
	const char *op;
	uint64_t size;
	uint64_t sge;
	bool events;
	const char *mem;
	uint64_t timeout;
	uint64_t wait;
	const char *inject;
	uint64_t rnr_retry;
	uint64_t retry;
	bool json;
	const char *auth_file;
};

enum step_kind {
	ST_SEND_C2S,
	ST_SEND_IMM_C2S,
	ST_SEND_S2C,
	ST_WRITE,
	ST_WRITE_IMM,
	ST_READ,
	ST_FADD,
	ST_CSWAP,
};

static const char *const step_names[] = {
	[ST_SEND_C2S] = "SEND",	   [ST_SEND_IMM_C2S] = "SEND_IMM", [ST_SEND_S2C] = "SEND",
	[ST_WRITE] = "WRITE",	   [ST_WRITE_IMM] = "WRITE_IMM",   [ST_READ] = "READ",
	[ST_FADD] = "FETCH_ADD",   [ST_CSWAP] = "CMP_SWAP",
};

enum inject { INJ_NONE, INJ_WRONG_RKEY, INJ_NO_ACCESS, INJ_OUTSIDE, INJ_NO_RECV };

/* What one step did, as this side saw it: feeds the text and the JSON. */
struct step_rec {
	enum step_kind kind;
	int status;
	uint32_t bytes;
	bool checked;        /* content compared with what the peer put there */
	int64_t bad_offset;  /* -1: every byte matched */
	bool has_word;       /* atomics: the 8-byte word */
	uint64_t word_before, word_after;
	bool has_imm;
	uint32_t imm;
	char preview[72];    /* the buffer afterwards */
};

struct rc {
	const struct rc_opts *o;
	enum inject inject;
	uint32_t op;          /* wire code of what the client asked for */
	bool want_dm, fallback, fell_back;
	struct rk_conn *conn;
	struct rk_region *buf; /* server: the exposed buffer; client: its local one */
	int buf_access;
	uint8_t *scratch;      /* expected content, and copies out of device memory */
	enum step_kind flow[MAX_STEPS];
	int nsteps;
	struct step_rec rec[MAX_STEPS];
	int done;
	const char *who;
};

static const char usage_text[] =
	"rdmakit rc --server [options]\n       rdmakit rc HOST [options]";
static const char description[] =
	"RC client and server. The server exposes one buffer (host or device memory) with\n"
	"exactly the access the client's operation needs; the client connects by the\n"
	"out-of-band TCP exchange (default) or RDMA CM (--cm) and runs --op on it:\n"
	"  send, send-imm   the client SENDs its buffer into the server's\n"
	"  write, write-imm the client RDMA-WRITEs the server's buffer\n"
	"  read             the client RDMA-READs the server's buffer\n"
	"  fetch-add        the client adds 1 to the server's first 8-byte word\n"
	"  cmp-swap         the client swaps that word if it holds the expected value\n"
	"  all              the server SENDs a message, the client READs, WRITEs, then\n"
	"                   fetch-add and compare-swap, each side showing its buffer\n"
	"Every byte moved is checked by the receiving side.";

/* ---- setup ---- */

static uint32_t op_code(const char *name, bool *ok)
{
	enum rk_op op;

	*ok = true;
	if (!strcmp(name, "all"))
		return RC_OP_ALL;
	if (!rk_op_parse(name, &op))
		return (uint32_t)op + 1;
	*ok = false;
	return 0;
}

static const char *op_name(uint32_t code)
{
	if (code == RC_OP_ALL)
		return "all";
	if (code >= 1 && code <= RK_OP_CMP_SWAP + 1)
		return rk_op_str((enum rk_op)(code - 1));
	return "unknown";
}

static int build_flow(struct rc *rc)
{
	static const enum step_kind all[] = {ST_SEND_S2C, ST_READ, ST_WRITE, ST_FADD, ST_CSWAP};
	static const enum step_kind single[] = {
		[RK_OP_SEND] = ST_SEND_C2S,  [RK_OP_SEND_IMM] = ST_SEND_IMM_C2S,
		[RK_OP_WRITE] = ST_WRITE,    [RK_OP_WRITE_IMM] = ST_WRITE_IMM,
		[RK_OP_READ] = ST_READ,	     [RK_OP_FETCH_ADD] = ST_FADD,
		[RK_OP_CMP_SWAP] = ST_CSWAP,
	};

	if (rc->op == RC_OP_ALL) {
		memcpy(rc->flow, all, sizeof(all));
		rc->nsteps = (int)(sizeof(all) / sizeof(all[0]));
		return 0;
	}
	if (rc->op < 1 || rc->op > RK_OP_CMP_SWAP + 1)
		return -EINVAL;
	rc->flow[0] = single[rc->op - 1];
	rc->nsteps = 1;
	return 0;
}

static bool flow_has_atomics(const struct rc *rc)
{
	for (int i = 0; i < rc->nsteps; i++)
		if (rc->flow[i] == ST_FADD || rc->flow[i] == ST_CSWAP)
			return true;
	return false;
}

/* The remote access the server's buffer and QP need for the client's flow,
 * and nothing more. */
static int server_remote_access(const struct rc *rc)
{
	int access = 0;

	for (int i = 0; i < rc->nsteps; i++) {
		switch (rc->flow[i]) {
		case ST_WRITE:
		case ST_WRITE_IMM: access |= IBV_ACCESS_REMOTE_WRITE; break;
		case ST_READ: access |= IBV_ACCESS_REMOTE_READ; break;
		case ST_FADD:
		case ST_CSWAP: access |= IBV_ACCESS_REMOTE_ATOMIC; break;
		default: break;
		}
	}
	return access;
}

/* Server: judge the client's request, then create exactly what it needs. */
static int on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
		      struct rk_wire_buf *reply, int *qp_access, char *reason, size_t reason_len,
		      void *arg)
{
	struct rc *rc = arg;
	const struct rc_opts *o = rc->o;
	int remote, access, ret;
	bool ok;

	rc->op = req->op;
	if (build_flow(rc)) {
		snprintf(reason, reason_len, "unknown operation code %u", req->op);
		return -EINVAL;
	}
	if (strcmp(o->op, "any") && op_code(o->op, &ok) != req->op) {
		snprintf(reason, reason_len, "the client asks for %s; this server serves only %s",
			 op_name(req->op), o->op);
		return -EPERM;
	}
	/* Every offset and length from the peer is checked against the one
	 * buffer this server exposes. */
	if (req->size == 0 || req->size > o->size || req->offset > o->size - req->size) {
		snprintf(reason, reason_len,
			 "the client wants %u bytes at offset %" PRIu64
			 "; this server exposes %" PRIu64 " bytes (start it with -s %u)",
			 req->size, req->offset, o->size, req->size);
		return -ERANGE;
	}
	if (flow_has_atomics(rc) && (req->offset % 8 || o->size < 8)) {
		snprintf(reason, reason_len, "atomics need an 8-byte aligned word in the buffer");
		return -EINVAL;
	}
	remote = server_remote_access(rc);
	access = IBV_ACCESS_LOCAL_WRITE | remote;
	if (rc->inject == INJ_NO_ACCESS) {
		rk_warn("--inject no-access: registering the buffer without %s remote access",
			remote ? "its" : "any");
		access = IBV_ACCESS_LOCAL_WRITE;
	}
	ret = rk_region_alloc(conn->dev, conn->pd, o->size, access, rc->want_dm, rc->fallback,
			      &rc->fell_back, &rc->buf);
	if (ret) {
		snprintf(reason, reason_len, "%s", ret == -EOPNOTSUPP ?
			 "the server's device has no device memory" : rk_strerror(ret));
		return ret;
	}
	rc->buf_access = access;
	memset(reply, 0, sizeof(*reply));
	reply->addr = rc->buf->base;
	reply->len = rc->buf->len;
	reply->rkey = rc->buf->rkey;
	reply->flags = rc->buf->dm ? RK_BUF_DM | RK_BUF_ZERO_BASED : 0;
	*qp_access = remote;
	return 0;
}

/* Client: a local buffer that only this side writes into. It exposes
 * nothing: no remote access, and no address or rkey is sent. */
static int prepare(struct rk_conn *conn, struct rk_wire_buf *req, int *qp_access, void *arg)
{
	struct rc *rc = arg;
	int ret;

	ret = rk_region_alloc(conn->dev, conn->pd, rc->o->size, IBV_ACCESS_LOCAL_WRITE, false,
			      false, NULL, &rc->buf);
	if (ret)
		return ret;
	rc->buf_access = IBV_ACCESS_LOCAL_WRITE;
	memset(req, 0, sizeof(*req));
	req->op = rc->op;
	req->size = (uint32_t)rc->o->size;
	req->offset = 0;
	*qp_access = 0;
	return 0;
}

/* Both: the buffer goes before the connection's PD does. */
static void release(struct rk_conn *conn, void *arg)
{
	struct rc *rc = arg;

	rk_region_free(rc->buf);
	rc->buf = NULL;
}

/* Client: what the server offered must hold what we are about to do. */
static int check_reply(struct rc *rc)
{
	const struct rk_wire_buf *b = &rc->conn->reply;

	if (b->len < rc->o->size) {
		rk_error("the server exposes %" PRIu64 " bytes; %" PRIu64 " are needed", b->len,
			 rc->o->size);
		return -ERANGE;
	}
	if (flow_has_atomics(rc) && b->addr % 8) {
		rk_error("the server's buffer at 0x%" PRIx64 " is not 8-byte aligned for atomics",
			 b->addr);
		return -EINVAL;
	}
	return 0;
}

/* ---- steps ---- */

static uint32_t step_seed(int idx, enum step_kind k)
{
	return (uint32_t)(idx + 1) * 100 + (uint32_t)k;
}

/* The content a step puts in a buffer; both sides can make it. */
static void step_content(uint8_t *out, size_t len, int idx, enum step_kind k)
{
	char prefix[64];
	const char *what = k == ST_SEND_S2C ? "Hello from the server (SEND)" :
			   k == ST_READ	    ? "server content for READ" :
			   k == ST_WRITE || k == ST_WRITE_IMM ? "written by the client" :
								"sent by the client";

	snprintf(prefix, sizeof(prefix), "%s, step %d: ", what, idx + 1);
	rk_text_fill(out, len, prefix, step_seed(idx, k));
}

/* Split [off, off+len) of the region into n SGEs. */
static int region_sges(const struct rk_region *r, size_t off, uint32_t len, int n,
		       struct ibv_sge *sg)
{
	uint32_t pos = 0;

	if (n > (int)len)
		n = len ? (int)len : 1;
	for (int i = 0; i < n; i++) {
		uint32_t l = len / (uint32_t)n + ((uint32_t)i < len % (uint32_t)n);

		sg[i] = rk_region_sge(r, off + pos, l);
		pos += l;
	}
	return n;
}

/* Compare the buffer with what step idx should have left there. */
static int check_content(struct rc *rc, struct step_rec *r, int idx)
{
	uint8_t *got = rc->scratch + rc->o->size;
	ssize_t bad;
	int ret;

	step_content(rc->scratch, r->bytes, idx, r->kind);
	ret = rk_region_read(rc->buf, 0, got, r->bytes);
	if (ret)
		return ret;
	bad = rk_buf_diff(got, rc->scratch, r->bytes);
	r->checked = true;
	r->bad_offset = bad;
	if (bad >= 0) {
		rk_error("%s: byte %zd is 0x%02x, the peer put 0x%02x there", step_names[r->kind],
			 bad, got[bad], rc->scratch[bad]);
		return -EIO;
	}
	return 0;
}

static int read_word(struct rc *rc, uint64_t *v)
{
	return rk_region_read(rc->buf, 0, v, sizeof(*v));
}

static void take_preview(struct rc *rc, struct step_rec *r)
{
	uint8_t tmp[sizeof(r->preview)];
	size_t n = rc->o->size < sizeof(tmp) ? rc->o->size : sizeof(tmp);
	uint64_t w;

	if (r->has_word && !read_word(rc, &w)) {
		snprintf(r->preview, sizeof(r->preview), "word %" PRIu64, w);
		return;
	}
	if (rk_region_read(rc->buf, 0, tmp, n)) {
		snprintf(r->preview, sizeof(r->preview), "(unreadable)");
		return;
	}
	/* rk_preview reads at most sizeof(preview) - 1 bytes: all were copied. */
	rk_preview(tmp, rc->o->size, r->preview, sizeof(r->preview));
}

/* The peer's buffer as this client targets it. */
static uint64_t remote_addr(const struct rc *rc)
{
	const struct rk_wire_buf *b = &rc->conn->reply;

	if (rc->inject == INJ_OUTSIDE)
		return b->addr + b->len; /* just past the end: the peer's HCA must refuse */
	return b->addr;
}

static uint32_t remote_rkey(const struct rc *rc)
{
	uint32_t k = rc->conn->reply.rkey;

	return rc->inject == INJ_WRONG_RKEY ? k ^ 0x00ffff00u : k;
}

/* Client side of an RDMA step (WRITE, WRITE_IMM, READ, atomics), or the
 * SEND of a client->server step. */
static int client_post(struct rc *rc, int idx, struct step_rec *r)
{
	struct ibv_sge sg[MAX_SGE];
	struct rk_wr wr = {.wr_id = (uint64_t)idx + 1, .flags = IBV_SEND_SIGNALED, .sg = sg};
	struct ibv_wc wc;
	int ret;

	wr.nsge = region_sges(rc->buf, 0, r->bytes, (int)rc->o->sge, sg);
	switch (r->kind) {
	case ST_SEND_C2S: wr.op = RK_OP_SEND; break;
	case ST_SEND_IMM_C2S: wr.op = RK_OP_SEND_IMM; wr.imm = step_seed(idx, r->kind); break;
	case ST_WRITE: wr.op = RK_OP_WRITE; break;
	case ST_WRITE_IMM: wr.op = RK_OP_WRITE_IMM; wr.imm = step_seed(idx, r->kind); break;
	case ST_READ: wr.op = RK_OP_READ; break;
	case ST_FADD:
	case ST_CSWAP:
		wr.op = r->kind == ST_FADD ? RK_OP_FETCH_ADD : RK_OP_CMP_SWAP;
		sg[0] = rk_region_sge(rc->buf, 0, 8);
		wr.nsge = 1;
		wr.compare_add = r->kind == ST_FADD ? FADD_ADD : FADD_START + FADD_ADD;
		wr.swap = CSWAP_SWAP;
		break;
	default: return -EINVAL;
	}
	if (wr.op != RK_OP_SEND && wr.op != RK_OP_SEND_IMM) {
		wr.remote_addr = remote_addr(rc);
		wr.rkey = remote_rkey(rc);
	}
	if (wr.op == RK_OP_WRITE_IMM || wr.op == RK_OP_SEND_IMM) {
		r->has_imm = true;
		r->imm = wr.imm;
	}
	ret = rk_post(rc->conn->qp, &wr);
	if (ret)
		return ret;
	return rk_conn_wait(rc->conn, wr.wr_id, step_names[r->kind], &wc);
}

/* How many SGEs this side's receive has in a step, or -1 when this side
 * posts none (a WRITE with immediate consumes a receive of no SGEs). */
static int step_recv_sges(const struct rc *rc, const struct step_rec *r)
{
	bool server = rc->o->server;

	switch (r->kind) {
	case ST_SEND_C2S:
	case ST_SEND_IMM_C2S:
		return server && rc->inject != INJ_NO_RECV ? (int)rc->o->sge : -1;
	case ST_WRITE_IMM: return server ? 0 : -1;
	case ST_SEND_S2C: return server ? -1 : (int)rc->o->sge;
	default: return -1;
	}
}

static uint64_t recv_wr_id(int idx)
{
	return 1000 + (uint64_t)idx;
}

static int post_step_recv(struct rc *rc, int idx, struct step_rec *r)
{
	struct ibv_sge sg[MAX_SGE];
	int nsge = step_recv_sges(rc, r);

	nsge = nsge ? region_sges(rc->buf, 0, r->bytes, nsge, sg) : 0;
	return rk_post_recv(rc->conn->qp, recv_wr_id(idx), sg, nsge);
}

/* Receive side of a SEND (or the receive a WRITE with immediate consumes):
 * the receive was posted already (TCP) or is posted now (CM, see run_step). */
static int wait_step_recv(struct rc *rc, int idx, struct step_rec *r, bool posted)
{
	struct ibv_wc wc;
	int ret;

	if (!posted) {
		ret = post_step_recv(rc, idx, r);
		if (ret)
			return ret;
	}
	ret = rk_conn_wait(rc->conn, recv_wr_id(idx), "RECV", &wc);
	if (ret)
		return ret;
	if (wc.byte_len != r->bytes) {
		rk_error("received %u bytes, %u were due", wc.byte_len, r->bytes);
		return -EIO;
	}
	if (wc.wc_flags & IBV_WC_WITH_IMM) {
		r->has_imm = true;
		r->imm = ntohl(wc.imm_data);
		if (r->imm != step_seed(idx, r->kind)) {
			rk_error("immediate data 0x%x, 0x%x was sent", r->imm,
				 step_seed(idx, r->kind));
			return -EIO;
		}
	}
	return 0;
}

/* What happens before the "ready" sync point: put content in place. */
static int step_prepare(struct rc *rc, int idx, struct step_rec *r)
{
	uint64_t w;

	switch (r->kind) {
	case ST_SEND_C2S:
	case ST_SEND_IMM_C2S:
	case ST_WRITE:
	case ST_WRITE_IMM:
		if (rc->o->server)
			return 0;
		step_content(rc->scratch, r->bytes, idx, r->kind);
		return rk_region_write(rc->buf, 0, rc->scratch, r->bytes);
	case ST_SEND_S2C:
	case ST_READ:
		if (!rc->o->server)
			return 0;
		step_content(rc->scratch, r->bytes, idx, r->kind);
		return rk_region_write(rc->buf, 0, rc->scratch, r->bytes);
	case ST_FADD:
	case ST_CSWAP:
		if (!rc->o->server)
			return 0;
		w = r->kind == ST_FADD ? FADD_START : FADD_START + FADD_ADD;
		r->has_word = true;
		r->word_before = w;
		return rk_region_write(rc->buf, 0, &w, sizeof(w));
	}
	return -EINVAL;
}

/* What happens between the "ready" and "done" sync points. */
static int step_act(struct rc *rc, int idx, struct step_rec *r, bool recv_posted)
{
	int nsge = (int)rc->o->sge;
	struct ibv_sge sg[MAX_SGE];
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = (uint64_t)idx + 1, .sg = sg,
			   .flags = IBV_SEND_SIGNALED};
	int ret;

	if (step_recv_sges(rc, r) >= 0)
		return wait_step_recv(rc, idx, r, recv_posted);
	if (rc->o->server) {
		if (r->kind == ST_SEND_S2C) {
			wr.nsge = region_sges(rc->buf, 0, r->bytes, nsge, sg);
			ret = rk_post(rc->conn->qp, &wr);
			if (ret)
				return ret;
			return rk_conn_wait(rc->conn, wr.wr_id, "SEND", NULL);
		}
		if (rc->inject == INJ_NO_RECV && (r->kind == ST_SEND_C2S ||
						  r->kind == ST_SEND_IMM_C2S))
			rk_warn("--inject no-recv: posting no receive for the client's SEND");
		return 0; /* the client acts on our buffer */
	}
	return client_post(rc, idx, r);
}

/* After "done": check what arrived here, read words, take the preview. */
static int step_finish(struct rc *rc, int idx, struct step_rec *r)
{
	bool server = rc->o->server;
	uint64_t want_before = r->kind == ST_FADD ? FADD_START : FADD_START + FADD_ADD;
	uint64_t want_after = r->kind == ST_FADD ? FADD_START + FADD_ADD : CSWAP_SWAP;
	uint64_t w = 0;
	int ret = 0;

	switch (r->kind) {
	case ST_SEND_C2S:
	case ST_SEND_IMM_C2S:
	case ST_WRITE:
	case ST_WRITE_IMM:
		if (server)
			ret = check_content(rc, r, idx);
		break;
	case ST_SEND_S2C:
	case ST_READ:
		if (!server)
			ret = check_content(rc, r, idx);
		break;
	case ST_FADD:
	case ST_CSWAP:
		r->has_word = true;
		ret = read_word(rc, &w);
		if (ret)
			break;
		if (server) {
			r->word_after = w;
			if (w != want_after) {
				rk_error("%s: the word is %" PRIu64 ", %" PRIu64 " was due",
					 step_names[r->kind], w, want_after);
				ret = -EIO;
			}
		} else {
			/* The client's result buffer holds the value before. */
			r->word_before = w;
			r->word_after = want_after;
			if (w != want_before) {
				rk_error("%s returned %" PRIu64 ", %" PRIu64 " was in the word",
					 step_names[r->kind], w, want_before);
				ret = -EIO;
			}
		}
		r->checked = true;
		r->bad_offset = -1;
		break;
	}
	take_preview(rc, r);
	return ret;
}

static void print_step(const struct rc *rc, int idx, const struct step_rec *r)
{
	const char *dir = r->kind == ST_SEND_S2C ? "server -> client" :
			  r->kind == ST_READ	     ? "client <- server buffer" :
			  r->kind == ST_FADD || r->kind == ST_CSWAP ? "client on server word" :
								      "client -> server";

	printf("step %d/%d %-9s %s, %u bytes%s", idx + 1, rc->nsteps, step_names[r->kind], dir,
	       r->bytes, r->status ? ": FAILED" : "");
	if (r->has_imm)
		printf(", immediate 0x%x", r->imm);
	if (r->has_word && rc->o->server)
		printf(", word %" PRIu64 " -> %" PRIu64, r->word_before, r->word_after);
	else if (r->has_word)
		printf(", returned %" PRIu64, r->word_before);
	if (r->checked && r->bad_offset < 0)
		printf(r->has_word ? ", as expected" : ", checked: every byte as the peer put it");
	printf("\n");
	if (!r->status)
		printf("  %s buffer after: [%s] (%" PRIu64 " bytes)\n", rc->who, r->preview,
		       rc->o->size);
	fflush(stdout);
}

/* One step: prepare, sync "ready", act, sync "done" carrying our status,
 * finish. Either side's failure stops both. */
static int run_step(struct rc *rc, int idx)
{
	struct step_rec *r = &rc->rec[idx];
	struct rk_ctl *ctl = rc->conn->ctl;
	int tmo = rc->conn->timeout_ms;
	int ret;

	r->kind = rc->flow[idx];
	/* The client's size: the server's -s is only its buffer's size. */
	r->bytes = r->kind == ST_FADD || r->kind == ST_CSWAP ? 8 : rc->conn->request.size;
	r->bad_offset = -1;
	/* Post this side's receive before "ready" when the control channel is a
	 * socket, so the peer's SEND never meets an empty queue (an RNR NAK and
	 * a retry). With CM the control messages share this receive queue:
	 * a receive posted now would take the peer's "ready" message. */
	bool early = !rc->conn->cm_mode && step_recv_sges(rc, r) >= 0;

	ret = step_prepare(rc, idx, r);
	if (!ret && early)
		ret = post_step_recv(rc, idx, r);
	if (!ret)
		ret = rk_ctl_sync(ctl, (uint32_t)(2 * idx + 1), 0, tmo);
	if (!ret) {
		ret = step_act(rc, idx, r, early);
		r->status = ret;
		/* Tell the peer how it went, whatever it was. */
		int sret = rk_ctl_sync(ctl, (uint32_t)(2 * idx + 2), ret, tmo);

		if (!ret)
			ret = sret;
	}
	if (!ret)
		ret = step_finish(rc, idx, r);
	r->status = ret;
	rc->done = idx + 1;
	if (!rc->o->json)
		print_step(rc, idx, r);
	return ret;
}

/* ---- output ---- */

static void print_connected(const struct rc *rc)
{
	const struct rk_conn *c = rc->conn;
	char gid[64], flags[128];

	printf("%s: %s port %u", rc->who, c->dev->info.name, c->port_num);
	if (c->has_gid)
		printf(", GID %u %s %s", c->gid.index, rk_gid_type_str(c->gid.type),
		       rk_gid_str(&c->gid.gid, gid, sizeof(gid)));
	printf(" (%s)\n", c->cm_mode ? "RDMA CM" : "TCP exchange");
	if (c->has_gid && c->gid.why[0])
		printf("  %s\n", c->gid.why);
	printf("connected to %s: QP 0x%x", c->peer, c->qp->qp->qp_num);
	if (!c->cm_mode)
		printf(" <-> peer QP 0x%x, path MTU %d", c->remote.qpn, rk_mtu_bytes(c->path_mtu));
	printf("\n");
	if (rc->o->server)
		printf("exposing %" PRIu64 " bytes of %s%s, rkey 0x%x, access %s; client asks for "
		       "%s\n",
		       rc->o->size, rc->buf->dm ? "device memory" : "host memory",
		       rc->fell_back ? " (no device memory here: fell back, as --mem auto allows)" :
				       "",
		       rc->buf->rkey, rk_access_str(rc->buf_access, flags, sizeof(flags)),
		       op_name(rc->op));
	else
		printf("server exposes %" PRIu64 " bytes of %s at 0x%" PRIx64 ", rkey 0x%x; "
		       "running %s\n",
		       c->reply.len, c->reply.flags & RK_BUF_DM ? "device memory" : "host memory",
		       c->reply.addr, c->reply.rkey, op_name(rc->op));
	fflush(stdout);
}

static json_object *report_json(const struct rc *rc, int result)
{
	const struct rk_conn *c = rc->conn;
	json_object *doc = json_object_new_object(), *steps = json_object_new_array();
	char text[64];

	json_object_object_add(doc, "role", json_object_new_string(rc->who));
	json_object_object_add(doc, "connection",
			       json_object_new_string(rc->o->cm ? "cm" : "tcp"));
	json_object_object_add(doc, "op", json_object_new_string(op_name(rc->op)));
	json_object_object_add(doc, "size", json_object_new_int64((int64_t)rc->o->size));
	json_object_object_add(doc, "sge", json_object_new_int64((int64_t)rc->o->sge));
	json_object_object_add(doc, "events", json_object_new_boolean(rc->o->events));
	if (c) {
		json_object *g = json_object_new_object();

		json_object_object_add(doc, "device", json_object_new_string(c->dev->info.name));
		json_object_object_add(doc, "port", json_object_new_int(c->port_num));
		json_object_object_add(doc, "peer", json_object_new_string(c->peer));
		json_object_object_add(doc, "qpn", json_object_new_int64(c->qp->qp->qp_num));
		if (c->has_gid) {
			json_object_object_add(g, "index", json_object_new_int64(c->gid.index));
			json_object_object_add(g, "type", json_object_new_string(
								  rk_gid_type_str(c->gid.type)));
			json_object_object_add(g, "gid", json_object_new_string(rk_gid_str(
								 &c->gid.gid, text, sizeof(text))));
			json_object_object_add(doc, "gid", g);
		} else {
			json_object_put(g);
		}
		if (!c->cm_mode) {
			json_object_object_add(doc, "peer_qpn", json_object_new_int64(c->remote.qpn));
			json_object_object_add(doc, "path_mtu",
					       json_object_new_int(rk_mtu_bytes(c->path_mtu)));
		}
	}
	if (rc->buf) {
		json_object_object_add(doc, "memory", json_object_new_string(
							      rc->buf->dm ? "dm" : "host"));
		json_object_object_add(doc, "fell_back", json_object_new_boolean(rc->fell_back));
		json_object_object_add(doc, "rkey", json_object_new_int64(rc->buf->rkey));
	}
	for (int i = 0; i < rc->done; i++) {
		const struct step_rec *r = &rc->rec[i];
		json_object *s = json_object_new_object();

		json_object_object_add(s, "step", json_object_new_int(i + 1));
		json_object_object_add(s, "op", json_object_new_string(step_names[r->kind]));
		json_object_object_add(s, "bytes", json_object_new_int64(r->bytes));
		json_object_object_add(s, "ok", json_object_new_boolean(r->status == 0));
		json_object_object_add(s, "checked",
				       json_object_new_boolean(r->checked && r->bad_offset < 0));
		if (r->bad_offset >= 0)
			json_object_object_add(s, "first_bad_byte",
					       json_object_new_int64(r->bad_offset));
		if (r->has_imm)
			json_object_object_add(s, "imm", json_object_new_int64(r->imm));
		if (r->has_word) {
			json_object_object_add(s, "word_before",
					       json_object_new_int64((int64_t)r->word_before));
			json_object_object_add(s, "word_after",
					       json_object_new_int64((int64_t)r->word_after));
		}
		json_object_object_add(s, "buffer", json_object_new_string(r->preview));
		json_object_array_add(steps, s);
	}
	json_object_object_add(doc, "steps", steps);
	json_object_object_add(doc, "result", json_object_new_string(result ? "failed" : "ok"));
	if (result)
		json_object_object_add(doc, "error", json_object_new_string(rk_strerror(result)));
	return doc;
}

/* ---- main ---- */

static int parse_choices(struct rc *rc, const struct rc_opts *o)
{
	bool ok;

	if (!strcmp(o->mem, "host")) {
		rc->want_dm = false;
	} else if (!strcmp(o->mem, "dm")) {
		rc->want_dm = true;
	} else if (!strcmp(o->mem, "auto")) {
		rc->want_dm = true;
		rc->fallback = true;
	} else {
		fprintf(stderr, "rdmakit rc: option --mem: '%s' is not host, dm or auto\n", o->mem);
		return -EINVAL;
	}
	if (!o->server && strcmp(o->mem, "host")) {
		fprintf(stderr, "rdmakit rc: option --mem applies to the server's buffer\n");
		return -EINVAL;
	}
	if (!o->inject)
		rc->inject = INJ_NONE;
	else if (!strcmp(o->inject, "wrong-rkey") && !o->server)
		rc->inject = INJ_WRONG_RKEY;
	else if (!strcmp(o->inject, "outside") && !o->server)
		rc->inject = INJ_OUTSIDE;
	else if (!strcmp(o->inject, "no-access") && o->server)
		rc->inject = INJ_NO_ACCESS;
	else if (!strcmp(o->inject, "no-recv") && o->server)
		rc->inject = INJ_NO_RECV;
	else {
		fprintf(stderr, "rdmakit rc: option --inject: '%s' is not a fault this side can "
				"inject (client: wrong-rkey, outside; server: no-access, no-recv)\n",
			o->inject);
		return -EINVAL;
	}
	if (o->server && !strcmp(o->op, "any"))
		return 0;
	rc->op = op_code(o->op, &ok);
	if (!ok) {
		fprintf(stderr, "rdmakit rc: option --op: '%s' is not one of send, send-imm, "
				"write, write-imm, read, fetch-add, cmp-swap, all%s\n",
			o->op, o->server ? ", any" : "");
		return -EINVAL;
	}
	build_flow(rc);
	if (flow_has_atomics(rc) && o->size < 8) {
		fprintf(stderr, "rdmakit rc: option --size: atomics need at least 8 bytes\n");
		return -EINVAL;
	}
	if (o->sge > o->size) {
		fprintf(stderr, "rdmakit rc: option --sge: %" PRIu64 " pieces do not fit in %" PRIu64
				" bytes\n",
			o->sge, o->size);
		return -EINVAL;
	}
	return 0;
}

/* --mem dm on a device without device memory: say so at once, not when the
 * first client comes. (With --cm the device is the one -d names, or the
 * first, as CM has not picked one yet.) */
static bool server_lacks_dm(const struct rc_opts *o)
{
	struct rk_device *dev;
	bool lacks;

	if (rk_device_open(o->dev.device, &dev))
		return true;
	lacks = dev->info.max_dm_size == 0;
	if (lacks)
		rk_error("%s has no device memory (max_dm_size 0), so --mem dm cannot be served; "
			 "--mem auto falls back to host memory",
			 dev->info.name);
	rk_device_close(dev);
	return lacks;
}

int cmd_rc(int argc, char **argv)
{
	struct rc_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT, .port = RK_DEFAULT_PORT, .size = 4096,
		.sge = 1, .mem = "host", .timeout = 10, .rnr_retry = 7, .retry = 6,
	};
	const struct rk_opt opts[] = {
		{"server", 'S', RK_OPT_FLAG, &o.server, 0, 0, NULL, "be the server"},
		{"port", 'p', RK_OPT_COUNT, &o.port, 1, 65535, "PORT", "TCP or RDMA CM port"},
		{"cm", 'c', RK_OPT_FLAG, &o.cm, 0, 0, NULL,
		 "connect with RDMA CM instead of the TCP exchange"},
		CLI_DEV_OPTS(&o.dev),
		{"op", 'o', RK_OPT_STRING, &o.op, 0, 0, "OP",
		 "send|send-imm|write|write-imm|read|fetch-add|cmp-swap|all; client default all, "
		 "server default any (serve what the client runs)"},
		{"size", 's', RK_OPT_SIZE, &o.size, 1, 1u << 30, "BYTES",
		 "bytes per operation; the server's buffer size"},
		{"sge", 0, RK_OPT_COUNT, &o.sge, 1, MAX_SGE, "N",
		 "split local buffers into N scatter/gather pieces"},
		{"events", 'e', RK_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		{"mem", 'm', RK_OPT_STRING, &o.mem, 0, 0, "KIND",
		 "server buffer: host, dm (device memory), auto (dm, else host)"},
		{"timeout", 't', RK_OPT_COUNT, &o.timeout, 1, 3600, "SEC",
		 "client: keep trying to connect this long; both: bound on every wait"},
		{"wait", 'w', RK_OPT_COUNT, &o.wait, 0, 86400, "SEC",
		 "server: give up when no client came in SEC seconds (0: wait forever)"},
		{"inject", 0, RK_OPT_STRING, &o.inject, 0, 0, "FAULT",
		 "for tests: wrong-rkey|outside (client), no-access|no-recv (server)"},
		{"rnr-retry", 0, RK_OPT_COUNT, &o.rnr_retry, 0, 7, "N",
		 "RNR retries before IBV_WC_RNR_RETRY_EXC_ERR (7: forever; TCP exchange)"},
		{"retry", 0, RK_OPT_COUNT, &o.retry, 0, 7, "N",
		 "transport retries before IBV_WC_RETRY_EXC_ERR (TCP exchange; rxe takes 7 as "
		 "forever)"},
		{"json", 'j', RK_OPT_FLAG, &o.json, 0, 0, NULL, "print one JSON document"},
		{"auth-file", 0, RK_OPT_STRING, &o.auth_file, 0, 0, "PATH",
		 "shared secret (mode 600): both sides prove they hold it before the server "
		 "sends its buffer's address and rkey"},
		RK_OPT_END,
	};
	struct rc rc = {.o = &o};
	struct rk_conn_opts co = {0};
	struct rk_path_attr path;
	int first, ret;

	ret = cli_parse("rc", usage_text, description, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = cli_check_role_args("rc", o.server, argc, argv, first);
	if (ret >= 0)
		return ret;
	if (!o.op)
		o.op = o.server ? "any" : "all";
	if (parse_choices(&rc, &o))
		return CLI_USAGE;
	rc.who = o.server ? "server" : "client";
	if (o.server && rc.want_dm && !rc.fallback && server_lacks_dm(&o))
		return CLI_FAILED;
	rc.scratch = malloc(2 * o.size);
	if (!rc.scratch)
		return CLI_FAILED;

	cli_conn_opts(&co, o.server, argv[first], o.port, o.cm, &o.dev, (int)o.timeout * 1000,
		      o.wait);
	co.events = o.events;
	co.transport = RK_RC;
	co.qp.max_send_wr = 16;
	co.qp.max_recv_wr = 16;
	co.qp.max_send_sge = (uint32_t)o.sge;
	co.qp.max_recv_sge = (uint32_t)o.sge;
	rk_path_defaults(&path);
	path.rnr_retry = (uint8_t)o.rnr_retry;
	path.retry_cnt = (uint8_t)o.retry;
	co.path = &path;
	co.prepare = prepare;
	co.on_request = on_request;
	co.auth_file = o.auth_file;
	co.release = release;
	co.arg = &rc;
	if (!o.json && o.server)
		printf("server: waiting for a client on port %" PRIu64 " (%s)\n", o.port,
		       o.cm ? "RDMA CM" : "TCP exchange");
	fflush(stdout);
	ret = rk_conn_establish(&co, &rc.conn);
	if (!ret && !o.server)
		ret = check_reply(&rc);
	if (!ret && !o.json)
		print_connected(&rc);
	for (int i = 0; !ret && i < rc.nsteps; i++)
		ret = run_step(&rc, i);
	/* A last sync: neither side tears down while the other still works. */
	if (!ret)
		ret = rk_ctl_sync(rc.conn->ctl, 1000, 0, rc.conn->timeout_ms);
	if (o.json)
		cli_json_print(report_json(&rc, ret));
	else if (!ret)
		printf("%s: %d step%s done, every byte checked: OK\n", rc.who, rc.nsteps,
		       rc.nsteps > 1 ? "s" : "");
	else
		printf("%s: FAILED (%s)\n", rc.who, rk_strerror(ret));
	rk_conn_close(rc.conn);
	free(rc.scratch);
	return ret ? CLI_FAILED : CLI_OK;
}
