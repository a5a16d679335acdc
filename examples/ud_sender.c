/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ud_sender: UD datagrams in a few lines over librdmakit.
 *
 * Shows rk_ud_run() (rdmakit/ud.h) as a client: find the server's UD QP by
 * the TCP exchange (`rdmakit ud --server`) or, with --cm, by RDMA CM in
 * RDMA_PS_UDP (also udaddy -s), send COUNT datagrams of SIZE bytes through
 * an address handle and receive each echo, checked byte for byte when the
 * server is rdmakit. Exit 0 only when every datagram came back; 1 when the
 * run failed; 2 for bad arguments.
 *
 * Build: cc ud_sender.c $(pkg-config --cflags --libs rdmakit)
 * Usage: ud_sender [--cm] HOST [COUNT [SIZE]]   (defaults: 10 datagrams, 100 bytes)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

static void on_event(const struct rk_ud_event *ev, void *arg)
{
	(void)arg;
	if (ev->kind == RK_UD_READY)
		printf("UD QP 0x%x on %s -> %s QP 0x%x\n", ev->result->qpn, ev->result->device,
		       ev->result->peer, ev->result->peer_qpn);
}

int main(int argc, char **argv)
{
	uint64_t count = 10, size = 100;
	struct rk_ud_opts opts = {0};
	struct rk_ud_result res;
	const char *what = "COUNT";
	char err[128];
	int a = 1, ret = 0;

	if (argc > 1 && !strcmp(argv[1], "--cm")) {
		opts.cm = true;
		a++;
	}
	if (argc - a < 1 || argc - a > 3 || argv[a][0] == '-') {
		fprintf(stderr, "usage: ud_sender [--cm] HOST [COUNT [SIZE]]\n");
		return 2;
	}
	/* Whole numbers in range, checked to the end (rdmakit/units.h). */
	if (argc - a > 1)
		ret = rk_parse_u64(argv[a + 1], 1, 1000000, 0, &count, err, sizeof(err));
	if (!ret && argc - a > 2) {
		what = "SIZE";
		ret = rk_parse_u64(argv[a + 2], 1, RK_UD_MAX_SIZE, 0, &size, err, sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "ud_sender: %s: %s\n", what, err);
		return 2;
	}

	opts.host = argv[a];
	opts.count = (uint32_t)count;
	opts.size = (uint32_t)size;
	opts.gid_index = -1;
	opts.timeout_ms = 30000; /* keep trying to reach the server for 30 s */
	opts.on_event = on_event;

	ret = rk_ud_run(&opts, &res); /* errors are logged on stderr */
	if (ret) {
		printf("failed after %" PRIu64 " of %" PRIu64 " echoes: %s\n", res.received, count,
		       rk_strerror(ret));
		return 1;
	}
	printf("%" PRIu64 " datagrams of %" PRIu64 " bytes sent, %" PRIu64 " echoed back%s\n", res.sent,
	       size, res.received, res.checked ? ", every byte checked" : "");
	return res.received == count ? 0 : 1;
}
