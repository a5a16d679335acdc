/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Runs a fuzz target over files (or every file in directories) without
 * libFuzzer: the seed corpus as a regression test in every build, including
 * gcc, valgrind and the sanitizer build. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	uint8_t *buf;
	size_t n;
	long len;
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf) {
		fclose(f);
		return 1;
	}
	n = fread(buf, 1, (size_t)len, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **names;
		int n;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]);
			files++;
			continue;
		}
		n = scandir(argv[i], &names, NULL, alphasort);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];

			if (names[j]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
				bad += run_file(path);
				files++;
			}
			free(names[j]);
		}
		free(names);
	}
	printf("%d input(s) replayed, %d unreadable\n", files, bad);
	return bad || files == 0;
}
