/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The share engine (rk_share_run) on a real device: the shm and fork ways
 * moving data between processes, every byte checked by the engine and every
 * step looked at here; import refused by name where the provider cannot
 * import (rxe), or used end to end where it can; bad options.
 *
 * Order matters: the fork way calls ibv_fork_init() in this process, which
 * fails once this process has registered memory, so it runs first (the shm
 * and import ways register memory here). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

struct seen {
	int begins, steps;
	int last_nsteps;
};

static void on_progress(enum rk_share_stage stage, const struct rk_share_result *res, void *arg)
{
	struct seen *s = arg;

	if (stage == RK_SHARE_BEGIN) {
		s->begins++;
		return;
	}
	s->steps++;
	s->last_nsteps = res->nsteps;
	printf("#   %-8s %2d %s: %s\n", res->steps[res->nsteps - 1].name,
	       res->steps[res->nsteps - 1].process,
	       res->steps[res->nsteps - 1].ok ? "ok" : "FAILED",
	       res->steps[res->nsteps - 1].detail);
}

static struct rk_share_opts opts(enum rk_share_way way, unsigned int procs, size_t size,
				 struct seen *seen)
{
	return (struct rk_share_opts){.way = way,
				      .device = getenv("RDMAKIT_TEST_DEVICE"),
				      .gid_index = -1,
				      .procs = procs,
				      .size = size,
				      .progress = seen ? on_progress : NULL,
				      .progress_arg = seen};
}

/* The step names in order must be want[] (a space-separated list, "x*n"
 * for n copies) and every step ok. */
static void check_steps(const struct rk_share_result *res, const char *const *want, int nwant)
{
	assert_int_equal(res->nsteps, nwant);
	for (int i = 0; i < res->nsteps; i++) {
		if (strcmp(res->steps[i].name, want[i]))
			fprintf(stderr, "# step %d is '%s', expected '%s'\n", i, res->steps[i].name,
				want[i]);
		assert_string_equal(res->steps[i].name, want[i]);
		if (!res->steps[i].ok)
			fprintf(stderr, "# step %d (%s) failed: %s\n", i, res->steps[i].name,
				res->steps[i].detail);
		assert_true(res->steps[i].ok);
	}
	assert_int_equal(res->failures, 0);
}

static int add(const char **w, int n, const char *name, int count)
{
	for (int i = 0; i < count; i++)
		w[n++] = name;
	return n;
}

static void check_processes(const struct rk_share_result *res, const char *name, int procs)
{
	int next = 0;

	for (int i = 0; i < res->nsteps; i++)
		if (!strcmp(res->steps[i].name, name))
			assert_int_equal(res->steps[i].process, next++);
	assert_int_equal(next, procs);
}

static void test_fork(void **state)
{
	struct seen seen = {0};
	struct rk_share_opts o = opts(RK_SHARE_FORK, 3, 8192, &seen);
	struct rk_share_result *res = malloc(sizeof(*res));
	const char *want[RK_SHARE_MAX_STEPS];
	int n = 0, ret;

	(void)state;
	assert_non_null(res);
	ret = rk_share_run(&o, res);
	printf("# fork: %d (init %d status %s; late %d status %s)\n", ret, res->fork.init_ret,
	       rk_fork_status_str(res->fork.status), res->fork.late_ret,
	       rk_fork_status_str(res->fork.late_status));
	assert_int_equal(ret, 0);
	assert_int_equal(res->fork.init_ret, 0);
	assert_true(res->fork.late_ret == -EINVAL ||
		    (res->fork.late_status == IBV_FORK_UNNEEDED && res->fork.late_ret == 0));
	assert_true(res->fork.late_as_documented);
	n = add(want, n, "init", 1);
	n = add(want, n, "late", 1);
	n = add(want, n, "connect", 3);
	n = add(want, n, "serve", 1);
	n = add(want, n, "issue", 3);
	n = add(want, n, "arrived", 3);
	n = add(want, n, "see", 3);
	check_steps(res, want, n);
	check_processes(res, "issue", 3);
	check_processes(res, "arrived", 3);
	assert_int_equal(seen.begins, 1);
	assert_int_equal(seen.steps, res->nsteps);
	free(res);
}

static void test_shm(void **state)
{
	const unsigned int counts[] = {1, 4};

	(void)state;
	for (unsigned int c = 0; c < 2; c++) {
		unsigned int np = counts[c];
		struct seen seen = {0};
		struct rk_share_opts o = opts(RK_SHARE_SHM, np, 65536, &seen);
		struct rk_share_result *res = malloc(sizeof(*res));
		const char *want[RK_SHARE_MAX_STEPS];
		int n = 0;

		assert_non_null(res);
		printf("# shm with %u workers, 64 KiB per operation\n", np);
		assert_int_equal(rk_share_run(&o, res), 0);
		assert_int_equal(res->shared_bytes, 3 * np * 65536);
		n = add(want, n, "connect", (int)np);
		n = add(want, n, "write", 1);
		n = add(want, n, "see", (int)np);
		n = add(want, n, "serve", 1);
		n = add(want, n, "issue", (int)np);
		n = add(want, n, "arrived", (int)np);
		n = add(want, n, "see", (int)np);
		check_steps(res, want, n);
		check_processes(res, "connect", (int)np);
		check_processes(res, "arrived", (int)np);
		assert_int_equal(seen.begins, 1);
		assert_int_equal(seen.steps, res->nsteps);
		free(res);
	}
}

static void test_import(void **state)
{
	struct seen seen = {0};
	struct rk_share_opts o = opts(RK_SHARE_IMPORT, 2, 4096, &seen);
	struct rk_share_result *res = malloc(sizeof(*res));
	int ret;

	(void)state;
	assert_non_null(res);
	ret = rk_share_run(&o, res);
	printf("# import on %s: %d (%s)\n", res->import.device, ret, rk_strerror(ret));
	assert_int_equal(seen.begins, 1);
	assert_true(res->import.device[0] != '\0');
	if (ret == 0) { /* a provider with import (mlx5) */
		const char *want[] = {"import", "import", "owner", "owner"};

		assert_true(strncmp(res->import.device, "rxe", 3) != 0);
		assert_true(res->import.supported);
		check_steps(res, want, 4);
	} else {
		assert_int_equal(ret, -EOPNOTSUPP);
		assert_false(res->import.supported);
		assert_int_equal(res->nsteps, 1);
		assert_string_equal(res->steps[0].name, "import");
		assert_int_equal(res->steps[0].process, -1);
		assert_false(res->steps[0].ok);
		assert_non_null(strstr(res->steps[0].detail, "EOPNOTSUPP from the provider"));
		assert_non_null(strstr(res->steps[0].detail, res->import.device));
		assert_non_null(strstr(res->steps[0].detail, "rdmakit share shm"));
	}
	free(res);
}

static void test_bad_options(void **state)
{
	struct rk_share_result *res = malloc(sizeof(*res));
	struct rk_share_opts o;

	(void)state;
	assert_non_null(res);
	o = opts(RK_SHARE_SHM, 0, 4096, NULL);
	assert_int_equal(rk_share_run(&o, res), -EINVAL);
	o = opts(RK_SHARE_SHM, RK_SHARE_MAX_PROCS + 1, 4096, NULL);
	assert_int_equal(rk_share_run(&o, res), -EINVAL);
	o = opts(RK_SHARE_FORK, 2, RK_SHARE_MIN_SIZE - 1, NULL);
	assert_int_equal(rk_share_run(&o, res), -EINVAL);
	o = opts((enum rk_share_way)7, 2, 4096, NULL);
	assert_int_equal(rk_share_run(&o, res), -EINVAL);
	assert_int_equal(res->nsteps, 0);
	o = opts(RK_SHARE_SHM, 1, 4096, NULL);
	o.device = "no_such_device0";
	assert_true(rk_share_run(&o, res) < 0);
	assert_int_equal(res->nsteps, 0);
	free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork), /* first: before this process registers memory */
		cmocka_unit_test(test_shm),
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_bad_options),
	};

	return fx_run("share engine tests", tests);
}
