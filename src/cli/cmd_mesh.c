/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit mesh: hand over to rdmakit-mesh, the one program that links MPI
 * (rdmakit itself stays free of it). Looked for next to this binary first
 * (a build tree, or the same bin directory once installed), then in PATH. */
#include <errno.h>
#include <limits.h>
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
		}
	}
	execvp(MESH_PROG, argv);
	err = errno;
	fprintf(stderr, "rdmakit mesh: cannot run %s: %s (it is built only where MPI is "
			"found: apt-get install openmpi-bin libopenmpi-dev, then rebuild; or put "
			"it in PATH)\n", MESH_PROG, strerror(errno));
	return cli_fail(-err);
}
