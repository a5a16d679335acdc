/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: logging.
 *
 * Messages go to stderr as "rdmakit: LEVEL: text" unless a handler is set.
 * Conventions: QPN as 0x%x, LID in decimal, %m right after a failed system
 * call, and a hint that says what to check where one is known.
 */
#ifndef RDMAKIT_LOG_H
#define RDMAKIT_LOG_H

#include <stddef.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_log_level {
	RK_LOG_ERROR = 0,
	RK_LOG_WARN,
	RK_LOG_INFO,
	RK_LOG_DEBUG,
};

typedef void (*rk_log_handler_t)(enum rk_log_level level, const char *msg, void *arg);

/* Only messages at or below this level are emitted (default RK_LOG_WARN,
 * or the value of RDMAKIT_LOG: error, warn, info, debug). */
void rk_log_set_level(enum rk_log_level level);

/* Current threshold. */
enum rk_log_level rk_log_get_level(void);

/* Route messages to handler instead of stderr; NULL restores stderr. */
void rk_log_set_handler(rk_log_handler_t handler, void *arg);

/* Emit one message. printf-style; %m is expanded from errno at call time. */
void rk_log(enum rk_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* For a thread serving one of several clients: this thread's messages get
 * "TAG: " in front (NULL: none), and the first error it logs from now on
 * is kept in first_error (len bytes; NULL: none kept). tag and first_error
 * must outlive the scope; rk_log_thread_scope(NULL, NULL, 0) ends it. */
void rk_log_thread_scope(const char *tag, char *first_error, size_t len);

#define rk_error(...) rk_log(RK_LOG_ERROR, __VA_ARGS__)
#define rk_warn(...)  rk_log(RK_LOG_WARN, __VA_ARGS__)
#define rk_info(...)  rk_log(RK_LOG_INFO, __VA_ARGS__)
#define rk_debug(...) rk_log(RK_LOG_DEBUG, __VA_ARGS__)

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
