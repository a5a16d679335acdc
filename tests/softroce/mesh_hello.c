/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mesh_hello: the softroce mesh test bed's MPI check. Every rank gathers
 * every rank's host name with MPI_Allgather; rank 0 prints one line per rank,
 * "rank R of N on HOST", so the test sees where each rank ran.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "";
	char *all;
	int rank, size, len, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(name, &len);
	all = calloc((size_t)size, sizeof(name));
	if (!all) {
		fprintf(stderr, "mesh_hello: out of memory for %d names\n", size);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allgather(name, sizeof(name), MPI_CHAR, all, sizeof(name), MPI_CHAR, MPI_COMM_WORLD);
	if (rank == 0)
		for (i = 0; i < size; i++)
			printf("rank %d of %d on %s\n", i, size, all + (size_t)i * sizeof(name));
	free(all);
	MPI_Finalize();
	return 0;
}
