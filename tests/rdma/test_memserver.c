/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit memserver on a real device: the server (rk_memserver_*) runs in a
 * thread; the client is plain librdmacm doing what the rkblk module does for
 * each queue: post a receive for the region, connect with a struct
 * rk_mem_req, take the region from the SEND, then RDMA WRITE and READ in it.
 * Checked: a new session is zeroed; a second queue and a reconnect within
 * --keep see the same bytes; two sessions are apart; an expired session is
 * -ENOENT; malformed requests, --allow, --max-clients and a queue connected
 * twice are refused with their code and reason; a registration failing
 * after the accept is told in place of the region; --state-dir survives a
 * server restart; sessions in huge pages, and the empty pool refused; with
 * RK_MEM_REQ_SENDS_FIRST the region comes only after the client's SEND. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define WAIT_MS	 10000
#define SIZE	 (1u << 20)
#define BUF_LEN	 65536
#define IO_LEN	 16384
#define IO_OFF	 (3 * 4096)

/* ---- the server in a thread ---- */

struct server {
	struct rk_memserver_opts o;
	struct rk_cidr allow[2];
	struct rk_memserver *srv;
	pthread_t thread;
	int ret;
	bool running;
};

static void *serve(void *arg)
{
	struct server *s = arg;

	s->ret = rk_memserver_run(s->srv);
	return NULL;
}

static void server_start(struct server *s)
{
	if (!s->o.port)
		s->o.port = fx_next_port(18720);
	s->o.allow = s->allow;
	assert_int_equal(rk_memserver_create(&s->o, &s->srv), 0);
	assert_int_equal(rk_memserver_port(s->srv), s->o.port);
	s->running = true;
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Stop the loop; the server and its sessions stay until server_stop(). */
static void server_halt(struct server *s)
{
	rk_memserver_stop(s->srv);
	pthread_join(s->thread, NULL);
	s->running = false;
	assert_int_equal(s->ret, 0);
}

static void server_stop(struct server *s)
{
	if (s->running)
		server_halt(s);
	rk_memserver_destroy(s->srv);
	s->srv = NULL;
}

/* ---- the client: what rkblk does per queue ---- */

struct client {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;         /* BUF_LEN: data; the region message at the end */
	struct rk_mem_region region; /* host order */
	int code;             /* a reject's code, 0 */
	char text[RK_MEM_REJECT_TEXT + 1];
};

#define MSG_OFF (BUF_LEN - RK_MEM_REJECT_LEN)

static struct rk_mem_req make_req(uint16_t queue, uint16_t queues, uint64_t session,
				  uint64_t size)
{
	struct rk_mem_req r = {
		.magic = htobe32(RK_MEM_MAGIC), .version = htobe16(RK_MEM_VERSION),
		.queue = htobe16(queue), .queues = htobe16(queues),
		.session = htobe64(session), .size = htobe64(size),
	};
	return r;
}

static int wait_event(struct client *c, enum rdma_cm_event_type want, struct rdma_cm_event **e_p)
{
	struct pollfd pfd = {.fd = c->ch->fd, .events = POLLIN};
	struct rdma_cm_event *e;

	if (poll(&pfd, 1, WAIT_MS) != 1) {
		fprintf(stderr, "# no RDMA CM event within %d ms (waiting for %s)\n", WAIT_MS,
			rdma_event_str(want));
		return -ETIMEDOUT;
	}
	if (rdma_get_cm_event(c->ch, &e))
		return -errno;
	if (e->event != want && !(e_p && e->event == RDMA_CM_EVENT_REJECTED)) {
		fprintf(stderr, "# got %s (status %d), wanted %s\n", rdma_event_str(e->event),
			e->status, rdma_event_str(want));
		rdma_ack_cm_event(e);
		return -EPROTO;
	}
	if (e_p) {
		*e_p = e;
		return 0;
	}
	rdma_ack_cm_event(e);
	return 0;
}

static void client_close(struct client *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

static void client_setup(struct client *c, uint16_t port)
{
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 2,
					      .max_send_sge = 1, .max_recv_sge = 1}};

	memset(c, 0, sizeof(*c));
	inet_pton(AF_INET, fx_test_ip(), &dst.sin_addr);
	assert_non_null(c->ch = rdma_create_event_channel());
	assert_int_equal(rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 2000), 0);
	assert_int_equal(wait_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL), 0);
	assert_int_equal(rdma_resolve_route(c->id, 2000), 0);
	assert_int_equal(wait_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL), 0);
	assert_non_null(c->pd = ibv_alloc_pd(c->id->verbs));
	assert_non_null(c->cq = ibv_create_cq(c->id->verbs, 16, NULL, NULL, 0));
	assert_non_null(c->buf = aligned_alloc(4096, BUF_LEN));
	memset(c->buf, 0, BUF_LEN);
	assert_non_null(c->mr = ibv_reg_mr(c->pd, c->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE));
	qa.send_cq = qa.recv_cq = c->cq;
	assert_int_equal(rdma_create_qp(c->id, c->pd, &qa), 0);
}

static int poll_one(struct client *c, struct ibv_wc *wc)
{
	for (int i = 0; i < WAIT_MS * 10; i++) {
		int n = ibv_poll_cq(c->cq, 1, wc);

		if (n)
			return n < 0 ? -EIO : 0;
		usleep(100);
	}
	return -ETIMEDOUT;
}

/* The server's SEND: the region, 0; or why it could not make it
 * (memproto.h step 4), its code with the text in c->text. */
static int take_region(struct client *c)
{
	const struct rk_mem_region *m = (const void *)(c->buf + MSG_OFF);
	struct ibv_wc wc;

	assert_int_equal(poll_one(c, &wc), 0);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	if (wc.byte_len == RK_MEM_REJECT_LEN) {
		assert_int_equal(rk_mem_reject_decode(m, wc.byte_len, &c->code, c->text,
						      sizeof(c->text)), 0);
		fprintf(stderr, "# no region: code %d, \"%s\"\n", c->code, c->text);
		assert_true(c->code < 0);
		return c->code;
	}
	assert_int_equal(wc.byte_len, RK_MEM_REGION_LEN);
	assert_int_equal(be32toh(m->magic), RK_MEM_MAGIC);
	assert_int_equal(be16toh(m->version), RK_MEM_VERSION);
	c->region.queue = be16toh(m->queue);
	c->region.session = be64toh(m->session);
	c->region.addr = be64toh(m->addr);
	c->region.length = be64toh(m->length);
	c->region.rkey = be32toh(m->rkey);
	c->region.flags = be32toh(m->flags);
	assert_true(c->region.session != 0);
	return 0;
}

/* Connect with len bytes of data; 0, or the reject's code (text in c->text). */
static int client_connect_raw(struct client *c, uint16_t port, const void *data, uint8_t len)
{
	struct ibv_sge sge = {.length = RK_MEM_REJECT_LEN};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;
	struct rdma_conn_param p = {.private_data = data, .private_data_len = len,
				    .responder_resources = 0, .retry_count = 6,
				    .rnr_retry_count = 6};
	struct ibv_device_attr attr;
	struct rdma_cm_event *e;

	client_setup(c, port);
	sge.addr = (uintptr_t)(c->buf + MSG_OFF);
	sge.lkey = c->mr->lkey;
	assert_int_equal(ibv_query_device(c->id->verbs, &attr), 0);
	p.initiator_depth = (uint8_t)(attr.max_qp_init_rd_atom < 16 ? attr.max_qp_init_rd_atom : 16);
	/* The receive for the region goes first: the server never relies on RNR. */
	assert_int_equal(ibv_post_recv(c->id->qp, &wr, &bad), 0);
	assert_int_equal(rdma_connect(c->id, &p), 0);
	assert_int_equal(wait_event(c, RDMA_CM_EVENT_ESTABLISHED, &e), 0);
	if (e->event == RDMA_CM_EVENT_REJECTED) {
		int ret = rk_mem_reject_decode(e->param.conn.private_data,
					       e->param.conn.private_data_len, &c->code, c->text,
					       sizeof(c->text));

		fprintf(stderr, "# rejected: status %d, code %d, \"%s\"\n", e->status, c->code,
			c->text);
		rdma_ack_cm_event(e);
		assert_int_equal(ret, 0);
		assert_true(c->code < 0);
		return c->code;
	}
	rdma_ack_cm_event(e);
	return take_region(c);
}

static int client_connect(struct client *c, uint16_t port, uint16_t queue, uint16_t queues,
			  uint64_t session, uint64_t size)
{
	struct rk_mem_req r = make_req(queue, queues, session, size);

	return client_connect_raw(c, port, &r, sizeof(r));
}

static void client_disconnect(struct client *c)
{
	assert_int_equal(rdma_disconnect(c->id), 0);
	assert_int_equal(wait_event(c, RDMA_CM_EVENT_DISCONNECTED, NULL), 0);
	client_close(c);
}

/* RDMA WRITE or READ len bytes between buf+local and region+remote. */
static enum ibv_wc_status rdma_op(struct client *c, enum ibv_wr_opcode op, size_t local,
				  uint64_t remote, uint32_t len, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(c->buf + local), .length = len,
			      .lkey = c->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = c->region.addr + remote;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(c->id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(c, &wc), 0);
	return wc.status;
}

static uint8_t pat(uint64_t session, size_t i)
{
	return (uint8_t)(i * 7 + (session & 0xff) + 1);
}

static void write_pattern(struct client *c)
{
	for (size_t i = 0; i < IO_LEN; i++)
		c->buf[i] = pat(c->region.session, i);
	assert_int_equal(rdma_op(c, IBV_WR_RDMA_WRITE, 0, IO_OFF, IO_LEN, c->region.rkey),
			 IBV_WC_SUCCESS);
}

/* Read [off, off+IO_LEN) of the region into the buffer's second half. */
static uint8_t *read_back(struct client *c, uint64_t off)
{
	memset(c->buf + IO_LEN, 0xee, IO_LEN);
	assert_int_equal(rdma_op(c, IBV_WR_RDMA_READ, IO_LEN, off, IO_LEN, c->region.rkey),
			 IBV_WC_SUCCESS);
	return c->buf + IO_LEN;
}

static void check_pattern(struct client *c, uint64_t session)
{
	uint8_t *got = read_back(c, IO_OFF);

	for (size_t i = 0; i < IO_LEN; i++)
		if (got[i] != pat(session, i))
			fail_msg("byte %zu of the region: 0x%02x, expected 0x%02x", i, got[i],
				 pat(session, i));
}

static void check_zero(struct client *c, uint64_t off)
{
	uint8_t *got = read_back(c, off);

	for (size_t i = 0; i < IO_LEN; i++)
		if (got[i])
			fail_msg("byte %zu at offset %llu of a new region: 0x%02x, expected 0",
				 i, (unsigned long long)off, got[i]);
}

/* ---- tests ---- */

/* What test_sessions leaves: two idle sessions of SIZE, 4 accepts, 2 rejects. */
static void check_status(struct rk_memserver *srv, uint64_t id, uint64_t other_id)
{
	struct rk_memserver_status *st;
	int found = 0;

	assert_int_equal(rk_memserver_status(srv, &st), 0);
	assert_int_equal(st->nsessions, 2);
	assert_int_equal(st->connections, 0);
	assert_int_equal(st->bytes, 2 * SIZE);
	assert_int_equal(st->sessions_made, 2);
	assert_int_equal(st->accepted, 4);
	assert_int_equal(st->rejected, 2);
	assert_int_equal(st->disconnected, 4);
	for (int i = 0; i < st->nsessions; i++) {
		const struct rk_memserver_session_info *si = &st->sessions[i];

		found += si->id == id || si->id == other_id;
		assert_int_equal(si->size, SIZE);
		assert_int_equal(si->queues, 0);
		assert_string_equal(si->client, fx_test_ip());
		assert_true(si->idle_since >= si->created);
		assert_true(si->expires > si->idle_since);
	}
	assert_int_equal(found, 2);
	assert_true(st->ncounters >= 1);
	rk_memserver_status_free(st);
}

static void test_sessions(void **state)
{
	struct server s = {.o = {.keep_s = 30}};
	struct client q0, q1, other, again;
	uint64_t id, other_id;

	(void)state;
	server_start(&s);
	/* New session: zeroed at both ends and in the middle. */
	assert_int_equal(client_connect(&q0, s.o.port, 0, 2, 0, SIZE), 0);
	id = q0.region.session;
	assert_int_equal(q0.region.flags, RK_MEM_REGION_NEW);
	assert_int_equal(q0.region.length, SIZE);
	assert_int_equal(q0.region.queue, 0);
	check_zero(&q0, 0);
	check_zero(&q0, IO_OFF);
	check_zero(&q0, SIZE - IO_LEN);
	write_pattern(&q0);
	assert_true(fx_capture_has("accepted queue 0/2 of new session"));
	assert_true(fx_capture_has("QP 0x"));
	/* Second queue of the same session: same region, same bytes. */
	assert_int_equal(client_connect(&q1, s.o.port, 1, 2, id, SIZE), 0);
	assert_int_equal(q1.region.flags, RK_MEM_REGION_RESUMED);
	assert_int_equal(q1.region.session, id);
	assert_int_equal(q1.region.queue, 1);
	assert_int_equal(q1.region.rkey, q0.region.rkey);
	assert_int_equal(q1.region.addr, q0.region.addr);
	check_pattern(&q1, id);
	/* The same queue twice: -EEXIST. */
	assert_int_equal(client_connect(&again, s.o.port, 1, 2, id, SIZE), -EEXIST);
	assert_non_null(strstr(again.text, "connected already"));
	client_close(&again);
	/* Another session: its own zeroed region, never the first one's bytes. */
	assert_int_equal(client_connect(&other, s.o.port, 0, 1, 0, SIZE), 0);
	other_id = other.region.session;
	assert_true(other_id != id);
	assert_int_equal(other.region.flags, RK_MEM_REGION_NEW);
	assert_true(other.region.rkey != q0.region.rkey);
	check_zero(&other, IO_OFF);
	write_pattern(&other);
	check_pattern(&q1, id); /* the first session's bytes are untouched */
	/* The first session's address with the other's rkey: refused by the device. */
	other.region.addr = q0.region.addr;
	memset(other.buf + IO_LEN, 0xee, IO_LEN);
	assert_int_not_equal(rdma_op(&other, IBV_WR_RDMA_READ, IO_LEN, IO_OFF, IO_LEN,
				     other.region.rkey),
			     IBV_WC_SUCCESS);
	client_close(&other);
	/* Both queues gone; a reconnect within --keep finds the data. */
	client_disconnect(&q0);
	client_disconnect(&q1);
	usleep(300000);
	assert_int_equal(client_connect(&q0, s.o.port, 0, 2, id, SIZE), 0);
	assert_int_equal(q0.region.flags, RK_MEM_REGION_RESUMED);
	check_pattern(&q0, id);
	/* A resume with another size: -EINVAL. */
	assert_int_equal(client_connect(&again, s.o.port, 1, 2, id, 2 * SIZE), -EINVAL);
	assert_non_null(strstr(again.text, "differs"));
	client_close(&again);
	client_disconnect(&q0);
	assert_true(fx_capture_has("disconnected queue 0 of session"));
	usleep(300000);
	server_halt(&s);
	check_status(s.srv, id, other_id);
	server_stop(&s);
}

static void test_keep_expiry(void **state)
{
	struct server s = {.o = {.keep_s = 1}};
	struct client c;
	uint64_t id;

	(void)state;
	server_start(&s);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0, SIZE), 0);
	id = c.region.session;
	write_pattern(&c);
	client_disconnect(&c);
	sleep(3);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, id, SIZE), -ENOENT);
	assert_non_null(strstr(c.text, "no session"));
	client_close(&c);
	assert_true(fx_capture_has("expired"));
	/* A session unknown from the start is -ENOENT too. */
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0x1234, SIZE), -ENOENT);
	client_close(&c);
	server_stop(&s);
}

struct bad_case {
	const char *what;
	uint8_t data[RK_MEM_REQ_LEN];
	uint8_t len;
	int code;
	const char *text;
	const char *alt_text; /* a padded short request reads as size 0 */
};

static void expect_reject(uint16_t port, const struct bad_case *b)
{
	struct client c;
	int ret;

	fprintf(stderr, "# case: %s\n", b->what);
	ret = client_connect_raw(&c, port, b->data, b->len);
	if (b->alt_text && ret == -EINVAL && strstr(c.text, b->alt_text)) {
		fprintf(stderr, "# the transport padded the private data: seen as \"%s\"\n", c.text);
	} else {
		if (ret != b->code)
			fail_msg("%s: code %d, expected %d", b->what, ret, b->code);
		if (!strstr(c.text, b->text))
			fail_msg("%s: reason \"%s\" lacks \"%s\"", b->what, c.text, b->text);
	}
	client_close(&c);
}

static void set_req(struct bad_case *b, struct rk_mem_req r)
{
	memcpy(b->data, &r, sizeof(r));
	b->len = sizeof(r);
}

static void test_bad_requests(void **state)
{
	struct server s = {.o = {.keep_s = 5, .max_size = 2 * SIZE}};
	struct bad_case b[7];
	struct rk_mem_req r;

	(void)state;
	memset(b, 0, sizeof(b));
	b[0] = (struct bad_case){.what = "short", .code = -EBADMSG,
				 .text = "private data is 12 bytes, expected 32",
				 .alt_text = "size 0"};
	r = make_req(0, 1, 0, SIZE);
	memcpy(b[0].data, &r, 12);
	b[0].len = 12;
	b[1] = (struct bad_case){.what = "bad magic", .code = -EBADMSG,
				 .text = "magic 0x12345678 is not RKMS"};
	r.magic = htobe32(0x12345678);
	set_req(&b[1], r);
	b[2] = (struct bad_case){.what = "bad version", .code = -EPROTONOSUPPORT,
				 .text = "protocol version 2"};
	r = make_req(0, 1, 0, SIZE);
	r.version = htobe16(2);
	set_req(&b[2], r);
	b[3] = (struct bad_case){.what = "size 0", .code = -EINVAL, .text = "size 0"};
	set_req(&b[3], make_req(0, 1, 0, 0));
	b[4] = (struct bad_case){.what = "size 5000", .code = -EINVAL,
				 .text = "size 5000 is not a multiple of 4096"};
	set_req(&b[4], make_req(0, 1, 0, 5000));
	b[5] = (struct bad_case){.what = "size over --max-size", .code = -ENOSPC,
				 .text = "above the server's --max-size 2097152"};
	set_req(&b[5], make_req(0, 1, 0, 4 * SIZE));
	b[6] = (struct bad_case){.what = "new session on queue 1", .code = -EINVAL,
				 .text = "only queue 0 may"};
	set_req(&b[6], make_req(1, 2, 0, SIZE));
	server_start(&s);
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		expect_reject(s.o.port, &b[i]);
	assert_true(fx_capture_has("rejected 198.18.0.1: magic 0x12345678 is not RKMS"));
	server_stop(&s);
}

static void test_allow(void **state)
{
	struct server s = {.o = {.keep_s = 5, .nallow = 2}};
	struct client c;
	char why[128];

	(void)state;
	assert_int_equal(rk_cidr_parse("10.0.0.0/8", &s.allow[0], why, sizeof(why)), 0);
	assert_int_equal(rk_cidr_parse("fd00::/8", &s.allow[1], why, sizeof(why)), 0);
	server_start(&s);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0, SIZE), -EACCES);
	assert_non_null(strstr(c.text, "not in --allow 10.0.0.0/8 fd00::/8"));
	assert_non_null(strstr(c.text, fx_test_ip()));
	client_close(&c);
	server_stop(&s);
	/* The client's own block lets it in. */
	memset(&s, 0, sizeof(s));
	s.o.keep_s = 5;
	s.o.nallow = 1;
	assert_int_equal(rk_cidr_parse("198.18.0.0/24", &s.allow[0], why, sizeof(why)), 0);
	server_start(&s);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0, SIZE), 0);
	client_disconnect(&c);
	server_stop(&s);
}

static void test_max_clients(void **state)
{
	struct server s = {.o = {.keep_s = 30, .max_clients = 1}};
	struct client a, b;

	(void)state;
	server_start(&s);
	assert_int_equal(client_connect(&a, s.o.port, 0, 1, 0, SIZE), 0);
	assert_int_equal(client_connect(&b, s.o.port, 0, 1, 0, SIZE), -EUSERS);
	assert_non_null(strstr(b.text, "--max-clients 1"));
	client_close(&b);
	/* The existing session may still add queues. */
	assert_int_equal(client_connect(&b, s.o.port, 0, 1, a.region.session, SIZE), -EEXIST);
	client_close(&b);
	client_disconnect(&a);
	server_stop(&s);
}

static void test_state_dir(void **state)
{
	char dir[] = "/tmp/rk-memserver-XXXXXX", path[128];
	struct server s = {.o = {.keep_s = 30}};
	struct client c;
	uint64_t id;

	(void)state;
	assert_non_null(mkdtemp(dir));
	s.o.state_dir = dir;
	server_start(&s);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0, SIZE), 0);
	id = c.region.session;
	check_zero(&c, IO_OFF);
	write_pattern(&c);
	client_disconnect(&c);
	server_stop(&s);
	snprintf(path, sizeof(path), "%s/session-%016llx", dir, (unsigned long long)id);
	assert_int_equal(access(path, F_OK), 0);
	/* A new server on the same directory adopts the session. */
	server_start(&s);
	assert_true(fx_capture_has("adopted session"));
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, id, SIZE), 0);
	assert_int_equal(c.region.flags, RK_MEM_REGION_RESUMED);
	check_pattern(&c, id);
	client_disconnect(&c);
	server_stop(&s);
	unlink(path);
	rmdir(dir);
}

/* The kernel's huge-page pool size (vm.nr_hugepages); the guest runs tests
 * as root. */
static long pool_get(void)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "re");
	long n = -1;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &n), 1);
	fclose(f);
	return n;
}

static void pool_set(long n)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "we");

	if (!f)
		fail_msg("open /proc/sys/vm/nr_hugepages for writing: %s (tests run as root)",
			 strerror(errno));
	fprintf(f, "%ld\n", n);
	assert_int_equal(fclose(f), 0);
}

/* Sessions in huge pages (--mem hugepage): zeroed, written and read back,
 * shown as such; with the pool empty the server refuses to start and says
 * how to reserve pages. */
static void test_hugepage(void **state)
{
	struct server s = {.o = {.keep_s = 30, .mem = RK_MEM_HUGEPAGE}};
	struct rk_memserver_status *st;
	struct rk_memserver *srv;
	struct client c;
	long saved = pool_get();

	(void)state;
	pool_set(0);
	s.o.port = fx_next_port(18720);
	fx_capture_reset();
	assert_int_equal(rk_memserver_create(&s.o, &srv), -ENOMEM);
	assert_true(fx_capture_has("the pool has 0 of 0 huge pages of"));
	assert_true(fx_capture_has("sysctl vm.nr_hugepages="));
	pool_set(4); /* SIZE is 1 MiB: one page of 2 MiB (x86) */
	if (pool_get() < 1)
		fail_msg("the kernel reserved no huge pages (vm.nr_hugepages 4 asked): low memory?");
	server_start(&s);
	assert_int_equal(client_connect(&c, s.o.port, 0, 1, 0, SIZE), 0);
	check_zero(&c, IO_OFF);
	write_pattern(&c);
	check_pattern(&c, c.region.session);
	assert_int_equal(rk_memserver_status(s.srv, &st), 0);
	assert_int_equal(st->nsessions, 1);
	assert_int_equal(st->sessions[0].mem, RK_MEM_HUGEPAGE);
	rk_memserver_status_free(st);
	client_disconnect(&c);
	server_stop(&s);
	pool_set(saved);
}

/* A region that cannot be registered after the accept (--inject
 * register-fail): the client is told why in place of the region, then
 * disconnected, and the new session is gone: with --max-clients 1 the next
 * request is accepted again (not -EUSERS). */
static void test_register_fail(void **state)
{
	struct server s = {.o = {.keep_s = 30, .max_clients = 1,
				 .inject = RK_MS_INJECT_REGISTER_FAIL}};
	struct client a;
	int ret, tries = 0;

	(void)state;
	server_start(&s);
	for (int i = 0; i < 2; i++) {
		/* The server frees the session on its own DISCONNECTED event. */
		while ((ret = client_connect(&a, s.o.port, 0, 1, 0, SIZE)) == -EUSERS &&
		       ++tries < 50) {
			client_close(&a);
			usleep(100000);
		}
		assert_int_equal(ret, -ENOSPC);
		assert_non_null(strstr(a.text, "the server cannot register"));
		assert_int_equal(wait_event(&a, RDMA_CM_EVENT_DISCONNECTED, NULL), 0);
		client_close(&a);
	}
	server_stop(&s);
}

/* RK_MEM_REQ_SENDS_FIRST (memproto.h step 4, what rkblk does): the server
 * SENDs nothing until the client's first SEND, its request again, came;
 * then the region, once, though the request came twice (RK_MEM_REQ_SENDS).
 * A first SEND that is not the request gets the connection closed without
 * a region. */
static void test_sends_first(void **state)
{
	struct server s = {.o = {.keep_s = 30}};
	struct rk_mem_req r = make_req(0, 1, 0, SIZE);
	struct client a;
	struct ibv_sge sge = {.length = sizeof(r)};
	struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND}, *bad;
	struct ibv_wc wc;
	bool got = false;

	(void)state;
	server_start(&s);
	for (int bad_hello = 0; bad_hello < 2; bad_hello++) {
		struct ibv_recv_wr rwr = {.wr_id = 1, .num_sge = 1}, *rbad;
		struct ibv_sge rsge = {.length = RK_MEM_REJECT_LEN};
		struct rdma_conn_param p = {.private_data = &r, .private_data_len = sizeof(r),
					    .initiator_depth = 1, .retry_count = 6,
					    .rnr_retry_count = 6};

		r.flags = htobe16(RK_MEM_REQ_SENDS_FIRST);
		client_setup(&a, s.o.port);
		rsge.addr = (uintptr_t)(a.buf + MSG_OFF);
		rsge.lkey = a.mr->lkey;
		rwr.sg_list = &rsge;
		/* Two receives: room for a second region, were one sent. */
		assert_int_equal(ibv_post_recv(a.id->qp, &rwr, &rbad), 0);
		assert_int_equal(ibv_post_recv(a.id->qp, &rwr, &rbad), 0);
		assert_int_equal(rdma_connect(a.id, &p), 0);
		assert_int_equal(wait_event(&a, RDMA_CM_EVENT_ESTABLISHED, NULL), 0);
		/* Nothing comes before the client's SEND (the old server sent at once). */
		usleep(1000000);
		assert_int_equal(ibv_poll_cq(a.cq, 1, &wc), 0);
		if (bad_hello)
			r.queue = htobe16(5);
		memcpy(a.buf, &r, sizeof(r));
		sge.addr = (uintptr_t)a.buf;
		sge.lkey = a.mr->lkey;
		assert_int_equal(ibv_post_send(a.id->qp, &wr, &bad), 0);
		if (!bad_hello)
			assert_int_equal(ibv_post_send(a.id->qp, &wr, &bad), 0);
		got = false;
		if (bad_hello) {
			assert_int_equal(poll_one(&a, &wc), 0);
			assert_int_equal(wc.wr_id, 2);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wait_event(&a, RDMA_CM_EVENT_DISCONNECTED, NULL), 0);
			client_close(&a);
			break;
		}
		for (int sends = 0; sends < 2 || !got;) {
			const struct rk_mem_region *m = (const void *)(a.buf + MSG_OFF);

			assert_int_equal(poll_one(&a, &wc), 0);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			if (wc.wr_id == 2) {
				sends++;
				continue;
			}
			assert_false(got);
			got = true;
			assert_int_equal(wc.byte_len, RK_MEM_REGION_LEN);
			assert_int_equal(be32toh(m->magic), RK_MEM_MAGIC);
			assert_int_equal(be32toh(m->flags), RK_MEM_REGION_NEW);
			a.region.addr = be64toh(m->addr);
			a.region.rkey = be32toh(m->rkey);
			a.region.length = be64toh(m->length);
		}
		assert_int_equal(a.region.length, SIZE);
		check_zero(&a, 0);
		/* No second region for the second request. */
		usleep(200000);
		assert_int_equal(ibv_poll_cq(a.cq, 1, &wc), 0);
		client_disconnect(&a);
	}
	server_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_keep_expiry),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_allow),
		cmocka_unit_test(test_max_clients),
		cmocka_unit_test(test_register_fail),
		cmocka_unit_test(test_sends_first),
		cmocka_unit_test(test_state_dir),
		cmocka_unit_test(test_hugepage),
	};

	return fx_run("memserver tests", tests);
}
