/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit mesh: hand over to rdmakit-mesh, the one program that links MPI
 * (rdmakit itself stays free of it). Looked for next to this binary first
 * (a build tree, or the same bin directory once installed), then in PATH. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_json.h"

#define MESH_PROG "rdmakit-mesh"

int cmd_mesh(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool build_tree = false;
	int err;

	/* rdmakit-mesh parses the options; where it cannot run, --json still
	 * gets its failure document (cli_json.h). */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			cli_json_wanted();
	argv[0] = (char *)MESH_PROG;
	if (len > 0) {
		char *slash;

		self[len] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			slash[1] = 0;
			/* build tree: src/cli/rdmakit next to src/mesh/rdmakit-mesh */
			snprintf(path, sizeof(path), "%s%s", self, MESH_PROG);
			if (access(path, X_OK))
				snprintf(path, sizeof(path), "%s../mesh/%s", self, MESH_PROG);
			if (!access(path, X_OK))
				execv(path, argv);
			/* This rdmakit is src/cli/rdmakit of a CMake build tree. */
			snprintf(path, sizeof(path), "%s../../CMakeCache.txt", self);
			build_tree = !access(path, R_OK);
		}
	}
	execvp(MESH_PROG, argv);
	err = errno;
	if (build_tree)
		fprintf(stderr, "rdmakit mesh: cannot run %s: %s (this build tree has none: it is "
				"built only where CMake finds MPI: apt-get install openmpi-bin "
				"libopenmpi-dev, then rebuild)\n", MESH_PROG, strerror(err));
	else
		fprintf(stderr, "rdmakit mesh: cannot run %s: %s (it is in the rdmakit-mesh "
				"package: apt-get install rdmakit-mesh)\n",
			MESH_PROG, strerror(err));
	return cli_fail(-err);
}
