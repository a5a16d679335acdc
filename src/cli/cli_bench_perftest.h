/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench --proto perftest (cli_bench_perftest.c). */
#ifndef RDMAKIT_CLI_BENCH_PERFTEST_H
#define RDMAKIT_CLI_BENCH_PERFTEST_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/traffic.h>

/* What the run takes from bench's command line, checked there. */
struct cli_bench_perftest {
	bool server;
	const char *host;   /* client: the server; server: NULL (any address) */
	uint64_t port;
	const char *device;
	uint32_t size;
	uint64_t iters;
	uint32_t tx_depth;
	int timeout_ms, accept_timeout_ms;
	struct rk_traffic traffic;
	bool json;
};

/* Run it and report (text or --json): the exit status. */
int cli_bench_perftest(const struct cli_bench_perftest *a);

#endif
