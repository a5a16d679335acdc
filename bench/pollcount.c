// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* LD_PRELOAD counter for bench/vs-perftest-cost.sh: how many times a process
 * polls a CQ and how many completions the polls return. ibv_poll_cq() is an
 * inline call through the context's ops.poll_cq, so the counter wraps
 * ibv_open_device() (which rdmakit, perftest and librdmacm call) and puts
 * itself in ops.poll_cq. At exit it writes "polls N" and "completions N" to
 * the file $RK_POLLCOUNT_OUT. Used in a pass of its own, never under
 * callgrind (its few instructions a poll would be counted there). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

static unsigned long long polls, completions;
static int (*real_poll)(struct ibv_cq *cq, int n, struct ibv_wc *wc);

static int count_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int got = real_poll(cq, n, wc);

	__atomic_add_fetch(&polls, 1, __ATOMIC_RELAXED);
	if (got > 0)
		__atomic_add_fetch(&completions, (unsigned long long)got, __ATOMIC_RELAXED);
	return got;
}

struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	static struct ibv_context *(*real_open)(struct ibv_device *dev);
	struct ibv_context *ctx;

	if (!real_open)
		real_open = (struct ibv_context * (*)(struct ibv_device *))
			dlvsym(RTLD_NEXT, "ibv_open_device", "IBVERBS_1.1");
	if (!real_open)
		return NULL;
	ctx = real_open(dev);
	if (ctx && ctx->ops.poll_cq != count_poll) {
		real_poll = ctx->ops.poll_cq; /* one provider per process */
		ctx->ops.poll_cq = count_poll;
	}
	return ctx;
}

__attribute__((destructor)) static void pollcount_report(void)
{
	const char *path = getenv("RK_POLLCOUNT_OUT");
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "polls %llu\ncompletions %llu\n", polls, completions);
	fclose(f);
}
