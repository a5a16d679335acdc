/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rping_client: an rping client in a few lines over librdmakit.
 *
 * Shows rk_rping_run() (rdmakit/rping.h), librdmacm's rping protocol as a
 * library call: connect to a server (rdma-core's `rping -s`, or
 * `rdmakit ping --proto rping -s`), ping COUNT times with SIZE bytes, check
 * every pong against the ping sent, print each round from the progress
 * callback and the summary from the result. Exit 0 only when all COUNT
 * rounds came back checked; 1 when the run failed; 2 for bad arguments.
 *
 * Build: cc rping_client.c $(pkg-config --cflags --libs rdmakit)
 * Usage: rping_client HOST [COUNT [SIZE]]   (defaults: 10 rounds, 64 bytes)
 * rping's server reads each ping into a buffer of its own -S (default 64):
 * run it with the same size, e.g. `rping -s -a HOST -S 100` for SIZE 100.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/rdmakit.h>

static void on_progress(const struct rk_ping_progress *p, void *arg)
{
	(void)arg;
	if (p->stage == RK_PING_CONNECTED)
		printf("connected to %s on %s, QP 0x%x\n", p->result->peer, p->result->device,
		       p->result->qpn);
	else if (p->stage == RK_PING_ROUND)
		printf("round %" PRIu64 ": %u bytes in %.1f us%s\n", p->round->index + 1,
		       p->round->size, p->round->us, p->round->checked ? ", checked" : "");
}

int main(int argc, char **argv)
{
	uint64_t count = 10, size = 64;
	struct rk_ping_result res = {0};
	struct rk_ping_opts opts = {0};
	const char *what = "COUNT";
	char err[128];
	int ret = 0;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: rping_client HOST [COUNT [SIZE]]\n");
		return 2;
	}
	/* Whole numbers in range, checked to the end (rdmakit/units.h). */
	if (argc > 2)
		ret = rk_parse_u64(argv[2], 1, 1000000, 0, &count, err, sizeof(err));
	if (!ret && argc > 3) {
		what = "SIZE";
		ret = rk_parse_u64(argv[3], RK_RPING_MIN_SIZE, RK_RPING_MAX_SIZE, 0, &size, err,
				   sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "rping_client: %s: %s\n", what, err);
		return 2;
	}

	opts.host = argv[1];
	opts.count = count;
	opts.size = (uint32_t)size;
	opts.validate = true;    /* compare every pong with its ping */
	opts.gid_index = -1;
	opts.timeout_ms = 30000; /* keep trying to connect for 30 s */
	opts.progress = on_progress;

	ret = rk_rping_run(&opts, &res); /* errors are logged on stderr */
	if (ret)
		printf("failed after %zu of %" PRIu64 " rounds: %s\n", res.rounds, count, rk_strerror(ret));
	else
		printf("%zu rounds of %u bytes, %s\n", res.rounds, res.size,
		       res.checked ? "every pong checked" : "NOT checked");
	if (!ret && (res.rounds != count || !res.checked))
		ret = -EIO;
	rk_ping_result_free(&res);
	return ret ? 1 : 0;
}
