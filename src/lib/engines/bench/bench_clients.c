/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark server of several clients at once (bench.h,
 * rk_bench_serve_clients()): the accept loop of clients.c, and per client a
 * thread that runs a one-client server's rounds on its own rk_bench. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "engines/bench/bench_int.h"
#include "conn/clients_int.h"
#include "verbs/srq_int.h"

struct bench_server {
	const struct rk_bench_opts *opts;
	void (*on_client)(const struct rk_bench_client *c, void *arg);
	void *arg;
};

static int keep_round(struct rk_bench_client *c, const struct rk_bench_result *res)
{
	struct rk_bench_result *more;

	more = realloc(c->rounds, (c->out.done + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	c->rounds = more;
	c->rounds[c->out.done++] = *res;
	c->out.bytes += res->bytes;
	c->out.msgs += res->msgs;
	return 0;
}

/* The client's rounds until its BENCH_FIN: 0, or the error that ended it. */
static int serve_rounds(struct rk_bench *b, struct rk_bench_client *c)
{
	for (;;) {
		struct rk_bench_round round = {0};
		struct rk_bench_result res;
		int ret = rk_bench_run(b, &round, &res);

		if (ret == 1)
			return 0;
		if (ret)
			return ret;
		ret = keep_round(c, &res);
		if (ret)
			return ret;
	}
}

static int serve_client(struct rk_conn *pending, void *client, void *arg)
{
	const struct bench_server *s = arg;
	struct rk_bench_client *c = client;
	struct rk_bench_opts o = *s->opts;
	struct rk_bench *b;
	int ret;

	o.progress = NULL;
	o.interval = NULL;
	o.interval_ms = 0;
	ret = bench_connect_accepted(pending, &o, &b);
	if (ret)
		return ret;
	c->connected = true;
	c->info = *rk_bench_get_info(b);
	ret = serve_rounds(b, c);
	rk_bench_close(b);
	return ret;
}

static void client_ended(const void *client, void *arg)
{
	const struct bench_server *s = arg;

	s->on_client(client, s->arg);
}

/* Its rounds as spans on the server's clock: from each round's start to
 * start + the time the client measured. */
static size_t client_spans(const void *client, struct rk_span *spans)
{
	const struct rk_bench_client *c = client;

	for (uint32_t r = 0; spans && r < c->out.done; r++) {
		spans[r].start_ns = c->rounds[r].start_ns;
		spans[r].end_ns = c->rounds[r].start_ns + (uint64_t)(c->rounds[r].seconds * 1e9);
	}
	return c->out.done;
}

static void client_release(void *client)
{
	struct rk_bench_client *c = client;

	free(c->rounds);
}

int rk_bench_serve_clients(const struct rk_bench_opts *opts, uint32_t n,
			   void (*on_client)(const struct rk_bench_client *c, void *arg),
			   void *arg, struct rk_bench_clients *rep)
{
	struct bench_server s = {.opts = opts, .on_client = on_client, .arg = arg};
	struct clients_server cs = {.size = sizeof(*rep->clients), .serve = serve_client,
				    .ended = on_client ? client_ended : NULL, .arg = &s,
				    .spans = client_spans, .release = client_release};
	struct rk_conn_opts co = opts->conn;
	void *clients;
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = clients_check("bench", opts->conn.server, n);
	if (ret)
		return ret;
	if (opts->xrc)
		return rk_srq_xrc_refuse("bench", opts->conn.device);
	ret = bench_mem_precheck(opts);
	if (ret)
		return ret;
	co.transport = RK_RC;
	ret = clients_serve(&co, n, opts->conn.accept_timeout_ms, &cs, &clients, &rep->total);
	if (ret)
		return ret;
	rep->wanted = n;
	rep->clients = clients;
	return 0;
}

void rk_bench_clients_free(struct rk_bench_clients *rep)
{
	for (uint32_t i = 0; rep->clients && i < rep->wanted; i++)
		client_release(&rep->clients[i]);
	free(rep->clients);
	memset(rep, 0, sizeof(*rep));
}
