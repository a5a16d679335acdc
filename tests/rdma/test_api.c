/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Public calls that only the library's own engines used (issue 33), called
 * as a program on librdmakit would, on a real device: memory regions (alloc,
 * write, read back, SGE, bounds, precheck), device memory's refusal where
 * the device has none, a caller's buffer registered with rk_mr_reg() and
 * written into by RDMA WRITE once rk_qp_set_access() allows it, address
 * handles, a QP of the ibv_wr_* API, port checks and the async event logger,
 * import of another context's objects; rk_conn_listen/accept/establish over
 * TCP with an RDMA WRITE waited for by rk_conn_wait(); and RDMA CM in port
 * space TCP with another program's private data both ways (listen_ps,
 * resolve_from, get_request_any, connect_raw, accept_raw, private_data,
 * peer_left, wait_peer_left). Servers run in threads, to 198.18.0.1. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define PORT_BASE 18840 /* this test's ports: PORT_BASE, PORT_BASE + 1, ... */
#define WAIT_MS	  10000
#define LEN	  4096

static uint8_t pattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 13 + seed);
}

static void fill(uint8_t *b, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(i, seed);
}

/* RDMA WRITE of mr's first len bytes to addr, rkey, signaled as wr_id. */
static int post_write(struct rk_qp *qp, const struct rk_mr *mr, size_t len, uint64_t wr_id,
		      uint64_t addr, uint32_t rkey)
{
	struct ibv_sge sge = rk_sge(mr, 0, (uint32_t)len);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = wr_id, .sg = &sge, .nsge = 1,
			   .flags = RK_WR_SIGNALED, .remote_addr = addr, .rkey = rkey};

	return rk_post(qp, &wr);
}

/* ---- memory: regions, device memory, rk_mr_reg ---- */

/* A host region: what is written reads back, the SGE covers the bytes asked
 * for with the region's key, copies outside it are -ERANGE. */
static void test_region(void **state)
{
	struct rk_region_opts host = {.kind = RK_MEM_HOST};
	struct rk_region *r = NULL;
	uint8_t in[300], out[300];
	struct ibv_sge sge;
	struct fx f;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	assert_int_equal(rk_region_precheck(f.dev->info.name, &host, LEN), 0);
	assert_int_equal(rk_region_alloc(f.dev, f.pd, LEN, IBV_ACCESS_LOCAL_WRITE, &host, &r), 0);
	assert_int_equal(r->kind, RK_MEM_HOST);
	assert_int_equal(r->len, LEN);
	fill(in, sizeof(in), 5);
	memset(out, 0, sizeof(out));
	assert_int_equal(rk_region_write(r, 1000, in, sizeof(in)), 0);
	assert_int_equal(rk_region_read(r, 1000, out, sizeof(out)), 0);
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(rk_region_write(r, LEN - 10, in, 11), -ERANGE);
	assert_int_equal(rk_region_read(r, LEN + 1, out, 0), -ERANGE);
	sge = rk_region_sge(r, 1000, 300);
	assert_int_equal(sge.addr, r->base + 1000);
	assert_int_equal(sge.length, 300);
	assert_int_equal(sge.lkey, r->lkey);
	assert_int_equal(r->lkey, r->host->mr->lkey);
	assert_memory_equal((const void *)(uintptr_t)sge.addr, in, sizeof(in));
	rk_region_free(r);
	rk_region_free(NULL);
	fx_close(&f);
}

/* Device memory: where the device has none (rxe), rk_dm_alloc() and a
 * region of it are refused with -EOPNOTSUPP and the reason; where it has
 * some, a round trip through it. */
static void test_dm(void **state)
{
	struct rk_region_opts dm_opts = {.kind = RK_MEM_DM};
	struct rk_dm *dm = NULL;
	uint8_t in[256], out[256];
	struct fx f;
	int ret;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	ret = rk_dm_alloc(f.dev, f.pd, sizeof(in), IBV_ACCESS_LOCAL_WRITE, &dm);
	printf("# %s: max_dm_size %llu, rk_dm_alloc: %d\n", f.dev->info.name,
	       (unsigned long long)f.dev->info.max_dm_size, ret);
	if (f.dev->info.max_dm_size == 0) {
		assert_int_equal(ret, -EOPNOTSUPP);
		assert_null(dm);
		assert_non_null(strstr(f.last_log, "has no device memory"));
		assert_int_equal(rk_region_precheck(f.dev->info.name, &dm_opts, 4096), -EOPNOTSUPP);
	} else {
		assert_int_equal(ret, 0);
		fill(in, sizeof(in), 9);
		assert_int_equal(rk_dm_write(dm, 0, in, sizeof(in)), 0);
		assert_int_equal(rk_dm_read(dm, 0, out, sizeof(out)), 0);
		assert_memory_equal(out, in, sizeof(in));
		assert_int_equal(rk_dm_write(dm, 1, in, sizeof(in)), -ERANGE);
		rk_dm_free(dm);
	}
	fx_close(&f);
}

/* B's QP is connected with no remote access; rk_qp_set_access() then allows
 * WRITE (RTS -> RTS), and A's RDMA WRITE lands in a buffer of the caller's
 * own registered by rk_mr_reg(). */
static void test_mr_reg_and_set_access(void **state)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	enum ibv_qp_state st;
	struct rk_mr *mr = NULL;
	struct ibv_wc wc;
	uint8_t *buf;
	struct fx f;

	(void)state;
	assert_int_equal(fx_open_connected(&f, 0, 1, false, 0), 0);
	buf = aligned_alloc(4096, LEN);
	assert_non_null(buf);
	memset(buf, 0, LEN);
	assert_int_equal(rk_mr_reg(f.pd, buf, LEN, access, &mr), 0);
	assert_ptr_equal(mr->buf, buf);
	assert_int_equal(mr->len, LEN);
	assert_int_equal(mr->access, access);
	assert_int_equal(mr->owns_buf, 0);

	assert_int_equal(rk_qp_set_access(f.qp_b, IBV_ACCESS_REMOTE_WRITE), 0);
	assert_int_equal(ibv_query_qp(f.qp_b->qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &ia), 0);
	assert_int_equal(qa.qp_state, IBV_QPS_RTS);
	assert_int_equal(qa.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(f.qp_b->access, IBV_ACCESS_REMOTE_WRITE);

	fill(f.mr_a->buf, LEN, 3);
	assert_int_equal(post_write(f.qp_a, f.mr_a, LEN, 11, (uintptr_t)buf, mr->mr->rkey), 0);
	assert_int_equal(fx_wait(f.cq_a, &wc), 0);
	assert_string_equal(rk_wc_status_name(wc.status), "IBV_WC_SUCCESS");
	assert_int_equal(wc.wr_id, 11);
	assert_memory_equal(buf, f.mr_a->buf, LEN);
	assert_int_equal(rk_qp_query_state(f.qp_b, &st), 0);
	assert_int_equal(st, IBV_QPS_RTS);
	rk_mr_free(mr); /* the caller's buffer stays */
	buf[0] ^= 1;
	free(buf);
	fx_close(&f);
}

/* Address handles to B from A's GID, the same from a GID given, and the
 * refusal of a peer without a GID on RoCE. */
static void test_ah(void **state)
{
	struct ibv_ah *ah = NULL, *ah2 = NULL, *ah3 = NULL;
	struct rk_endpoint eb, none;
	struct fx f;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	rk_qp_local_endpoint(f.qp_b, &eb);
	assert_int_equal(rk_ah_create(f.qp_a, &eb, &ah), 0);
	assert_non_null(ah);
	assert_ptr_equal(ah->pd, f.pd);
	assert_int_equal(rk_ah_create_from(f.qp_a, NULL, &eb, &ah2), 0);
	assert_non_null(ah2);
	if (f.has_gid) {
		assert_int_equal(rk_ah_create_from(f.qp_a, &f.gid, &eb, &ah3), 0);
		assert_non_null(ah3);
		none = eb;
		memset(&none.gid, 0, sizeof(none.gid));
		assert_int_equal(rk_ah_create(f.qp_a, &none, &ah), -EINVAL);
		assert_non_null(strstr(f.last_log, "RoCE needs one"));
		assert_int_equal(ibv_destroy_ah(ah3), 0);
	}
	assert_int_equal(ibv_destroy_ah(ah2), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	fx_close(&f);
}

/* A QP for the ibv_wr_* API: created in RESET, with its qp_ex; no send ops
 * is refused. */
static void test_qp_create_ex(void **state)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC};
	struct rk_qp *qp = NULL;
	enum ibv_qp_state st;
	struct fx f;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	qa.port_num = f.port;
	qa.gid = f.has_gid ? &f.gid : NULL;
	assert_int_equal(rk_qp_create_ex(f.pd, f.dev, f.cq_a, f.cq_a, &qa, 0, &qp), -EINVAL);
	assert_null(qp);
	assert_int_equal(rk_qp_create_ex(f.pd, f.dev, f.cq_a, f.cq_a, &qa,
					 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE, &qp),
			 0);
	assert_non_null(ibv_qp_to_qp_ex(qp->qp));
	assert_int_equal(rk_qp_query_state(qp, &st), 0);
	assert_int_equal(st, IBV_QPS_RESET);
	rk_qp_destroy(qp);
	fx_close(&f);
}

/* The port checks, and the async event logger: started, the port not down. */
static void test_ports_and_async_log(void **state)
{
	uint8_t beyond;
	struct fx f;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	beyond = (uint8_t)(f.dev->info.phys_port_cnt + 1);
	assert_int_equal(rk_port_check(f.dev, f.port), 0);
	assert_int_equal(rk_port_check(f.dev, beyond), -EINVAL);
	assert_int_equal(rk_port_check(f.dev, 0), -EINVAL);
	assert_int_equal(rk_port_check_active(f.dev, f.port), 0);
	assert_int_equal(rk_port_check_active(f.dev, beyond), -EINVAL);
	assert_false(rk_device_port_down(f.dev, f.port)); /* no logger yet */
	assert_int_equal(rk_async_log_start(f.dev), 0);
	assert_non_null(f.dev->logger);
	assert_false(rk_device_port_down(f.dev, f.port));
	fx_close(&f); /* stops the logger */
}

/* Import of this process's own context, PD and MR through a duplicate of
 * its command fd: where the provider cannot import (rxe), -EOPNOTSUPP said
 * by name; where it can, the imported MR is the owner's. */
static void test_share_import(void **state)
{
	struct rk_imported *imp = NULL;
	struct rk_share_handles h;
	struct fx f;
	int ret;

	(void)state;
	assert_int_equal(fx_open(&f, 0, 1, false), 0);
	memset(&h, 0, sizeof(h));
	h.pd_handle = f.pd->handle;
	h.mr_handle = f.mr_a->mr->handle;
	h.mr_addr = (uintptr_t)f.mr_a->buf;
	h.mr_len = FX_BUF;
	h.lkey = f.mr_a->mr->lkey;
	h.rkey = f.mr_a->mr->rkey;
	ret = rk_share_import(dup(f.dev->ctx->cmd_fd), &h, &imp);
	printf("# import on %s: %d (%s)\n", f.dev->info.name, ret, rk_strerror(ret));
	if (strncmp(f.dev->info.name, "rxe", 3) == 0 || ret == -EOPNOTSUPP) {
		assert_int_equal(ret, -EOPNOTSUPP);
		assert_null(imp);
		assert_non_null(strstr(f.last_log, "EOPNOTSUPP from the provider"));
	} else {
		assert_int_equal(ret, 0);
		assert_int_equal(imp->mr->lkey, h.lkey);
		assert_int_equal(imp->mr->rkey, h.rkey);
		assert_int_equal(imp->pd->handle, h.pd_handle);
		rk_share_unimport(imp);
	}
	fx_close(&f);
}

/* ---- rk_conn_*: a server of the listener kind, TCP exchange ---- */

struct conn_side {
	struct rk_mr *mr;
	uint8_t *buf;     /* server: the caller's own, registered by rk_mr_reg() */
	int on_request;   /* server: calls */
	int released;
};

static int cli_prepare(struct rk_conn *conn, struct rk_wire_buf *req, int *qp_access,
		       char *why, size_t why_len, void *arg)
{
	struct conn_side *c = arg;
	int ret;

	(void)why;
	(void)why_len;
	ret = rk_mr_alloc(conn->pd, LEN, IBV_ACCESS_LOCAL_WRITE, &c->mr);
	if (ret)
		return ret;
	memset(req, 0, sizeof(*req));
	req->op = RK_WIRE_OP_PING;
	req->size = LEN;
	req->len = 1;
	*qp_access = 0;
	return 0;
}

static int srv_on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
			  struct rk_wire_buf *reply, int *qp_access, char *reason,
			  size_t reason_len, void *arg)
{
	struct conn_side *c = arg;
	int ret;

	c->on_request++;
	if (req->size != LEN) {
		snprintf(reason, reason_len, "size %u, not %u", req->size, LEN);
		return -EINVAL;
	}
	c->buf = calloc(1, LEN);
	if (!c->buf)
		return -ENOMEM;
	ret = rk_mr_reg(conn->pd, c->buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			&c->mr);
	if (ret)
		return ret;
	memset(reply, 0, sizeof(*reply));
	reply->addr = (uintptr_t)c->buf;
	reply->len = LEN;
	reply->rkey = c->mr->mr->rkey;
	*qp_access = IBV_ACCESS_REMOTE_WRITE;
	return 0;
}

static void side_release(struct rk_conn *conn, void *arg)
{
	struct conn_side *c = arg;

	(void)conn;
	c->released++;
	rk_mr_free(c->mr);
	c->mr = NULL;
}

struct conn_server {
	struct rk_conn_listener *l;
	struct rk_conn_opts o;
	struct conn_side side;
	pthread_t thread;
	int accept_ret, est_ret, sync1_ret, sync2_ret;
	size_t bad_bytes;
};

static void *conn_serve(void *arg)
{
	struct conn_server *s = arg;
	struct rk_conn *pending = NULL, *conn = NULL;

	s->accept_ret = rk_conn_accept(s->l, WAIT_MS, &pending);
	if (s->accept_ret)
		return NULL;
	s->est_ret = rk_conn_establish_accepted(pending, &s->o, &conn);
	if (s->est_ret)
		return NULL;
	/* 1: the client's WRITE is done; look at the buffer, then 2. */
	s->sync1_ret = rk_ctl_sync(conn->ctl, 1, 0, WAIT_MS);
	s->bad_bytes = LEN;
	if (!s->sync1_ret) {
		s->bad_bytes = 0;
		for (size_t i = 0; i < LEN; i++)
			s->bad_bytes += s->side.buf[i] != pattern(i, 77);
	}
	s->sync2_ret = rk_ctl_sync(conn->ctl, 2, 0, WAIT_MS);
	rk_conn_close(conn);
	return NULL;
}

static void test_conn(void **state)
{
	struct conn_server s;
	struct conn_side cs = {0};
	struct rk_conn_opts co;
	struct rk_conn *conn = NULL, *none = NULL;
	struct ibv_wc wc;
	uint16_t port = fx_next_port(PORT_BASE);

	(void)state;
	memset(&s, 0, sizeof(s));
	s.o.server = true;
	s.o.bind_ip = fx_test_ip();
	s.o.port = port;
	s.o.gid_index = -1;
	s.o.timeout_ms = WAIT_MS;
	s.o.accept_timeout_ms = WAIT_MS;
	s.o.on_request = srv_on_request;
	s.o.release = side_release;
	s.o.arg = &s.side;
	assert_int_equal(rk_conn_listen(&s.o, &s.l), 0);
	/* Nobody has come yet. */
	assert_int_equal(rk_conn_accept(s.l, 200, &none), -ETIMEDOUT);
	assert_null(none);
	assert_int_equal(pthread_create(&s.thread, NULL, conn_serve, &s), 0);

	memset(&co, 0, sizeof(co));
	co.host = fx_test_ip();
	co.port = port;
	co.gid_index = -1;
	co.timeout_ms = WAIT_MS;
	co.prepare = cli_prepare;
	co.release = side_release;
	co.arg = &cs;
	assert_int_equal(rk_conn_establish(&co, &conn), 0);
	assert_non_null(conn->qp);
	assert_int_equal(conn->reply.len, LEN);

	fill(cs.mr->buf, LEN, 77);
	/* A completion of another request than the one waited for: -EPROTO. */
	assert_int_equal(post_write(conn->qp, cs.mr, LEN, 21, conn->reply.addr, conn->reply.rkey), 0);
	assert_int_equal(rk_conn_wait(conn, 22, "write", &wc), -EPROTO);
	assert_int_equal(post_write(conn->qp, cs.mr, LEN, 23, conn->reply.addr, conn->reply.rkey), 0);
	memset(&wc, 0, sizeof(wc));
	assert_int_equal(rk_conn_wait(conn, 23, "write", &wc), 0);
	assert_int_equal(wc.wr_id, 23);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(rk_ctl_sync(conn->ctl, 1, 0, WAIT_MS), 0);
	assert_int_equal(rk_ctl_sync(conn->ctl, 2, 0, WAIT_MS), 0);
	rk_conn_close(conn);
	rk_conn_close(NULL);
	assert_int_equal(pthread_join(s.thread, NULL), 0);
	assert_int_equal(s.accept_ret, 0);
	assert_int_equal(s.est_ret, 0);
	assert_int_equal(s.side.on_request, 1);
	assert_int_equal(s.sync1_ret, 0);
	assert_int_equal(s.sync2_ret, 0);
	assert_int_equal(s.bad_bytes, 0);
	assert_int_equal(s.side.released, 1);
	assert_int_equal(cs.released, 1);
	free(s.side.buf);
	rk_conn_listener_close(s.l);
}

/* ---- RDMA CM with another program's private data ---- */

static const char cli_data[] = "client: not rdmakit's CM_HELLO";
static const char srv_data[] = "server: nor this";

struct cm_server {
	struct rk_cm *listener;
	pthread_t thread;
	int get_ret, accept_ret;
	char got[64];
	size_t got_len;
	bool left;
};

static void *cm_serve(void *arg)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC};
	struct cm_server *s = arg;
	struct rk_cm *cm = NULL;
	struct ibv_pd *pd = NULL;
	struct rk_cq *cq = NULL;
	struct rk_qp *qp = NULL;
	const uint8_t *pd_data;
	size_t len = 0;

	s->get_ret = rk_cm_get_request_any(s->listener, WAIT_MS, &cm);
	if (s->get_ret)
		return NULL;
	pd_data = rk_cm_private_data(cm, &len);
	s->got_len = len;
	if (pd_data)
		memcpy(s->got, pd_data, len < sizeof(s->got) ? len : sizeof(s->got));
	s->accept_ret = rk_pd_alloc(cm->dev, &pd);
	if (!s->accept_ret)
		s->accept_ret = rk_cq_create(cm->dev, 16, false, &cq);
	if (!s->accept_ret)
		s->accept_ret = rk_cm_create_qp(cm, pd, cq, cq, &qa, &qp);
	if (!s->accept_ret)
		s->accept_ret = rk_cm_accept_raw(cm, qp, srv_data, sizeof(srv_data), WAIT_MS);
	if (!s->accept_ret)
		s->left = rk_cm_wait_peer_left(cm, WAIT_MS);
	rk_qp_destroy(qp);
	rk_cq_destroy(cq);
	rk_pd_free(pd);
	rk_cm_destroy(cm);
	return NULL;
}

static void test_cm_raw(void **state)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC};
	const char *ip = fx_test_ip();
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_cm *cm = NULL, *other = NULL;
	struct cm_server s;
	struct ibv_ah_attr ah;
	struct ibv_pd *pd = NULL;
	struct rk_cq *cq = NULL;
	struct rk_qp *qp = NULL;
	uint32_t qpn = 0, qkey = 0;
	const uint8_t *data;
	size_t len = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rk_cm_listen_ps(ip, port, RDMA_PS_TCP, NULL, &s.listener), 0);
	assert_true(s.listener->listening);
	assert_int_equal(pthread_create(&s.thread, NULL, cm_serve, &s), 0);

	/* Resolution alone, in port space UDP, and a source that is not an
	 * address. */
	assert_int_equal(rk_cm_resolve_ps(ip, port, RDMA_PS_UDP, NULL, WAIT_MS, &other), 0);
	assert_non_null(other->dev);
	assert_int_equal(rk_cm_ud_peer(other, &ah, &qpn, &qkey), -ENOTCONN);
	rk_cm_destroy(other);
	other = NULL;
	assert_int_equal(rk_cm_resolve_from(ip, port, RDMA_PS_TCP, NULL, "not-an-address", WAIT_MS,
					    &other),
			 -EINVAL);
	assert_null(other);

	/* From the test address itself: connect with our bytes, get theirs. */
	assert_int_equal(rk_cm_resolve_from(ip, port, RDMA_PS_TCP, NULL, ip, WAIT_MS, &cm), 0);
	assert_int_equal(rk_pd_alloc(cm->dev, &pd), 0);
	assert_int_equal(rk_cq_create(cm->dev, 16, false, &cq), 0);
	assert_int_equal(rk_cm_create_qp(cm, pd, cq, cq, &qa, &qp), 0);
	assert_int_equal(rk_cm_connect_raw(cm, qp, cli_data, sizeof(cli_data), WAIT_MS), 0);
	assert_true(cm->connected);
	data = rk_cm_private_data(cm, &len);
	assert_non_null(data);
	assert_true(len >= sizeof(srv_data)); /* RoCE pads it */
	assert_memory_equal(data, srv_data, sizeof(srv_data));
	assert_false(rk_cm_peer_left(cm)); /* the server waits for us to go */
	rk_cm_disconnect(cm, 2000);
	rk_qp_destroy(qp);
	rk_cq_destroy(cq);
	rk_pd_free(pd);
	rk_cm_destroy(cm);

	assert_int_equal(pthread_join(s.thread, NULL), 0);
	assert_int_equal(s.get_ret, 0);
	assert_int_equal(s.accept_ret, 0);
	assert_true(s.got_len >= sizeof(cli_data));
	assert_memory_equal(s.got, cli_data, sizeof(cli_data));
	assert_true(s.left);
	rk_cm_destroy(s.listener);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region),
		cmocka_unit_test(test_dm),
		cmocka_unit_test(test_mr_reg_and_set_access),
		cmocka_unit_test(test_ah),
		cmocka_unit_test(test_qp_create_ex),
		cmocka_unit_test(test_ports_and_async_log),
		cmocka_unit_test(test_share_import),
		cmocka_unit_test(test_conn),
		cmocka_unit_test(test_cm_raw),
	};

	return fx_run("the public API's calls", tests);
}
