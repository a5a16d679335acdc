/* Internal to librdmakit: the loop of a server of several clients at once
 * (clients.c), shared by the bench and rc engines. */
#ifndef RDMAKIT_LIB_CLIENTS_INT_H
#define RDMAKIT_LIB_CLIENTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include <rdmakit/clients.h>
#include <rdmakit/conn.h>

#pragma GCC visibility push(hidden)

/* Serve client index (0.., in order of arrival) on its accepted connection
 * (rk_conn_establish_accepted() sets it up or closes it). Runs on the
 * client's own thread, with SIGINT and SIGTERM blocked (they go to the
 * accepting thread). */
typedef void (*clients_serve_fn)(struct rk_conn *pending, uint32_t index, void *arg);

/* Listen as co says, accept up to n clients until wait_ms after listening
 * (-1: no bound) or a stop request, serving each on a thread of its own as
 * it arrives, then wait for all of them. 0 with *arrived_p set (fewer than n
 * when the window closed first: the caller names the missing), or a
 * negative errno when the server could not listen at all. */
int clients_serve(const struct rk_conn_opts *co, uint32_t n, int wait_ms, clients_serve_fn serve,
		  void *arg, uint32_t *arrived_p);

/* A client's thread begins: its index (0..), arrival and peer in out, and
 * its log lines tagged "client N (PEER)", the first error kept in
 * out->error. */
void clients_outcome_begin(struct rk_client_outcome *out, uint32_t index, const char *peer);

/* It ends with status: out->status, an error text when none was logged, the
 * log scope closed. */
void clients_outcome_end(struct rk_client_outcome *out, int status);

/* The tally of one client for rk_clients_total(). */
struct rk_client_tally clients_tally(const struct rk_client_outcome *out,
				     const struct rk_span *spans, size_t nspans);

#pragma GCC visibility pop

#endif
