/* SPDX-License-Identifier: MIT */
/*
 * bench_lttng: the LTTng-UST peer of bench.c's "event" mode: one tracepoint with
 * an int64, a string and an int field per iteration. Same handshake: prints
 * "bench: pid N", waits for SIGUSR1, then until the tracepoint is enabled by a
 * session (at most 10 s), warms up, times --iters iterations.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench_tp.h"

#include "bench_time.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(bench, event, (int64_t)i, "hello", (int)(i & 1));
}

int main(int argc, char **argv)
{
	uint64_t iters = 1000000, deadline;
	sigset_t set;
	int sig;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench_lttng [--iters N]\n");
			return 2;
		}
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("bench: pid %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	deadline = now_ns() + 10000000000ULL;
	while (!lttng_ust_tracepoint_enabled(bench, event)) {
		if (now_ns() > deadline) {
			fprintf(stderr, "bench_lttng: tracepoint not enabled after 10 s\n");
			return 3;
		}
		usleep(1000);
	}
	bench_time(loop, iters);
	return 0;
}
