/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
	size_t size;            /* bytes of one client's entry, which begins with
				   its struct rk_client_outcome */
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
	/* The client's measured spans on the server's clock for the aggregate
	 * (clients.h), written to spans unless it is NULL; returns how many. */
	size_t (*spans)(const void *client, struct rk_span *spans);
	/* Frees what else the client's entry holds; NULL: nothing. */
	void (*release)(void *client);
};

/* 0 when a server (server: true) may serve n clients at once, else -EINVAL
 * logged as what's ("bench", "RC flow"). */
int clients_check(const char *what, bool server, uint32_t n);

/* Listen as co says, accept up to n clients until wait_ms after listening
 * (-1: no bound) or a stop request, serving each on a thread of its own as
 * it arrives, then wait for all of them (the missing get their index too)
 * and add them up. 0 with *clients_p set to the n entries (cs->size bytes
 * each, in order of arrival, then the missing; the caller frees them) and
 * *total to the aggregate, or a negative errno when the server could not
 * listen at all or memory ran out. */
int clients_serve(const struct rk_conn_opts *co, uint32_t n, int wait_ms,
		  const struct clients_server *cs, void **clients_p,
		  struct rk_clients_total *total);

#pragma GCC visibility pop

#endif
