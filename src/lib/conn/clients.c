/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A server of several clients at once: the accept loop with a thread per
 * client (clients_int.h), and the aggregate over them (clients.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/clients.h>
#include <rdmakit/log.h>
#include <rdmakit/error.h>
#include <rdmakit/stop.h>

#include "conn/clients_int.h"
#include "base/clock.h"
#include "conn/conn_int.h"

/* ---- the aggregate (pure) ---- */

static int span_cmp(const void *a, const void *b)
{
	const struct rk_span *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

uint64_t rk_spans_union_ns(struct rk_span *spans, size_t n)
{
	uint64_t total = 0, cur_start, cur_end;

	if (!n)
		return 0;
	qsort(spans, n, sizeof(*spans), span_cmp);
	cur_start = spans[0].start_ns;
	cur_end = spans[0].end_ns;
	for (size_t i = 1; i < n; i++) {
		if (spans[i].start_ns > cur_end) {
			total += cur_end - cur_start;
			cur_start = spans[i].start_ns;
			cur_end = spans[i].end_ns;
		} else if (spans[i].end_ns > cur_end) {
			cur_end = spans[i].end_ns;
		}
	}
	return total + (cur_end - cur_start);
}

int rk_clients_total(const struct rk_client_tally *t, size_t n, struct rk_clients_total *out)
{
	struct rk_clients_total tot = {.wanted = (uint32_t)n};
	struct rk_span *all;
	size_t nspans = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (t[i].arrived && !t[i].status)
			nspans += t[i].nspans;
	all = calloc(nspans ? nspans : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].arrived) {
			tot.missing++;
			continue;
		}
		tot.arrived++;
		if (t[i].status) {
			tot.failed++;
			continue;
		}
		tot.ok++;
		tot.bytes += t[i].bytes;
		tot.msgs += t[i].msgs;
		for (size_t s = 0; s < t[i].nspans; s++)
			all[k++] = t[i].spans[s];
	}
	tot.seconds = (double)rk_spans_union_ns(all, k) / 1e9;
	if (tot.seconds > 0) {
		tot.bw = (double)tot.bytes / tot.seconds;
		tot.msg_rate = (double)tot.msgs / tot.seconds;
	}
	free(all);
	*out = tot;
	return 0;
}

/* ---- the server loop ---- */

struct client_thread {
	pthread_t tid;
	struct rk_conn *pending;
	uint32_t index;
	struct rk_client_outcome *out; /* the client's entry */
	const struct clients_server *cs;
	pthread_mutex_t *lock; /* cs->ended, one client at a time */
};

/* The log tag of this thread's client: the logger keeps the pointer, so it
 * lives as long as the thread, not in a frame that returns. */
static __thread char client_tag[112];

/* Client index's entry in clients: its outcome comes first. */
static struct rk_client_outcome *outcome_of(const struct clients_server *cs, void *clients,
					    uint32_t index)
{
	return (struct rk_client_outcome *)((char *)clients + (size_t)index * cs->size);
}

/* The client's outcome begins: its index (0..), arrival and peer, and its
 * log lines tagged "client N (PEER)", the first error kept in out->error. */
static void outcome_begin(struct rk_client_outcome *out, uint32_t index, const char *peer)
{
	out->index = index + 1;
	out->arrived = true;
	snprintf(out->peer, sizeof(out->peer), "%s", peer);
	snprintf(client_tag, sizeof(client_tag), "client %u (%s)", out->index, out->peer);
	rk_log_thread_scope(client_tag, out->error, sizeof(out->error));
}

/* It ends with status: out->status, an error text when none was logged, the
 * log scope closed. */
static void outcome_end(struct rk_client_outcome *out, int status)
{
	out->status = status;
	if (status && !out->error[0])
		snprintf(out->error, sizeof(out->error), "%s", rk_strerror(status));
	rk_log_thread_scope(NULL, NULL, 0);
}

static void *client_main(void *arg)
{
	struct client_thread *ct = arg;
	const struct clients_server *cs = ct->cs;
	struct rk_client_outcome *out = ct->out;

	outcome_begin(out, ct->index, ct->pending->peer);
	outcome_end(out, cs->serve(ct->pending, out, cs->arg));
	if (cs->ended) {
		pthread_mutex_lock(ct->lock);
		cs->ended(out, cs->arg);
		pthread_mutex_unlock(ct->lock);
	}
	return NULL;
}

/* A thread for the client, with SIGINT and SIGTERM blocked in it; where no
 * thread can be made, it is served here (the others wait meanwhile). */
static void start_client(struct client_thread *ct, bool *threaded)
{
	sigset_t block, old;
	int ret;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = pthread_create(&ct->tid, NULL, client_main, ct);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*threaded = !ret;
	if (ret) {
		rk_warn("client %u: no thread of its own (%s): served alone", ct->index + 1,
			rk_strerror(-ret));
		client_main(ct);
	}
}

int clients_check(const char *what, bool server, uint32_t n)
{
	if (!server || n < 1 || n > RK_CLIENTS_MAX) {
		rk_error("%s: a server serves 1 to %d clients at once (asked %u)", what,
			 RK_CLIENTS_MAX, n);
		return -EINVAL;
	}
	return 0;
}

/* The accept loop of clients_serve(), serving into clients. */
static int accept_all(const struct rk_conn_opts *co, uint32_t n, int wait_ms,
		      const struct clients_server *cs, void *clients)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct rk_conn_listener *l;
	struct client_thread *ct;
	bool *threaded;
	uint64_t deadline;
	uint32_t got = 0, errors = 0;
	char tag[64];
	int ret;

	ct = calloc(n, sizeof(*ct));
	threaded = calloc(n, sizeof(*threaded));
	if (!ct || !threaded) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = rk_conn_listen(co, &l);
	if (ret)
		goto err_free;
	deadline = wait_ms < 0 ? UINT64_MAX : now_ns() + (uint64_t)wait_ms * 1000000ull;
	while (got < n) {
		uint64_t now = now_ns();
		int left = deadline == UINT64_MAX ? -1 :
			   now >= deadline	   ? 0 :
						     (int)((deadline - now + 999999) / 1000000);

		if (!left || rk_stop_requested())
			break;
		/* "waiting for client 4 of 4: no client connected within 2712 ms" */
		snprintf(tag, sizeof(tag), "waiting for client %u of %u", got + 1, n);
		rk_log_thread_scope(tag, NULL, 0);
		ret = rk_conn_accept(l, left, &ct[got].pending);
		rk_log_thread_scope(NULL, NULL, 0);
		if (ret == -ETIMEDOUT || ret == -EINTR)
			break;
		if (ret && ++errors < 16) /* this request went wrong (logged); others may come */
			continue;
		if (ret)
			break;
		errors = 0;
		ct[got].index = got;
		ct[got].out = outcome_of(cs, clients, got);
		ct[got].cs = cs;
		ct[got].lock = &lock;
		start_client(&ct[got], &threaded[got]);
		got++;
	}
	if (got == n)
		rk_conn_listener_refuse_others(l, n);
	for (uint32_t i = 0; i < got; i++)
		if (threaded[i])
			pthread_join(ct[i].tid, NULL);
	rk_conn_listener_close(l);
	for (uint32_t i = got; i < n; i++)
		outcome_of(cs, clients, i)->index = i + 1;
	ret = 0;
err_free:
	free(threaded);
	free(ct);
	return ret;
}

/* The aggregate over the n clients, their spans gathered in one array. */
static int clients_total(const struct clients_server *cs, void *clients, uint32_t n,
			 struct rk_clients_total *total)
{
	struct rk_client_tally *t = calloc(n, sizeof(*t));
	struct rk_span *spans = NULL;
	size_t nspans = 0;
	int ret = -ENOMEM;

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		nspans += cs->spans(outcome_of(cs, clients, i), NULL);
	spans = calloc(nspans ? nspans : 1, sizeof(*spans));
	if (!spans)
		goto out;
	nspans = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct rk_client_outcome *o = outcome_of(cs, clients, i);
		size_t k = cs->spans(o, spans + nspans);

		t[i] = (struct rk_client_tally){.arrived = o->arrived, .status = o->status,
						.bytes = o->bytes, .msgs = o->msgs,
						.spans = spans + nspans, .nspans = k};
		nspans += k;
	}
	ret = rk_clients_total(t, n, total);
out:
	free(spans);
	free(t);
	return ret;
}

int clients_serve(const struct rk_conn_opts *co, uint32_t n, int wait_ms,
		  const struct clients_server *cs, void **clients_p,
		  struct rk_clients_total *total)
{
	void *clients = calloc(n, cs->size);
	int ret;

	if (!clients)
		return -ENOMEM;
	ret = accept_all(co, n, wait_ms, cs, clients);
	if (ret)
		goto err_free;
	ret = clients_total(cs, clients, n, total);
	if (ret)
		goto err_release;
	*clients_p = clients;
	return 0;

err_release:
	for (uint32_t i = 0; cs->release && i < n; i++)
		cs->release(outcome_of(cs, clients, i));
err_free:
	free(clients);
	return ret;
}
