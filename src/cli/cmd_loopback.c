/* rdmakit loopback: one process, two RC QPs on one device connected to each
 * other; SEND/RECV, RDMA WRITE and RDMA READ, each checked byte for byte. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define WAIT_MS 5000

struct loopback_opts {
	struct cli_dev_opts dev;
	uint64_t size;
	uint64_t count;
	uint64_t sge;
	bool events;
	bool json;
};

static const char usage_text[] = "rdmakit loopback [-d DEV] [-g IDX] [-s SIZE] [-n COUNT] "
				 "[--sge N] [--events] [--json]";
static const char description[] =
	"Connect two RC queue pairs on one device to each other and move data between them:\n"
	"SEND/RECV, RDMA WRITE and RDMA READ, COUNT times each, checking every byte.\n"
	"With --sge N each side gathers/scatters its buffer as N pieces.";

enum { STEP_SEND, STEP_WRITE, STEP_READ, STEP_COUNT };

struct step_result {
	const char *name;
	const char *what;
	uint64_t done;     /* iterations checked */
	double total_us;
	int64_t bad_offset; /* -1: all bytes matched */
	uint32_t byte_len;  /* from the receive completion (SEND) */
};

struct loopback {
	const struct loopback_opts *o;
	struct cli_dev d;
	struct ibv_pd *pd;
	struct rk_cq *cq_a, *cq_b;
	struct rk_mr *mr_a, *mr_b;
	struct rk_qp *qp_a, *qp_b;
	enum ibv_mtu path_mtu;
	struct step_result steps[STEP_COUNT];
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Wait for one completion on cq and check its status. */
static int wait_one(struct rk_cq *cq, const char *what, struct ibv_wc *wc)
{
	int ret, n;

	ret = rk_cq_wait(cq, wc, 1, WAIT_MS, &n);
	if (ret == -ETIMEDOUT) {
		rk_error("%s: no completion within %d ms", what, WAIT_MS);
		return ret;
	}
	if (ret)
		return ret;
	return rk_wc_check(wc, what);
}

static int setup(struct loopback *lb)
{
	const struct loopback_opts *o = lb->o;
	struct rk_qp_init_attr qa = {
		.transport = RK_RC,
		.max_send_wr = 16,
		.max_recv_wr = 16,
		.max_send_sge = (uint32_t)o->sge,
		.max_recv_sge = (uint32_t)o->sge,
	};
	struct rk_endpoint ep_a, ep_b;
	char why[160];
	int ret;

	ret = cli_dev_open(&o->dev, NULL, &lb->d);
	if (ret)
		return ret;
	if (o->sge > (uint64_t)lb->d.dev->info.max_sge) {
		rk_error("--sge %" PRIu64 " is above the device's limit of %d SGEs", o->sge,
			 lb->d.dev->info.max_sge);
		return -EINVAL;
	}
	ret = rk_pd_alloc(lb->d.dev, &lb->pd);
	if (ret)
		return ret;
	ret = rk_cq_create(lb->d.dev, 32, o->events, &lb->cq_a);
	if (ret)
		return ret;
	ret = rk_cq_create(lb->d.dev, 32, o->events, &lb->cq_b);
	if (ret)
		return ret;
	/* A only sends and reads into its buffer; B is the target of WRITE and READ. */
	ret = rk_mr_alloc(lb->pd, o->size, IBV_ACCESS_LOCAL_WRITE, &lb->mr_a);
	if (ret)
		return ret;
	ret = rk_mr_alloc(lb->pd, o->size,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ,
			  &lb->mr_b);
	if (ret)
		return ret;
	qa.port_num = lb->d.port;
	qa.gid = lb->d.has_gid ? &lb->d.gid : NULL;
	ret = rk_qp_create(lb->pd, lb->d.dev, lb->cq_a, lb->cq_a, &qa, &lb->qp_a);
	if (ret)
		return ret;
	ret = rk_qp_create(lb->pd, lb->d.dev, lb->cq_b, lb->cq_b, &qa, &lb->qp_b);
	if (ret)
		return ret;
	rk_qp_local_endpoint(lb->qp_a, &ep_a);
	rk_qp_local_endpoint(lb->qp_b, &ep_b);
	ret = rk_path_mtu(ep_a.mtu, ep_b.mtu, 0, &lb->path_mtu, why, sizeof(why));
	if (ret)
		return ret;
	ret = rk_qp_connect(lb->qp_a, 0, &ep_b, NULL);
	if (ret)
		return ret;
	return rk_qp_connect(lb->qp_b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &ep_a,
			     NULL);
}

static void teardown(struct loopback *lb)
{
	rk_qp_destroy(lb->qp_b);
	rk_qp_destroy(lb->qp_a);
	rk_mr_free(lb->mr_b);
	rk_mr_free(lb->mr_a);
	rk_cq_destroy(lb->cq_b);
	rk_cq_destroy(lb->cq_a);
	rk_pd_free(lb->pd);
	if (lb->d.dev)
		cli_dev_close(&lb->d);
}

/* One SEND, WRITE or READ of the whole buffer, then the check. */
static int run_step(struct loopback *lb, int step, uint64_t iter)
{
	struct step_result *r = &lb->steps[step];
	size_t size = lb->o->size;
	int nsge = (int)lb->o->sge;
	struct ibv_sge sa[64], sb[64];
	struct rk_mr *src = step == STEP_READ ? lb->mr_b : lb->mr_a;
	struct rk_mr *dst = step == STEP_READ ? lb->mr_a : lb->mr_b;
	uint32_t seed = (uint32_t)(iter * STEP_COUNT + (uint64_t)step + 1);
	struct rk_wr wr = {.wr_id = iter, .flags = IBV_SEND_SIGNALED};
	struct ibv_wc wc;
	double t0;
	ssize_t bad;
	int ret;

	rk_pattern_fill(src->buf, size, seed);
	memset(dst->buf, 0, size);
	rk_sge_split(lb->mr_a, 0, (uint32_t)size, nsge, sa);
	rk_sge_split(lb->mr_b, 0, (uint32_t)size, nsge, sb);
	wr.sg = sa;
	wr.nsge = nsge;
	t0 = now_us();
	switch (step) {
	case STEP_SEND:
		ret = rk_post_recv(lb->qp_b, iter, sb, nsge);
		if (ret)
			return ret;
		wr.op = RK_OP_SEND;
		break;
	case STEP_WRITE:
		wr.op = RK_OP_WRITE;
		wr.remote_addr = (uint64_t)(uintptr_t)lb->mr_b->buf;
		wr.rkey = lb->mr_b->mr->rkey;
		break;
	default:
		wr.op = RK_OP_READ;
		wr.remote_addr = (uint64_t)(uintptr_t)lb->mr_b->buf;
		wr.rkey = lb->mr_b->mr->rkey;
		break;
	}
	ret = rk_post(lb->qp_a, &wr);
	if (ret)
		return ret;
	ret = wait_one(lb->cq_a, r->name, &wc);
	if (ret)
		return ret;
	if (step == STEP_SEND) {
		ret = wait_one(lb->cq_b, "RECV", &wc);
		if (ret)
			return ret;
		r->byte_len = wc.byte_len;
		if (wc.byte_len != size) {
			rk_error("RECV completed with %u bytes, %zu were sent", wc.byte_len, size);
			return -EIO;
		}
	}
	r->total_us += now_us() - t0;
	bad = rk_pattern_check(dst->buf, size, seed);
	if (bad >= 0) {
		r->bad_offset = bad;
		rk_error("%s iteration %" PRIu64 ": byte %zd is 0x%02x, expected 0x%02x", r->name,
			 iter + 1, bad, ((uint8_t *)dst->buf)[bad], rk_pattern_byte((size_t)bad, seed));
		return -EIO;
	}
	r->done++;
	return 0;
}

static json_object *report_json(const struct loopback *lb, int result)
{
	const struct loopback_opts *o = lb->o;
	json_object *doc = json_object_new_object(), *steps = json_object_new_array();

	json_object_object_add(doc, "device",
			       json_object_new_string(lb->d.dev ? lb->d.dev->info.name : ""));
	json_object_object_add(doc, "port", json_object_new_int(lb->d.port));
	if (lb->d.has_gid)
		json_object_object_add(doc, "gid", cli_gid_json(&lb->d.gid));
	if (lb->qp_a && lb->qp_b) {
		json_object_object_add(doc, "qp_a", json_object_new_int64(lb->qp_a->qp->qp_num));
		json_object_object_add(doc, "qp_b", json_object_new_int64(lb->qp_b->qp->qp_num));
		json_object_object_add(doc, "path_mtu",
				       json_object_new_int(rk_mtu_bytes(lb->path_mtu)));
	}
	json_object_object_add(doc, "size", json_object_new_int64((int64_t)o->size));
	json_object_object_add(doc, "count", json_object_new_int64((int64_t)o->count));
	json_object_object_add(doc, "sge", json_object_new_int64((int64_t)o->sge));
	json_object_object_add(doc, "events", json_object_new_boolean(o->events));
	for (int s = 0; s < STEP_COUNT; s++) {
		const struct step_result *r = &lb->steps[s];
		json_object *j = json_object_new_object();

		json_object_object_add(j, "op", json_object_new_string(r->name));
		json_object_object_add(j, "checked", json_object_new_int64((int64_t)r->done));
		json_object_object_add(j, "ok", json_object_new_boolean(r->done == o->count));
		json_object_object_add(j, "avg_us", json_object_new_double(
							    r->done ? r->total_us / (double)r->done : 0));
		if (r->bad_offset >= 0)
			json_object_object_add(j, "first_bad_byte",
					       json_object_new_int64(r->bad_offset));
		json_object_array_add(steps, j);
	}
	json_object_object_add(doc, "steps", steps);
	json_object_object_add(doc, "result", json_object_new_string(result ? "failed" : "ok"));
	return doc;
}

static void print_setup(const struct loopback *lb)
{
	char text[64];

	printf("device %s port %u", lb->d.dev->info.name, lb->d.port);
	if (lb->d.has_gid)
		printf(", GID %u %s (%s)\n  %s\n", lb->d.gid.index, rk_gid_type_str(lb->d.gid.type),
		       rk_gid_str(&lb->d.gid.gid, text, sizeof(text)), lb->d.gid.why);
	else
		printf(", LID %u\n", rk_device_port(lb->d.dev, lb->d.port)->lid);
	printf("QP A 0x%x <-> QP B 0x%x: RC, RTS, path MTU %d; %" PRIu64 " bytes x %" PRIu64
	       ", %" PRIu64 " SGE%s, %s completions\n",
	       lb->qp_a->qp->qp_num, lb->qp_b->qp->qp_num, rk_mtu_bytes(lb->path_mtu),
	       lb->o->size, lb->o->count, lb->o->sge, lb->o->sge > 1 ? "s" : "",
	       lb->o->events ? "event-driven" : "polled");
}

static void print_step(const struct loopback *lb, int s)
{
	const struct step_result *r = &lb->steps[s];
	const struct loopback_opts *o = lb->o;

	printf("%-6s %s: %" PRIu64 "/%" PRIu64 " checked, every byte matches, %.1f us avg\n",
	       r->name, r->what, r->done, o->count, r->total_us / (double)r->done);
}

int cmd_loopback(int argc, char **argv)
{
	struct loopback_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT, .size = 4096, .count = 1, .sge = 1,
	};
	const struct rk_opt opts[] = {
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', RK_OPT_SIZE, &o.size, 1, 1u << 30, "BYTES",
		 "bytes per operation (4k, 1M ...)"},
		{"count", 'n', RK_OPT_COUNT, &o.count, 1, 10000000, "N",
		 "times to run each operation (10k = 10000)"},
		{"sge", 0, RK_OPT_COUNT, &o.sge, 1, 64, "N",
		 "split each buffer into N scatter/gather pieces"},
		{"events", 'e', RK_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		{"json", 'j', RK_OPT_FLAG, &o.json, 0, 0, NULL, "print one JSON document"},
		RK_OPT_END,
	};
	struct loopback lb = {.o = &o};
	int ret;

	ret = cli_parse_noargs("loopback", usage_text, description, opts, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.sge > o.size) {
		fprintf(stderr, "rdmakit loopback: option --sge: %" PRIu64
				" pieces do not fit in %" PRIu64 " bytes\n",
			o.sge, o.size);
		return CLI_USAGE;
	}
	lb.steps[STEP_SEND] = (struct step_result){"SEND", "QP A -> QP B, into a posted receive",
						   .bad_offset = -1};
	lb.steps[STEP_WRITE] = (struct step_result){"WRITE", "QP A -> B's buffer by rkey",
						    .bad_offset = -1};
	lb.steps[STEP_READ] = (struct step_result){"READ", "QP A <- B's buffer by rkey",
						   .bad_offset = -1};

	ret = setup(&lb);
	if (ret)
		goto out_teardown;
	if (!o.json)
		print_setup(&lb);
	for (int s = 0; s < STEP_COUNT && !ret; s++) {
		for (uint64_t i = 0; i < o.count && !ret; i++)
			ret = run_step(&lb, s, i);
		if (!ret && !o.json)
			print_step(&lb, s);
	}
	if (o.json)
		cli_json_print(report_json(&lb, ret));
	else if (!ret)
		printf("loopback: SEND, WRITE and READ of %" PRIu64 " bytes x %" PRIu64
		       " checked byte for byte: OK\n",
		       o.size, o.count);
	else
		printf("loopback: FAILED (%s)\n", rk_strerror(ret));
out_teardown:
	teardown(&lb);
	return ret ? CLI_FAILED : CLI_OK;
}
