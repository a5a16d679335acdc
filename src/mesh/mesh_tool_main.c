/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh: check a whole fabric over MPI. Every pair's reachability,
 * latency and bandwidth over rdmakit's own RC QPs; outliers flagged with a
 * reason; text, JSON, CSV and an SVG heat map. MPI starts the ranks and
 * carries the small control messages only. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/log.h>
#include <rdmakit/version.h>

#include "mesh_tool.h"
#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"

static const char usage[] = "mpirun -np N [MPI OPTIONS] rdmakit-mesh [OPTIONS]";
static const char description[] =
	"Check every pair of N nodes: reachability (a checked SEND each way), latency (SEND\n"
	"ping-pong, p50 and p99) and bandwidth (RDMA WRITE, each direction), over rdmakit's\n"
	"own RC QPs; MPI only starts the ranks and carries small control messages (keep it\n"
	"off the RDMA device: Open MPI --mca pml ob1 --mca btl self,vader,tcp). Pairs that\n"
	"stand out are re-tested one at a time, then reported with a reason.";
static const char epilog[] =
	"Schedules: pairs (N-1 rounds of disjoint pairs, a bye per round when N is odd),\n"
	"shift (mpiGraph: round d, every rank writes to r+d at once; bandwidth only, the\n"
	"other stages use pairs), serial (one pair at a time).\n"
	"Thresholds are relative to the fabric's reference: per node its best pair, the\n"
	"median over the nodes.\n"
	"Exit status: 0 clean, 1 outliers (or regressions against --baseline), 2 usage error\n"
	"(as every rdmakit command's), 3 setup error, 4 unreachable pairs or nodes.\n";

static void defaults(struct mesh_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 1;
	o->gid_index = -1;
	o->stages = "reach,latency,bandwidth";
	o->schedule = "pairs";
	o->lat_iters = 1000;
	o->bw_size = 65536;
	o->bw_iters = 200;
	o->window = 16;
	o->timeout_ms = 5000;
	o->qp_timeout = 14; /* rk_path_defaults()'s */
	o->bw_low_pct = 60;
	o->lat_high_pct = 200;
	o->jitter_pct = 400;
	o->traffic_opts = (struct cli_traffic_opts)CLI_TRAFFIC_OPTS_DEFAULT;
}

static int parse_stages(struct mesh_opts *o)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", o->stages);
	for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (!strcmp(s, "reach"))
			o->do_reach = true;
		else if (!strcmp(s, "latency"))
			o->do_lat = true;
		else if (!strcmp(s, "bandwidth"))
			o->do_bw = true;
		else {
			fprintf(stderr, "rdmakit-mesh: --stages: unknown stage '%s' (reach, latency, "
					"bandwidth)\n", s);
			return -EINVAL;
		}
	}
	if (!o->do_reach && !o->do_lat && !o->do_bw) {
		fprintf(stderr, "rdmakit-mesh: --stages: no stage given\n");
		return -EINVAL;
	}
	return 0;
}

/* 0: go on; 1: --help or --version printed; -EINVAL: usage error (printed). */
static int parse(struct mesh_opts *o, int argc, char **argv, bool quiet)
{
	static const char *const schedules[] = {"pairs", "shift", "serial", NULL};
	/* --stages takes a list: the stages and all three offered */
	static const char *const stages[] = {"reach", "latency", "bandwidth",
					     "reach,latency,bandwidth", NULL};
	const struct cli_opt opts[] = {
		{"device", 'd', CLI_OPT_STRING, &o->device, 0, 0, "DEV", "RDMA device",
		 .def = "the first one"},
		{"ib-port", 'i', CLI_OPT_COUNT, &o->port, 1, 255, "PORT", "device port"},
		{"gid-index", 'g', CLI_OPT_INT, &o->gid_index, -1, 65535, "N",
		 "GID index (-1: chosen, a RoCE v2 IPv4 GID first)"},
		{"stages", 0, CLI_OPT_STRING, &o->stages, 0, 0, "LIST",
		 "comma-separated: reach, latency, bandwidth", .values = stages},
		{"schedule", 0, CLI_OPT_STRING, &o->schedule, 0, 0, "S", "pairs, shift or serial",
		 .choices = schedules},
		{"count", 'n', CLI_OPT_COUNT, &o->lat_iters, 1, 1000000, "N",
		 "ping-pong round trips per pair"},
		{"size", 's', CLI_OPT_SIZE, &o->bw_size, 1, 1u << 30, "BYTES", "RDMA WRITE size"},
		{"bw-iters", 0, CLI_OPT_COUNT, &o->bw_iters, 1, 10000000, "N",
		 "RDMA WRITEs per direction"},
		{"window", 0, CLI_OPT_COUNT, &o->window, 1, 64, "N", "WRITEs outstanding"},
		{"wc-timeout", 0, CLI_OPT_COUNT, &o->timeout_ms, 10, 3600000, "MS",
		 "longest wait for one completion, in milliseconds"},
		{"ack-timeout", 0, CLI_OPT_COUNT, &o->qp_timeout, 1, 31, "N",
		 "RC local ACK timeout, 4.096 us x 2^N (14: about 67 ms)"},
		{"bw-low", 0, CLI_OPT_COUNT, &o->bw_low_pct, 1, 100, "PCT",
		 "flag bandwidth below PCT% of the reference"},
		{"lat-high", 0, CLI_OPT_COUNT, &o->lat_high_pct, 101, 100000, "PCT",
		 "flag p50 latency above PCT% of the reference"},
		{"lat-jitter", 0, CLI_OPT_COUNT, &o->jitter_pct, 101, 100000, "PCT",
		 "flag p99 latency above PCT% of the reference p99"},
		{"events", 'e', CLI_OPT_FLAG, &o->events, 0, 0, NULL,
		 "sleep on completion events instead of spinning (ranks sharing cores)"},
		{"no-retest", 0, CLI_OPT_FLAG, &o->no_retest, 0, 0, NULL,
		 "report suspects without re-testing"},
		{"json-file", 0, CLI_OPT_STRING, &o->json, 0, 0, "FILE",
		 "write the run as JSON (schema rdmakit-mesh/1)"},
		{"json", 'j', CLI_OPT_FLAG, &o->json_out, 0, 0, NULL,
		 "print the run as one JSON document on stdout instead of text (schema "
		 "rdmakit-mesh/1, with \"result\"; a failure's has \"error\" and \"errno\")"},
		{"csv", 0, CLI_OPT_STRING, &o->csv, 0, 0, "DIR",
		 "write each matrix as DIR/NAME.csv"},
		{"svg", 0, CLI_OPT_STRING, &o->svg, 0, 0, "FILE",
		 "write a heat map (SVG, tooltips per cell)"},
		{"baseline", 0, CLI_OPT_STRING, &o->baseline, 0, 0, "OLD.json",
		 "compare with an earlier run's --json-file"},
		{"no-progress", 0, CLI_OPT_FLAG, &o->no_progress, 0, 0, NULL,
		 "no progress line (shown when stdout is a terminal)"},
		{"quiet", 0, CLI_OPT_FLAG, &o->quiet, 0, 0, NULL, "verdicts only, no matrices"},
		CLI_TRAFFIC_OPTS(&o->traffic_opts, CLI_TCLASS_NO_CM),
		CLI_OPT_GONE_ROW("iters", 0, "--iters is now -n/--count"),
		CLI_OPT_GONE_ROW("qp-timeout", 0, "--qp-timeout is now --ack-timeout (as bench's)"),
		CLI_OPT_GONE_ROW("timeout", 't',
				"-t/--timeout (milliseconds) is now --wc-timeout MS (-t is "
				"rdmakit's --timeout SEC)"),
		CLI_OPT_GONE_ROW("", 'J', "-J FILE is now --json-file FILE (--json is JSON on stdout)"),
		CLI_OPT_GONE_ROW("", 'q', "-q is now --quiet (-q is bench's --qps)"),
		CLI_OPT_END,
	};
	int first, ret;

	/* cli_opts_parse() prints its own errors (getopt's opterr is off): quiet
	 * only keeps the other ranks from printing the help */
	ret = cli_opts_parse("mesh", opts, argc, argv, &first);
	cli_json_want(opts, argc, argv, ret == 0);
	if (ret == 2) {
		if (!quiet)
			printf("rdmakit-mesh %s\n", rk_version());
		return 1;
	}
	if (ret == 1) {
		if (!quiet)
			cli_opts_help_epilog(stdout, usage, description, opts, epilog);
		return 1;
	}
	if (ret)
		return -EINVAL;
	if (first < argc) {
		/* --json took a file before it was a flag (issue 16, 35) */
		if (o->json_out)
			fprintf(stderr, "rdmakit-mesh: unexpected argument '%s': '--json FILE' is "
				"now --json-file FILE (--json alone is JSON on stdout)\n",
				argv[first]);
		else
			fprintf(stderr, "rdmakit-mesh: unexpected argument '%s'\n", argv[first]);
		return -EINVAL;
	}
	if (cli_traffic("mesh", &o->traffic_opts, &o->traffic))
		return -EINVAL;
	if (rk_mesh_sched_parse(o->schedule, &o->sched)) {
		fprintf(stderr, "rdmakit-mesh: --schedule: '%s' is not pairs, shift or serial\n",
			o->schedule);
		return -EINVAL;
	}
	return parse_stages(o);
}

/* Open MPI hands its ranks a pseudo-terminal whatever mpirun's own output
 * is: a progress line only when the launcher's standard output is a terminal
 * too (rank 0 runs under mpirun itself). */
static bool on_terminal(void)
{
	char link[64], target[64];
	ssize_t len;

	if (!isatty(STDOUT_FILENO))
		return false;
	snprintf(link, sizeof(link), "/proc/%d/fd/1", (int)getppid());
	len = readlink(link, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = 0;
	return !strncmp(target, "/dev/pts/", 9) || !strncmp(target, "/dev/tty", 8);
}

static void open_port(struct mesh_ctx *c, struct mesh_node *me)
{
	int ret;

	gethostname(me->host, sizeof(me->host) - 1);
	ret = rk_mesh_port_open(c->o->device, (uint8_t)c->o->port, (int)c->o->gid_index,
				c->o->bw_size, c->o->events, &c->port);
	if (ret) {
		me->error = ret;
		snprintf(me->error_text, sizeof(me->error_text), "opening %s port %d: %s",
			 c->o->device ? c->o->device : "the first RDMA device", (int)c->o->port,
			 strerror(-ret));
		snprintf(me->device, sizeof(me->device), "%s", c->o->device ? c->o->device : "");
		return;
	}
	c->port->qp_timeout = (uint8_t)c->o->qp_timeout;
	c->port->traffic = c->o->traffic;
	if (c->rank == 0) /* every rank's device alike: said once */
		rk_traffic_note(&c->o->traffic, c->port->sel.dev, c->port->sel.port_num,
				c->port->sel.has_gid ? &c->port->sel.gid : NULL, false);
	snprintf(me->device, sizeof(me->device), "%s", c->port->sel.dev->info.name);
	me->port_mtu = rk_mtu_bytes(rk_device_port(c->port->sel.dev,
						   c->port->sel.port_num)->active_mtu);
	if (c->port->sel.has_gid)
		rk_gid_str(&c->port->sel.gid.gid, me->gid, sizeof(me->gid));
}

static void init_row(struct mesh_ctx *c)
{
	for (int j = 0; j < c->n; j++) {
		c->row[j].sent = c->row[j].got = -1;
		c->row[j].p50 = c->row[j].p99 = c->row[j].bw = NAN;
	}
}

static int run_stages(struct mesh_ctx *c)
{
	int ret = 0;

	if (c->o->do_reach)
		ret = mesh_stage_reach(c);
	if (!ret && c->o->do_lat)
		ret = mesh_stage_latency(c);
	if (!ret && c->o->do_bw)
		ret = mesh_stage_bandwidth(c);
	return ret;
}

static void gather_rows(struct mesh_ctx *c, struct mesh_cell *all)
{
	int bytes = c->n * (int)sizeof(struct mesh_cell);

	MPI_Gather(c->row, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* Rank 0: which cells to re-test (count broadcast, then the cells). */
static int share_suspects(struct mesh_ctx *c, struct mesh_result *r, int **cells_p)
{
	int k = 0, n = c->n;
	int *cells = calloc((size_t)n * n, sizeof(*cells));

	if (!cells)
		MPI_Abort(MPI_COMM_WORLD, MESH_SETUP);
	if (c->rank == 0 && !c->o->no_retest) {
		struct rk_mesh_input in = {.n = n, .names = r->names, .reach = r->reach,
					   .bw = c->o->do_bw ? r->bw : NULL,
					   .p50 = c->o->do_lat ? r->p50 : NULL,
					   .p99 = c->o->do_lat ? r->p99 : NULL};

		k = rk_mesh_suspects(&in, &r->t, cells, n * n);
		if (k < 0)
			k = 0;
	}
	MPI_Bcast(&k, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(cells, n * n, MPI_INT, 0, MPI_COMM_WORLD);
	*cells_p = cells;
	return k;
}

static int finish(struct mesh_ctx *c, struct mesh_result *r)
{
	int status = MESH_SETUP;

	int ret = mesh_verdicts(r, c->o);

	if (!ret)
		ret = mesh_baseline(r, c->o);
	if (ret) {
		cli_fail(ret);
		return MESH_SETUP;
	}
	if (!c->o->json_out)
		mesh_report_text(r, c->o);
	status = r->exit_status;
	if ((c->o->json && (ret = mesh_report_json(r, c->o))) ||
	    (c->o->csv && (ret = mesh_report_csv(r, c->o->csv))) ||
	    (c->o->svg && (ret = mesh_report_svg(r, c->o->svg)))) {
		cli_fail(ret);
		status = MESH_SETUP;
	}
	if (c->o->json_out)
		cli_json_print(mesh_report_doc(r, c->o));
	return status;
}

static int measure(struct mesh_ctx *c)
{
	struct mesh_cell *all = NULL;
	struct mesh_result r;
	int *cells, k, status = MESH_SETUP;

	memset(&r, 0, sizeof(r));
	if (c->rank == 0 && !(all = calloc((size_t)c->n * c->n, sizeof(*all))))
		MPI_Abort(MPI_COMM_WORLD, MESH_SETUP);
	if (run_stages(c))
		MPI_Abort(MPI_COMM_WORLD, MESH_SETUP);
	gather_rows(c, all);
	r.t.bw_low = c->o->bw_low_pct / 100.0;
	r.t.lat_high = c->o->lat_high_pct / 100.0;
	r.t.lat_jitter = c->o->jitter_pct / 100.0;
	if (c->rank == 0 && mesh_result_build(&r, c->n, c->nodes, all))
		MPI_Abort(MPI_COMM_WORLD, MESH_SETUP);
	k = share_suspects(c, &r, &cells);
	if (k) {
		mesh_retest(c, cells, k);
		gather_rows(c, all);
		if (c->rank == 0)
			mesh_result_fill(&r, all, false);
	}
	free(cells);
	if (c->rank == 0)
		status = finish(c, &r);
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	mesh_result_free(&r);
	free(all);
	return status;
}

/* --json on rank 0: the outcome document, the run's (a report: "result" ok,
 * its findings in "outliers" and "exit_status") or a setup or usage error's
 * (cli_json.h); cli_status is CLI_OK or CLI_FAILED. Returns status. */
static int finish_json(bool rank0, int cli_status, int status)
{
	if (rank0)
		cli_json_finish(cli_status);
	return status;
}

/* Whether this process is rank 0 as its launcher says (before MPI_Init):
 * Open MPI, MPICH/Hydra and PMIx launchers; a process started alone is. */
static bool launcher_rank0(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	unsigned int i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v)
			return strcmp(v, "0") == 0;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct mesh_opts o;
	struct mesh_ctx c = {.o = &o};
	int ret, status;

	/* Options before MPI_Init: --help and usage errors need no MPI (alone,
	 * MPI_Init starts a daemon), and every rank parses the same argv; only
	 * rank 0 prints help. */
	defaults(&o);
	if (launcher_rank0())
		cli_json_init(); /* --json: the failure's "error", what stderr said */
	ret = parse(&o, argc, argv, !launcher_rank0());
	if (ret == 1)
		return MESH_CLEAN;
	if (ret)
		return finish_json(launcher_rank0(), cli_fail(-EINVAL), MESH_USAGE);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.n);
	if (c.n < 2) {
		fprintf(stderr, "rdmakit-mesh: needs at least 2 ranks (mpirun -np N, one per node)\n");
		MPI_Finalize();
		return finish_json(c.rank == 0, cli_fail(-EINVAL), MESH_SETUP);
	}
	c.nodes = calloc(c.n, sizeof(*c.nodes));
	c.row = calloc(c.n, sizeof(*c.row));
	if (!c.nodes || !c.row)
		MPI_Abort(MPI_COMM_WORLD, MESH_SETUP);
	c.progress = c.rank == 0 && !o.no_progress && !o.json_out && on_terminal();
	init_row(&c);
	{
		struct mesh_node me = {0};

		open_port(&c, &me);
		MPI_Allgather(&me, sizeof(me), MPI_BYTE, c.nodes, sizeof(me), MPI_BYTE,
			      MPI_COMM_WORLD);
	}
	c.nonce = (uint32_t)time(NULL) ^ (uint32_t)getpid();
	MPI_Bcast(&c.nonce, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
	status = measure(&c);
	rk_mesh_port_close(c.port);
	free(c.row);
	free(c.nodes);
	MPI_Finalize();
	return finish_json(c.rank == 0, status == MESH_SETUP ? CLI_FAILED : CLI_OK, status);
}
