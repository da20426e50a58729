/*
 * plain_alltoall: an OSU-style MPI_Alltoall latency benchmark that stands in
 * for an unmodified MPI application binary. It uses nothing but <mpi.h> and
 * knows nothing about shim, so the demo can run the very same executable
 * natively and under LD_PRELOAD=libshim.so.
 *
 *   plain_alltoall [-i ITERS] [-w WARMUP] [BYTES...]
 *
 * BYTES are block sizes (bytes each process sends to each process; K or M
 * suffix allowed); default 8 64 512 4K 32K. Output, on rank 0: '#' comment
 * lines, then one line per size: bytes, iterations, and the average time per
 * call in microseconds, taken as the maximum over ranks.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <mpi.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SIZES = 64 };

static int world_rank;
static int world_size;

/* The byte process `from` sends to process `to` at offset i of its block.
 * Mixing all three makes a misplaced or stale block show up. */
static unsigned char pattern(int from, int to, long i) {
  unsigned long x = (unsigned long)from * 2654435761UL + (unsigned long)to * 40503UL + (unsigned long)i * 97UL;
  return (unsigned char)(x ^ (x >> 8) ^ (x >> 16));
}

/* Prints one error line on rank 0 and ends the job with exit status 2. Every
 * rank parses the same argv, so all of them reach this together. */
static void usage_error(const char *message, const char *argument) {
  if (world_rank == 0) {
    fprintf(stderr, "plain_alltoall: %s: '%s'\nusage: plain_alltoall [-i ITERS] [-w WARMUP] [BYTES...]\n", message,
            argument);
  }
  MPI_Finalize();
  exit(2);
}

/* A positive count below `limit`, with an optional K (2^10) or M (2^20) suffix
 * when `suffix_ok`; -1 when the text is not one. */
static long parse_count(const char *text, long limit, int suffix_ok) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || value < 0) return -1;
  if (suffix_ok && (*end == 'K' || *end == 'k')) {
    value = value > limit >> 10 ? limit + 1 : value << 10;
    ++end;
  } else if (suffix_ok && (*end == 'M' || *end == 'm')) {
    value = value > limit >> 20 ? limit + 1 : value << 20;
    ++end;
  }
  if (*end != '\0' || value > limit) return -1;
  return value;
}

static void check_result(const unsigned char *recvbuf, long bytes) {
  for (int from = 0; from < world_size; ++from) {
    for (long i = 0; i < bytes; ++i) {
      const unsigned char expected = pattern(from, world_rank, i);
      const unsigned char got = recvbuf[(long)from * bytes + i];
      if (got != expected) {
        fprintf(stderr,
                "plain_alltoall: WRONG RESULT on rank %d, block %ld B: byte %ld of the block from rank %d is 0x%02x, "
                "expected 0x%02x\n",
                world_rank, bytes, i, from, got, expected);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
  }
}

static double time_per_call(const unsigned char *sendbuf, unsigned char *recvbuf, int bytes, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) {
    MPI_Alltoall(sendbuf, bytes, MPI_BYTE, recvbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Alltoall(sendbuf, bytes, MPI_BYTE, recvbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
  }
  const double mine = (MPI_Wtime() - start) / iters;
  double slowest = 0.0;
  /* The collective is as slow as its slowest process. */
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);

  long iters = 100;
  long warmup = 10;
  long sizes[MAX_SIZES];
  int nsizes = 0;
  /* Buffers hold world_size blocks and counts are ints. */
  const long max_bytes = INT_MAX / world_size;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "-i") == 0 || strcmp(argv[a], "-w") == 0) {
      if (a + 1 >= argc) usage_error("option needs a value", argv[a]);
      const int is_iters = argv[a][1] == 'i';
      const long value = parse_count(argv[a + 1], 1000000000L, 0);
      if (value < (is_iters ? 1 : 0)) {
        usage_error(is_iters ? "-i needs a positive iteration count" : "-w needs a count >= 0", argv[a + 1]);
      }
      *(is_iters ? &iters : &warmup) = value;
      ++a;
    } else if (argv[a][0] == '-') {
      usage_error("unknown option", argv[a]);
    } else {
      const long bytes = parse_count(argv[a], max_bytes, 1);
      if (bytes < 1) {
        char message[128];
        snprintf(message, sizeof message, "a block size must be 1 to %ld bytes (K, M suffix allowed)", max_bytes);
        usage_error(message, argv[a]);
      }
      if (nsizes == MAX_SIZES) usage_error("too many sizes", argv[a]);
      sizes[nsizes++] = bytes;
    }
  }
  if (nsizes == 0) {
    const long defaults[] = {8, 64, 512, 4096, 32768};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; ++i) sizes[nsizes++] = defaults[i];
  }

  long largest = 0;
  for (int s = 0; s < nsizes; ++s) largest = sizes[s] > largest ? sizes[s] : largest;
  /* Page-aligned, as OSU's buffers are. With malloc, where the buffers land
   * depends on what else the process allocated, and it matters: two 64 KiB
   * heap buffers 16 bytes apart made native MPICH's 32 KiB alltoall take 34
   * us instead of 12, so merely preloading a library changed the result. */
  const size_t buffer_bytes = ((size_t)largest * (size_t)world_size + 4095) / 4096 * 4096;
  void *sendmem = NULL;
  void *recvmem = NULL;
  if (posix_memalign(&sendmem, 4096, buffer_bytes) != 0 || posix_memalign(&recvmem, 4096, buffer_bytes) != 0) {
    fprintf(stderr, "plain_alltoall: rank %d: cannot allocate 2 x %ld bytes\n", world_rank, largest * world_size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  unsigned char *sendbuf = sendmem;
  unsigned char *recvbuf = recvmem;

  if (world_rank == 0) {
    printf("# plain_alltoall: MPI_Alltoall of MPI_BYTE blocks on MPI_COMM_WORLD, %d ranks, %ld iterations after %ld "
           "warm-up\n",
           world_size, iters, warmup);
    printf("# latency_us = average time per call, maximum over ranks\n");
    printf("# %10s %10s %12s\n", "bytes", "iters", "latency_us");
  }
  for (int s = 0; s < nsizes; ++s) {
    const long bytes = sizes[s];
    for (int to = 0; to < world_size; ++to) {
      for (long i = 0; i < bytes; ++i) sendbuf[(long)to * bytes + i] = pattern(world_rank, to, i);
    }
    memset(recvbuf, 0, (size_t)bytes * (size_t)world_size);
    const double seconds = time_per_call(sendbuf, recvbuf, (int)bytes, (int)warmup, (int)iters);
    check_result(recvbuf, bytes);
    if (world_rank == 0) {
      printf("  %10ld %10ld %12.2f\n", bytes, iters, seconds * 1e6);
      fflush(stdout);
    }
  }
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
