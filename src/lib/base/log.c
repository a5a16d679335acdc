/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Logging: one line per message, to stderr or a handler. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdmakit/log.h>

static int log_level = -1; /* -1: not yet read from RDMAKIT_LOG */
static rk_log_handler_t log_handler;
static void *log_handler_arg;

static const char *const level_names[] = {
	[RK_LOG_ERROR] = "error",
	[RK_LOG_WARN] = "warning",
	[RK_LOG_INFO] = "info",
	[RK_LOG_DEBUG] = "debug",
};

static int level_from_env(void)
{
	const char *v = getenv("RDMAKIT_LOG");

	if (!v)
		return RK_LOG_WARN;
	if (!strcasecmp(v, "error"))
		return RK_LOG_ERROR;
	if (!strcasecmp(v, "info"))
		return RK_LOG_INFO;
	if (!strcasecmp(v, "debug"))
		return RK_LOG_DEBUG;
	return RK_LOG_WARN;
}

void rk_log_set_level(enum rk_log_level level)
{
	__atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

/* Atomic: the benchmark's threads log too; a race here only stores the same
 * value from the environment twice. */
enum rk_log_level rk_log_get_level(void)
{
	int level = __atomic_load_n(&log_level, __ATOMIC_RELAXED);

	if (level < 0) {
		level = level_from_env();
		__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
	}
	return (enum rk_log_level)level;
}

void rk_log_set_handler(rk_log_handler_t handler, void *arg)
{
	log_handler = handler;
	log_handler_arg = arg;
}

static __thread const char *thread_tag;
static __thread char *thread_error;
static __thread size_t thread_error_len;

void rk_log_thread_scope(const char *tag, char *first_error, size_t len)
{
	thread_tag = tag;
	thread_error = len ? first_error : NULL;
	thread_error_len = len;
	if (thread_error)
		thread_error[0] = '\0';
}

/* The thread's first error, kept (see rk_log_thread_scope()). */
static void keep_error(enum rk_log_level level, const char *msg)
{
	if (level == RK_LOG_ERROR && thread_error && !thread_error[0])
		snprintf(thread_error, thread_error_len, "%s", msg);
}

void rk_log(enum rk_log_level level, const char *fmt, ...)
{
	int saved_errno = errno; /* keep %m meaningful for the caller's failure */
	char msg[1024];
	va_list ap;

	if ((int)level > (int)rk_log_get_level())
		return;
	va_start(ap, fmt);
	errno = saved_errno;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	keep_error(level, msg);
	if (thread_tag) {
		char tagged[sizeof(msg)];
		size_t n = strnlen(thread_tag, sizeof(msg) / 2), m = strlen(msg);

		/* "TAG: msg", the message cut where it no longer fits */
		if (m > sizeof(msg) - n - 3)
			m = sizeof(msg) - n - 3;
		memcpy(tagged, thread_tag, n);
		memcpy(tagged + n, ": ", 2);
		memcpy(tagged + n + 2, msg, m);
		tagged[n + 2 + m] = '\0';
		memcpy(msg, tagged, sizeof(msg));
	}
	if (log_handler)
		log_handler(level, msg, log_handler_arg);
	else
		fprintf(stderr, "rdmakit: %s: %s\n", level_names[level], msg);
	errno = saved_errno;
}
