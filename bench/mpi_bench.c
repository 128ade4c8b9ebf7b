/* mpi_bench - what MPI gives between ranks, as the MPI executor sees it.

       mpirun -np 2 build/mpi_bench [REPS]

   dp_mpi_pingpong between ranks 0 and 1 for messages of 0 bytes to 16 MiB
   (REPS round trips each, default 200; fewer for the large ones): the
   one-way time (half the median round trip) and the bandwidth it gives
   (bytes / one-way time), as a markdown table from rank 0. The small
   messages' one-way time is MPI's per-message overhead (its latency); the
   large ones' bandwidth is what a cross-node tensor gets. Build (build.sh
   does, where mpicc is found):
       mpicc -std=gnu11 -O2 -DDP_WITH_MPI -I. -o mpi_bench bench/mpi_bench.c -lm -pthread */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 0, 8, 64, 1024, 8192, 65536, 524288, 4194304, 16777216 };
    int provided = 0, rank = 0, size = 1, reps = 200, i, rc = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) reps = atoi(argv[1]);
    if (size < 2 || reps < 1) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 mpi_bench [REPS]: 2 ranks or more, REPS >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) {
        printf("| message | one-way time (us) | bandwidth (MB/s) |\n");
        printf("|---:|---:|---:|\n");
    }
    for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]) && !rc; i++) {
        dp_error err;
        double t = 0;
        int r = sizes[i] >= 4194304 ? (reps + 9) / 10 : reps;
        rc = dp_mpi_pingpong(NULL, 1, sizes[i], r, &t, &err);
        if (rc && rank == 0) fprintf(stderr, "mpi_bench: %s\n", err.msg);
        if (!rc && rank == 0) {
            if (sizes[i] == 0) printf("| 0 B | %.2f | - |\n", 1e6 * t);
            else printf("| %zu B | %.2f | %.0f |\n", sizes[i], 1e6 * t, sizes[i] / t / 1e6);
        }
    }
    MPI_Finalize();
    return rc ? 1 : 0;
}
