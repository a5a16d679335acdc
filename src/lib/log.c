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
	if (log_handler)
		log_handler(level, msg, log_handler_arg);
	else
		fprintf(stderr, "rdmakit: %s: %s\n", level_names[level], msg);
	errno = saved_errno;
}
