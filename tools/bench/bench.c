/* SPDX-License-Identifier: MIT */
/*
 * bench: the timed loops of the benchmark suite (tools/bench/run.sh).
 *
 * One mode per invocation, so attach state is clean for each configuration:
 *   baseline  FNV-1a over a buffer, no probe site in the loop
 *   detached  the same work + one REC_INFO (3 fields) + one span enter/exit
 *   event     REC_INFO with an i64, a string and a bool field, inside a recording span
 *   span      one span enter + exit pair, inside a recording span
 *   nested    the event of "event", 4 spans deep under the recording span
 *   sdt       DTRACE_PROBE3 from <sys/sdt.h> (a 1-byte-nop site, no semaphore)
 *
 * Handshake: prints "bench: pid N", then waits for SIGUSR1 (and, with
 * --wait-sema, until the recorder "event" semaphore is armed, i.e. something
 * attached to the event probe). Then it warms up, times --iters iterations with
 * CLOCK_MONOTONIC and prints one line "ns_per_iter X iters N". The harness
 * kills the attacher afterwards.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

#include "bench_time.h"

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define HAVE_SDT 1
#endif
#endif

static volatile uint64_t sink;
static unsigned char buf[4096];
static size_t work_bytes = 64;

/* The real work of the detached loops: FNV-1a over work_bytes bytes. */
static inline uint64_t fnv(uint64_t i)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	buf[0] = (unsigned char)i;
	for (size_t k = 0; k < work_bytes; k++) {
		h ^= buf[k];
		h *= 0x100000001b3ULL;
	}
	return h;
}

__attribute__((noinline)) static void loop_baseline(uint64_t n)
{
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++)
		acc += fnv(i);
	sink = acc;
}

__attribute__((noinline)) static void loop_detached(uint64_t n)
{
	struct rec_span sp;
	uint64_t acc = 0;

	REC_SPAN_INIT(&sp, INFO, "bench work");
	for (uint64_t i = 0; i < n; i++) {
		rec_span_enter(&sp);
		acc += fnv(i);
		REC_INFO("bench detached", REC_I64(i, (int64_t)i), REC_STR(s, "hello"),
			 REC_BOOL(ok, i & 1));
		rec_span_exit(&sp);
	}
	sink = acc;
}

/* The event site used by "event" and "nested", and by the floor and bpftrace peers. */
__attribute__((noinline)) static void loop_event(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		REC_INFO("bench event", REC_I64(i, (int64_t)i), REC_STR(s, "hello"),
			 REC_BOOL(ok, i & 1));
}

__attribute__((noinline)) static void loop_span(uint64_t n)
{
	struct rec_span sp;

	REC_SPAN_INIT(&sp, INFO, "bench span");
	for (uint64_t i = 0; i < n; i++) {
		rec_span_enter(&sp);
		rec_span_exit(&sp);
	}
}

__attribute__((noinline)) static void loop_sdt(uint64_t n)
{
#ifdef HAVE_SDT
	for (uint64_t i = 0; i < n; i++)
		DTRACE_PROBE3(benchsdt, hit, i, (uint64_t)(uintptr_t) "hello", i & 1);
#else
	(void)n;
#endif
}

static int usage(void)
{
	fprintf(stderr, "usage: bench MODE [--iters N] [--work-bytes B] [--no-wait] [--wait-sema]\n"
			"MODE: baseline detached event span nested sdt\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t iters = 1000000;
	int wait_sig = 1, wait_sema = 0;
	const char *mode;
	void (*loop)(uint64_t);
	int depth = 0;

	if (argc < 2)
		return usage();
	mode = argv[1];
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--work-bytes") && i + 1 < argc)
			work_bytes = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-wait"))
			wait_sig = 0;
		else if (!strcmp(argv[i], "--wait-sema"))
			wait_sema = 1;
		else
			return usage();
	}
	if (work_bytes > sizeof(buf) || iters == 0)
		return usage();
	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = (unsigned char)(k * 7 + 1);

	if (!strcmp(mode, "baseline"))
		loop = loop_baseline;
	else if (!strcmp(mode, "detached"))
		loop = loop_detached;
	else if (!strcmp(mode, "event"))
		loop = loop_event;
	else if (!strcmp(mode, "span"))
		loop = loop_span;
	else if (!strcmp(mode, "nested"))
		loop = loop_event, depth = 4;
	else if (!strcmp(mode, "sdt")) {
#ifndef HAVE_SDT
		fprintf(stderr, "bench: built without <sys/sdt.h>\n");
		return 4;
#endif
		loop = loop_sdt;
	} else
		return usage();

	/* Everything runs inside an entered recording span (plus depth child spans). */
	struct rec_recorder *r = rec_recorder_new();
	struct rec_recording *rec = rec_recording_new(r, 1000);
	struct rec_span root, kids[4];

	if (!r || !rec) {
		perror("bench: recording");
		return 1;
	}
	rec_recording_span(&root, rec, "bench");
	rec_span_enter(&root);
	for (int d = 0; d < depth; d++) {
		REC_SPAN_INIT(&kids[d], INFO, "bench nest");
		rec_span_enter(&kids[d]);
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("bench: pid %d\n", (int)getpid());
	fflush(stdout);
	if (wait_sig) {
		int sig;

		sigwait(&set, &sig);
	}
	if (wait_sema) {
		uint64_t deadline = now_ns() + 10000000000ULL;

		while (!REC__ARMED(event)) {
			if (now_ns() > deadline) {
				fprintf(stderr, "bench: event probe not armed after 10 s\n");
				return 3;
			}
			usleep(1000);
		}
	}

	bench_time(loop, iters);

	for (int d = depth - 1; d >= 0; d--)
		rec_span_exit(&kids[d]);
	rec_span_exit(&root);
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
