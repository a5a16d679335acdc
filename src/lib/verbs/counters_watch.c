/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A port's counters read every interval, their changes handed to a callback
 * (counters.h), until a count or a stop request. */
#include <errno.h>
#include <time.h>

#include <rdmakit/counters.h>
#include <rdmakit/log.h>
#include <rdmakit/stop.h>

/* The longest sleep between looks at the stop request: a signal that lands
 * just before a sleep starts is seen this late at the most. */
#define WATCH_SLICE_NS 100000000L

static void add_ns(struct timespec *t, uint64_t ns)
{
	ns += (uint64_t)t->tv_nsec;
	t->tv_sec += (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Sleep until deadline (CLOCK_MONOTONIC) in slices; false when a stop was
 * requested first. */
static bool sleep_until(const struct timespec *deadline)
{
	struct timespec now, next;

	for (;;) {
		if (rk_stop_requested())
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!before(&now, deadline))
			return true;
		next = now;
		add_ns(&next, WATCH_SLICE_NS);
		if (before(deadline, &next))
			next = *deadline;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

/* One reading after prev: the changes go to the callback, *prev_p moves on. */
static int watch_step(const struct rk_device *dev, const struct rk_counters_watch_opts *o,
		      uint64_t interval, struct rk_counters **prev_p)
{
	struct rk_counters *next;
	struct rk_counters_delta *d;
	int ret;

	ret = rk_counters_read(dev, (*prev_p)->port, &next);
	if (ret)
		return ret;
	ret = rk_counters_diff(*prev_p, next, true, &d);
	if (ret) {
		rk_counters_free(next);
		return ret;
	}
	if (o->on_interval)
		o->on_interval(interval, d, o->arg);
	rk_counters_delta_free(d);
	rk_counters_free(*prev_p);
	*prev_p = next;
	return 0;
}

int rk_counters_watch(const struct rk_device *dev, const struct rk_counters_watch_opts *o,
		      uint64_t *done_p)
{
	struct rk_counters *prev;
	struct timespec deadline;
	uint64_t done = 0;
	int ret;

	*done_p = 0;
	if (!o->interval_ms) {
		rk_error("watching counters: an interval of 0 ms");
		return -EINVAL;
	}
	ret = rk_counters_read(dev, o->port_num ? o->port_num : 1, &prev);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	while (!o->count || done < o->count) {
		add_ns(&deadline, (uint64_t)o->interval_ms * 1000000u);
		if (!sleep_until(&deadline))
			break;
		ret = watch_step(dev, o, done + 1, &prev);
		if (ret)
			break;
		*done_p = ++done;
	}
	rk_counters_free(prev);
	return ret;
}
