/* Internal to librdmakit: the loop of a server of several clients at once
 * (clients.c), shared by the bench and rc engines. */
#ifndef RDMAKIT_LIB_CLIENTS_INT_H
#define RDMAKIT_LIB_CLIENTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/clients.h>
#include <rdmakit/conn.h>

#pragma GCC visibility push(hidden)

/* A server of several clients at once: what it serves each client with. */
struct clients_server {
	void *clients;          /* n entries of size bytes, each beginning with its
				   struct rk_client_outcome (the caller's array) */
	size_t size;
	/* Serve the client (its outcome begun: index, arrival, peer, log lines
	 * tagged) on its accepted connection (rk_conn_establish_accepted() sets
	 * it up or closes it); returns its status. Runs on the client's own
	 * thread, with SIGINT and SIGTERM blocked (they go to the accepting
	 * thread). */
	int (*serve)(struct rk_conn *pending, void *client, void *arg);
	/* Then, as the client ends (status kept), one client at a time; NULL:
	 * none. */
	void (*ended)(const void *client, void *arg);
	void *arg;
};

/* 0 when a server (server: true) may serve n clients at once, else -EINVAL
 * logged as what's ("bench", "RC flow"). */
int clients_check(const char *what, bool server, uint32_t n);

/* Listen as co says, accept up to n clients until wait_ms after listening
 * (-1: no bound) or a stop request, serving each on a thread of its own as
 * it arrives, then wait for all of them; the missing get their index too.
 * 0, or a negative errno when the server could not listen at all. */
int clients_serve(const struct rk_conn_opts *co, uint32_t n, int wait_ms,
		  const struct clients_server *cs);

/* The tally of one client for rk_clients_total(). */
struct rk_client_tally clients_tally(const struct rk_client_outcome *out,
				     const struct rk_span *spans, size_t nspans);

#pragma GCC visibility pop

#endif
