/* SPDX-License-Identifier: MIT */
/* Timing shared by the bench programs: the clock and one timed run. */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The timed run's chunks: each timed on its own. */
#define BENCH_CHUNKS 50

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Warms up with a tenth of iters first: the first hit of a nop5 site traps, and
 * later ones take the trampoline. Then times iters iterations of loop in
 * BENCH_CHUNKS chunks, each timed on its own, and prints the line run.sh reads:
 * "ns_per_iter X iters N total M excess_ms E". X is the median chunk's ns an
 * iteration: the steady state. E is the time the chunks took beyond X for
 * each of their iterations: a cost paid once (an attach's, a first batch's,
 * memory touched the first time) shows there and not in X. Returns M, the
 * iterations run in all (warm-up included).
 */
static inline uint64_t bench_time(void (*loop)(uint64_t), uint64_t iters)
{
	uint64_t warm = iters / 10 + 1, per = iters / BENCH_CHUNKS, done = 0, all = 0;
	double ns[BENCH_CHUNKS], sorted[BENCH_CHUNKS], x;
	int n = 0;

	if (per == 0)
		per = 1;
	loop(warm);
	while (done < iters && n < BENCH_CHUNKS) {
		/* The last chunk takes the remainder. */
		uint64_t c = n == BENCH_CHUNKS - 1 || done + per > iters ? iters - done : per;
		uint64_t t0 = now_ns(), t1;

		loop(c);
		t1 = now_ns();
		all += t1 - t0;
		ns[n++] = (double)(t1 - t0) / (double)c;
		done += c;
	}
	for (int i = 0; i < n; i++)
		sorted[i] = ns[i];
	qsort(sorted, n, sizeof(sorted[0]), bench_cmp_double);
	x = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	printf("ns_per_iter %.3f iters %" PRIu64 " total %" PRIu64 " excess_ms %.3f\n", x, done,
	       done + warm, ((double)all - x * (double)done) / 1e6);
	fflush(stdout);
	return done + warm;
}

#endif /* BENCH_TIME_H */
