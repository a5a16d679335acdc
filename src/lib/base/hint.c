/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hints that work where the user is (hint_int.h): installed, or a build tree. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/hint_int.h"

#define SOURCE_KEY "rdmakit_SOURCE_DIR:STATIC="

/* dir/CMakeCache.txt's rdmakit source directory, into src: whether found. */
static bool cache_source(const char *dir, char *src, size_t len)
{
	char path[PATH_MAX + 32], line[PATH_MAX];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/CMakeCache.txt", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, SOURCE_KEY, strlen(SOURCE_KEY)))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(src, len, "%s", line + strlen(SOURCE_KEY));
		found = src[0] != '\0';
	}
	fclose(f);
	return found;
}

bool rk_hint_source_dir(char *dir, size_t len)
{
	char self[PATH_MAX], src[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return false;
	self[n] = '\0';
	/* build/src/cli/rdmakit, build/tests/rdma/test_api: the cache is two up. */
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(self, '/');

		if (!slash || slash == self)
			return false;
		*slash = '\0';
		if (cache_source(self, src, sizeof(src))) {
			snprintf(dir, len, "%s", src);
			return true;
		}
	}
	return false;
}

static char no_device[PATH_MAX + 256];
static pthread_once_t no_device_once = PTHREAD_ONCE_INIT;

static void no_device_make(void)
{
	char src[PATH_MAX];
	int n;

	n = snprintf(no_device, sizeof(no_device),
		     "without RDMA hardware, Soft-RoCE makes a device: modprobe rdma_rxe; rdma "
		     "link add rxe0 type rxe netdev IFACE (rdmakit-devices(1))");
	if (n > 0 && (size_t)n < sizeof(no_device) && rk_hint_source_dir(src, sizeof(src)))
		snprintf(no_device + n, sizeof(no_device) - (size_t)n,
			 "; from this build tree: %s/scripts/softroce run -- COMMAND, in a "
			 "Soft-RoCE guest", src);
}

const char *rk_hint_no_device(void)
{
	pthread_once(&no_device_once, no_device_make);
	return no_device;
}
