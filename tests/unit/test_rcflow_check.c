/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RC flow's options as a command line gives them (rcflow.h,
 * rk_rcflow_check(), rk_rcflow_inject_parse()): each refusal names the
 * option, and what a side may do passes. Pure logic: nothing is opened. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rcflow.h>

#include "unit.h"

static uint32_t op(const char *name)
{
	uint32_t code;

	assert_int_equal(rk_rcflow_op_parse(name, &code), 0);
	return code;
}

/* A client of write, 4096 bytes, host memory: passes as it is. */
static struct rk_rcflow_opts client(void)
{
	return (struct rk_rcflow_opts){.host = "198.18.0.1", .op = op("write"), .size = 4096,
				       .mem = RK_MEM_HOST};
}

static struct rk_rcflow_opts server(void)
{
	return (struct rk_rcflow_opts){.server = true, .op = RK_RCFLOW_OP_ANY, .size = 4096};
}

static void check(int line, const struct rk_rcflow_opts *o, const char *want)
{
	char why[200] = "";
	int ret = rk_rcflow_check(o, why, sizeof(why));

	if (ret != (want ? -EINVAL : 0) || (want && !strstr(why, want))) {
		print_error("line %d: returned %d, why '%s'; expected %s '%s'\n", line, ret, why,
			    want ? "-EINVAL with" : "0", want ? want : "");
		fail();
	}
}

static void test_refused(void **state)
{
	struct rk_rcflow_opts o;

	(void)state;
	o = client(), o.host = NULL;
	check(__LINE__, &o, "a client needs the server's address");
	o = client(), o.size = 0;
	check(__LINE__, &o, "option --size: not 1..4 GiB");
	o = client(), o.size = 1ull << 33;
	check(__LINE__, &o, "option --size: not 1..4 GiB");
	o = client(), o.sge = RK_RCFLOW_MAX_SGE + 1;
	check(__LINE__, &o, "option --sge: not 1..64");
	o = client(), o.sge = -1;
	check(__LINE__, &o, "option --sge: not 1..64");
	o = client(), o.sge = 9, o.size = 4;
	check(__LINE__, &o, "option --sge: 9 pieces do not fit in 4 bytes");
	o = client(), o.op = RK_RCFLOW_OP_ANY;
	check(__LINE__, &o, "the op code is not one of");
	o = client(), o.op = op("fetch-add"), o.size = 4;
	check(__LINE__, &o, "option --size: atomics need at least 8 bytes");
	o = client(), o.op = op("all"), o.size = 7;
	check(__LINE__, &o, "option --size: atomics need at least 8 bytes");
	o = server(), o.op = op("cmp-swap"), o.size = 4;
	check(__LINE__, &o, "option --size: atomics need at least 8 bytes");
	o = client(), o.mem = RK_MEM_DM;
	check(__LINE__, &o, "device memory is for the server's buffer");
	o = client(), o.inject = RK_RCFLOW_INJECT_NO_ACCESS;
	check(__LINE__, &o, "option --inject: no-access is not a fault this side can inject");
	o = server(), o.inject = RK_RCFLOW_INJECT_OUTSIDE;
	check(__LINE__, &o, "option --inject: outside is not a fault this side can inject");
	o = server(), o.inject = (enum rk_rcflow_inject)99;
	check(__LINE__, &o, "option --inject: this code is not a fault");
	o = client(), o.srq = true;
	check(__LINE__, &o, "option --srq is the server's");
}

static void test_passed(void **state)
{
	struct rk_rcflow_opts o;

	(void)state;
	o = client();
	check(__LINE__, &o, NULL);
	o = client(), o.op = op("all"), o.size = 8, o.sge = 8, o.inject = RK_RCFLOW_INJECT_OUTSIDE;
	check(__LINE__, &o, NULL);
	o = client(), o.sge = 4, o.size = 4, o.inject = RK_RCFLOW_INJECT_WRONG_RKEY;
	check(__LINE__, &o, NULL);
	o = server(), o.size = 1; /* serves any op: atomics are the client's to ask */
	check(__LINE__, &o, NULL);
	o = server(), o.mem = RK_MEM_DM, o.srq = true, o.inject = RK_RCFLOW_INJECT_NO_RECV;
	check(__LINE__, &o, NULL);
	/* --srq with --cm is refused by the run, not here (it knows the connection). */
	o.cm = true;
	check(__LINE__, &o, NULL);
}

static void test_inject_names(void **state)
{
	static const char *const names[] = {
		[RK_RCFLOW_INJECT_WRONG_RKEY] = "wrong-rkey", [RK_RCFLOW_INJECT_OUTSIDE] = "outside",
		[RK_RCFLOW_INJECT_NO_ACCESS] = "no-access", [RK_RCFLOW_INJECT_NO_RECV] = "no-recv",
	};
	enum rk_rcflow_inject inject = RK_RCFLOW_INJECT_NONE;

	(void)state;
	for (int i = RK_RCFLOW_INJECT_WRONG_RKEY; i <= RK_RCFLOW_INJECT_NO_RECV; i++) {
		assert_int_equal(rk_rcflow_inject_parse(names[i], &inject), 0);
		assert_int_equal(inject, i);
	}
	assert_int_equal(rk_rcflow_inject_parse("none", &inject), -EINVAL);
	assert_int_equal(rk_rcflow_inject_parse("", &inject), -EINVAL);
	assert_int_equal(rk_rcflow_inject_parse(NULL, &inject), -EINVAL);
	assert_int_equal(inject, RK_RCFLOW_INJECT_NO_RECV); /* untouched on failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_passed),
		cmocka_unit_test(test_inject_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
