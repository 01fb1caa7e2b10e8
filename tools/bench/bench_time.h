/* SPDX-License-Identifier: MIT */
/* Timing shared by the bench programs: the clock and one timed run. */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Warms up with a tenth of iters first: the first hit of a nop5 site traps, and
 * later ones take the trampoline. Then times iters iterations of loop and prints
 * the line run.sh reads: "ns_per_iter X iters N total M". Returns M, the
 * iterations run in all (warm-up included).
 */
static inline uint64_t bench_time(void (*loop)(uint64_t), uint64_t iters)
{
	uint64_t warm = iters / 10 + 1, t0, t1;

	loop(warm);
	t0 = now_ns();
	loop(iters);
	t1 = now_ns();
	printf("ns_per_iter %.3f iters %" PRIu64 " total %" PRIu64 "\n",
	       (double)(t1 - t0) / (double)iters, iters, iters + warm);
	fflush(stdout);
	return iters + warm;
}

#endif /* BENCH_TIME_H */
