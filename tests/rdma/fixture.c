/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared fixture for the verbs tests. */
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

static void capture_log(enum rk_log_level level, const char *msg, void *arg)
{
	struct fx *f = arg;

	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
	f->logs++;
	fprintf(stderr, "  [library %s] %s\n", level == RK_LOG_ERROR ? "error" : "log", msg);
}

void fx_log_reset(struct fx *f)
{
	f->last_log[0] = '\0';
	f->logs = 0;
}

int fx_open_connected(struct fx *f, int remote_access, int nsge, bool events, int access_b)
{
	int ret = fx_open(f, remote_access, nsge, events);

	if (!ret)
		ret = fx_connect(f, access_b);
	if (ret)
		fprintf(stderr, "fixture: %s\n", rk_strerror(ret));
	return ret;
}

const char *fx_test_ip(void)
{
	const char *ip = getenv("RDMAKIT_TEST_IP");

	return ip && ip[0] ? ip : "198.18.0.1";
}

const char *fx_test_ip6(void)
{
	static char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	char ifname[IF_NAMESIZE] = "", a[INET6_ADDRSTRLEN];
	struct ifaddrs *ifs, *i;
	struct in_addr v4;

	if (inet_pton(AF_INET, fx_test_ip(), &v4) != 1 || getifaddrs(&ifs))
		return NULL;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == v4.s_addr)
			snprintf(ifname, sizeof(ifname), "%s", i->ifa_name);
	buf[0] = '\0';
	for (i = ifs; i && ifname[0]; i = i->ifa_next) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)i->ifa_addr;

		if (s6 && s6->sin6_family == AF_INET6 && !strcmp(i->ifa_name, ifname) &&
		    IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) &&
		    inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a))) {
			snprintf(buf, sizeof(buf), "%s%%%s", a, ifname);
			break;
		}
	}
	freeifaddrs(ifs);
	return buf[0] ? buf : NULL;
}

int fx_open(struct fx *f, int remote_access, int nsge, bool events)
{
	struct rk_gid_want want = {.index = -1};
	struct rk_qp_init_attr qa = {
		.transport = RK_RC,
		.max_send_wr = 32,
		.max_recv_wr = 32,
		.max_send_sge = (uint32_t)nsge,
		.max_recv_sge = (uint32_t)nsge,
	};
	char text[64];
	int ret;

	memset(f, 0, sizeof(*f));
	rk_log_set_handler(capture_log, f);
	rk_log_set_level(RK_LOG_INFO);
	ret = rk_device_open(getenv("RDMAKIT_TEST_DEVICE"), &f->dev);
	if (ret)
		return ret;
	f->port = 1;
	if (rk_port_is_roce(f->dev, f->port)) {
		ret = rk_gid_select(f->dev, f->port, &want, &f->gid);
		if (ret)
			return ret;
		f->has_gid = 1;
		qa.gid = &f->gid;
	}
	printf("# device %s port %u, link layer %s, GID %s %u %s\n", f->dev->info.name, f->port,
	       rk_link_layer_str(f->dev->ports[0].link_layer), f->has_gid ? "index" : "none",
	       f->gid.index, f->has_gid ? rk_gid_str(&f->gid.gid, text, sizeof(text)) : "");
	if ((ret = rk_pd_alloc(f->dev, &f->pd)) ||
	    (ret = rk_cq_create(f->dev, 64, events, &f->cq_a)) ||
	    (ret = rk_cq_create(f->dev, 64, events, &f->cq_b)) ||
	    (ret = rk_mr_alloc(f->pd, FX_BUF, IBV_ACCESS_LOCAL_WRITE, &f->mr_a)) ||
	    (ret = rk_mr_alloc(f->pd, FX_BUF, IBV_ACCESS_LOCAL_WRITE | remote_access, &f->mr_b)))
		return ret;
	qa.port_num = f->port;
	ret = rk_qp_create(f->pd, f->dev, f->cq_a, f->cq_a, &qa, &f->qp_a);
	if (ret)
		return ret;
	ret = rk_qp_create(f->pd, f->dev, f->cq_b, f->cq_b, &qa, &f->qp_b);
	fx_log_reset(f);
	return ret;
}

void fx_close(struct fx *f)
{
	rk_qp_destroy(f->qp_b);
	rk_qp_destroy(f->qp_a);
	rk_mr_free(f->mr_b);
	rk_mr_free(f->mr_a);
	rk_cq_destroy(f->cq_b);
	rk_cq_destroy(f->cq_a);
	rk_pd_free(f->pd);
	rk_device_close(f->dev);
	rk_log_set_handler(NULL, NULL);
	memset(f, 0, sizeof(*f));
}

int fx_connect(struct fx *f, int access_b)
{
	struct rk_endpoint ea, eb;
	int ret;

	rk_qp_local_endpoint(f->qp_a, &ea);
	rk_qp_local_endpoint(f->qp_b, &eb);
	ret = rk_qp_connect(f->qp_a, 0, &eb, NULL);
	if (ret)
		return ret;
	return rk_qp_connect(f->qp_b, access_b, &ea, NULL);
}

int fx_wait(struct rk_cq *cq, struct ibv_wc *wc)
{
	int n;

	return rk_cq_wait(cq, wc, 1, FX_WAIT_MS, &n);
}

/* ---- log capture for tests with threads ---- */

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static char capture_text[65536];
static size_t capture_len;

/* A message that no longer fits starts the text afresh: the newest
 * messages are the ones a test asks about. */
static void capture_any(enum rk_log_level level, const char *msg, void *arg)
{
	size_t n;

	(void)arg;
	pthread_mutex_lock(&capture_lock);
	n = strlen(msg) + 1;
	if (capture_len + n >= sizeof(capture_text))
		capture_len = 0;
	capture_len += (size_t)snprintf(capture_text + capture_len,
					sizeof(capture_text) - capture_len, "%s\n", msg);
	if (capture_len >= sizeof(capture_text))
		capture_len = sizeof(capture_text) - 1;
	fprintf(stderr, "  [library %s] %s\n", level == RK_LOG_ERROR ? "error" : "log", msg);
	pthread_mutex_unlock(&capture_lock);
}

void fx_capture_start(void)
{
	rk_log_set_handler(capture_any, NULL);
	rk_log_set_level(RK_LOG_INFO);
}

void fx_capture_stop(void)
{
	rk_log_set_handler(NULL, NULL);
}

int fx_capture_setup(void **state)
{
	(void)state;
	fx_capture_start();
	return 0;
}

int fx_capture_teardown(void **state)
{
	(void)state;
	fx_capture_stop();
	return 0;
}

void fx_capture_reset(void)
{
	pthread_mutex_lock(&capture_lock);
	capture_text[0] = '\0';
	capture_len = 0;
	pthread_mutex_unlock(&capture_lock);
}

bool fx_capture_has(const char *s)
{
	bool found;

	pthread_mutex_lock(&capture_lock);
	found = strstr(capture_text, s) != NULL;
	pthread_mutex_unlock(&capture_lock);
	if (!found)
		fprintf(stderr, "# the library's log does not contain \"%s\"\n", s);
	return found;
}

void fx_check_refused(const char *what, int ret, int want, const char *msg)
{
	if (ret != want) {
		print_error("%s: returned %d, expected %d\n", what, ret, want);
		fail();
	}
	if (msg && !fx_capture_has(msg)) {
		print_error("%s: refused without saying \"%s\"\n", what, msg);
		fail();
	}
}

uint16_t fx_next_port(uint16_t base)
{
	static uint16_t port;

	if (!port)
		port = base;
	return port++;
}

int64_t fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *fx_iwarp_dev(void)
{
	static char iw[256];
	const char *want = getenv("RDMAKIT_TEST_DEVICE");
	bool other = false;
	struct dirent *e;
	DIR *d;

	iw[0] = '\0';
	d = opendir("/sys/class/infiniband");
	while (d && (e = readdir(d))) {
		char path[512], type[64] = "";
		FILE *f;

		if (e->d_name[0] == '.' || (want && want[0] && strcmp(want, e->d_name)))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_type", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(type, sizeof(type), f))
			type[0] = '\0';
		fclose(f);
		if (!strstr(type, "RNIC"))
			other = true;
		else if (!iw[0] || strcmp(e->d_name, iw) < 0)
			snprintf(iw, sizeof(iw), "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return iw[0] && !other ? iw : NULL;
}

/* Whether name is a word of the space-separated list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* How many space-separated words s has. */
static size_t words(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		n += *p != ' ' && (p == s || p[-1] == ' ');
	return n;
}

int fx_run_group(const char *what, const struct CMUnitTest *tests, size_t n)
{
	const char *cases = getenv("RDMAKIT_IWARP_CASES"), *iw = fx_iwarp_dev();
	struct CMUnitTest *run;
	size_t k = 0;
	int ret;

	printf("# %s against %s\n", what, fx_test_ip());
	if (!iw || !cases || !cases[0])
		return _cmocka_run_group_tests("tests", tests, n, fx_capture_setup,
					       fx_capture_teardown);
	run = calloc(n, sizeof(*run));
	if (!run)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (in_list(cases, tests[i].name))
			run[k++] = tests[i];
		else
			printf("# iWARP (%s): left out: %s (%s)\n", iw, tests[i].name,
			       getenv("RDMAKIT_IWARP_LEFT_OUT") ?: "not among RDMAKIT_IWARP_CASES");
	}
	printf("# iWARP (%s): %zu of %zu cases run\n", iw, k, n);
	if (words(cases) != k) {
		printf("# RDMAKIT_IWARP_CASES names %zu cases, %zu of them here: \"%s\"\n",
		       words(cases), k, cases);
		k = 0;
	}
	ret = k ? _cmocka_run_group_tests("tests", run, k, fx_capture_setup, fx_capture_teardown) :
		  1;
	free(run);
	return ret;
}
