/* SPDX-License-Identifier: MIT */
/*
 * bench: the timed loops of the benchmark suite (tools/bench/run.sh).
 *
 * One mode per invocation, so attach state is clean for each configuration:
 *   baseline  FNV-1a over a buffer, no probe site in the loop
 *   detached  the same work + one REC_INFO (3 fields) + one span enter/exit
 *   detached_ab  baseline and detached alternated in one process, in short
 *             chunks (see run_ab); prints the per-loop medians and the median of
 *             the per-pair ratios. This is what run.sh's detached_ratio uses.
 *   event     REC_INFO with an i64, a string and a bool field, inside a recording span
 *   span      one span enter + exit pair, inside a recording span
 *   nested    the event of "event", 4 spans deep under the recording span
 *   ring_touch  the loop of "event" timed whole over a ring just attached (cold),
 *             then again over the same ring (warm): see run_ring_touch
 *   sdt       DTRACE_PROBE3 from <sys/sdt.h> (a 1-byte-nop site, no semaphore)
 *   pingpong  a byte to and fro between this process and a child it forks first
 *             (two pipes, one round trip an iteration: two context switches on one
 *             CPU), each side inside a span "bench pp" per round trip, in its own
 *             recording. It prints "bench: peer M" (the child) after its pid line.
 *             For the scheduler-hook costs (sched_*_switch_ratio).
 *
 * Handshake: prints "bench: pid N", then waits for SIGUSR1 (and, with
 * --wait-sema, until the recorder "event" semaphore is armed, i.e. something
 * attached to the event probe). Then it warms up, times --iters iterations with
 * CLOCK_MONOTONIC and prints one line "ns_per_iter X iters N total M" (detached_ab:
 * the "ab ..." line of run_ab; it attaches nothing, so run.sh starts it with
 * --no-wait), then "emitted events E span_pairs S sdt_hits H": how many times the
 * timed and warm-up loops ran each kind of site, which is what an attached tool
 * must have counted. The harness kills the attacher afterwards.
 *
 * With --hold, it then stays alive inside its spans, so that the harness can ask
 * the recorder what it counted: in span mode it first enters the loop's span once
 * more (so that the recorder's span stack must show it), prints "bench: holding"
 * and waits for SIGUSR1 (at most 120 s) before it leaves its spans and exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
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

/*
 * The real work of the detached loops: FNV-1a over work_bytes bytes. buf[0]
 * changes every iteration and the sum goes to the volatile sink, so the compiler
 * can neither hoist nor fold the work.
 */
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

/*
 * loop_baseline and loop_detached differ only in the probe sites. Both start on a
 * 64-byte boundary, and run.sh builds bench with -falign-loops=64, so the hot
 * FNV loop inside each starts on a 64-byte boundary too: without that, it
 * landed on a 16-byte boundary in one and straddled a 64-byte line in the other,
 * a code-layout difference that has nothing to do with the probe sites.
 */
__attribute__((noinline, aligned(64))) static void loop_baseline(uint64_t n)
{
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++)
		acc += fnv(i);
	sink = acc;
}

__attribute__((noinline, aligned(64))) static void loop_detached(uint64_t n)
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

/* The span of "span" mode, initialized in main inside the recording span; --hold
 * enters it once more. */
static struct rec_span span_sp;

__attribute__((noinline)) static void loop_span(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rec_span_enter(&span_sp);
		rec_span_exit(&span_sp);
	}
}

/* pingpong: the pipes to the child and from it, and the span of each round trip. */
static int pp_out = -1, pp_in = -1;
static struct rec_span pp_sp;

__attribute__((noinline)) static void loop_pingpong(uint64_t n)
{
	char b = 'x';

	for (uint64_t i = 0; i < n; i++) {
		rec_span_enter(&pp_sp);
		if (write(pp_out, &b, 1) != 1 || read(pp_in, &b, 1) != 1) {
			perror("bench: pingpong");
			exit(1);
		}
		rec_span_exit(&pp_sp);
	}
}

/* The child's side: each byte back, in a span, until the parent closes its end. */
static void pingpong_child(void)
{
	char b;

	for (;;) {
		rec_span_enter(&pp_sp);
		if (read(pp_in, &b, 1) != 1)
			break;
		if (write(pp_out, &b, 1) != 1)
			break;
		rec_span_exit(&pp_sp);
	}
	rec_span_exit(&pp_sp);
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n), nearest rank on a sorted copy; sorts v. */
static double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2 == 0 && q == 0.5)
		return (v[n / 2 - 1] + v[n / 2]) / 2;
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static uint64_t time_chunk(void (*loop)(uint64_t), uint64_t n)
{
	uint64_t t0 = now_ns();

	loop(n);
	return now_ns() - t0;
}

/*
 * detached_ab: baseline (A) and detached (B) in one process, in `chunks` pairs of
 * one A chunk and one B chunk of iters / chunks iterations each (a few ms with
 * the defaults), every chunk timed on its own. Run-to-run differences between
 * processes (CPU placement, frequency, a neighbour's load) then hit both loops
 * alike, and the ratio of the two chunks of a pair, a few ms apart, cancels
 * most of what is left.
 *
 * The order is A B, B A, A B, B A, ... (ABBA): with a strict A B A B, A would
 * always be the first of its pair, so anything that depends on the position
 * (a steady drift of the clock frequency or load within the pair, the cost of
 * refilling caches and predictors after the other loop) would bias every
 * pair's ratio the same way. Swapping the order every other pair cancels such
 * effects to first order. Nothing is dropped: the medians are over all chunks
 * and all pairs.
 *
 * Prints "ab baseline_ns A detached_ns B ratio R ratio_p25 P ratio_p75 Q
 * pairs N chunk_iters C", where A and B are the medians of the chunks' ns per
 * iteration and R the median of the pairs' detached/baseline ratios.
 */
static int run_ab(uint64_t iters, uint64_t chunks)
{
	uint64_t c;
	double *a, *b, *r;

	if (chunks == 0 || chunks > iters)
		chunks = iters;
	c = iters / chunks;
	a = calloc(chunks, sizeof(*a));
	b = calloc(chunks, sizeof(*b));
	r = calloc(chunks, sizeof(*r));
	if (!a || !b || !r) {
		perror("bench: calloc");
		return 1;
	}
	/* Warm-up, as in bench_time: a tenth of the iterations of each loop. */
	loop_baseline(iters / 10 + 1);
	loop_detached(iters / 10 + 1);
	for (uint64_t k = 0; k < chunks; k++) {
		uint64_t ta, tb;

		if (k % 2 == 0) {
			ta = time_chunk(loop_baseline, c);
			tb = time_chunk(loop_detached, c);
		} else {
			tb = time_chunk(loop_detached, c);
			ta = time_chunk(loop_baseline, c);
		}
		a[k] = (double)ta / (double)c;
		b[k] = (double)tb / (double)c;
		r[k] = (double)tb / (double)ta;
	}
	double ma = quantile(a, chunks, 0.5), mb = quantile(b, chunks, 0.5);
	double mr = quantile(r, chunks, 0.5), p25 = quantile(r, chunks, 0.25);
	double p75 = quantile(r, chunks, 0.75);

	printf("ab baseline_ns %.3f detached_ns %.3f ratio %.5f ratio_p25 %.5f ratio_p75 %.5f "
	       "pairs %" PRIu64 " chunk_iters %" PRIu64 "\n",
	       ma, mb, mr, p25, p75, chunks, c);
	fflush(stdout);
	free(a);
	free(b);
	free(r);
	return 0;
}

/* ring_touch: the warm-up's events, and the warm runs after the cold one. */
#define RING_TOUCH_WARMUP 1000
#define RING_TOUCH_WARM_RUNS 5

/* Long enough for recorder-attach to drain the ring (every 10 ms) and to take the
 * sleeping thread's pending buffer (every 50 ms), so that each run starts alike. */
static void ring_touch_pause(void)
{
	struct timespec ts = { .tv_nsec = 200000000 };

	nanosleep(&ts, NULL);
}

/*
 * ring_touch: what the first touch of a fresh ring costs the event loop. A
 * warm-up of RING_TOUCH_WARMUP events (the site's first trap, the thread's
 * buffer, its first flushes) and a pause; then the loop of iters events timed
 * whole, over the ring just attached (cold: run.sh sizes iters so that the
 * loop writes more than the ring holds, and so touches every page of it);
 * then the same loop RING_TOUCH_WARM_RUNS times more over the same ring, each
 * after the same pause (warm). Prints "ring_touch cold_ns C warm_ns W
 * warm_min_ns A warm_max_ns B iters N warm_runs K warmup M", W the median of
 * the warm runs, and returns the events emitted in all.
 */
static uint64_t run_ring_touch(uint64_t iters)
{
	double warm[RING_TOUCH_WARM_RUNS], cold;

	loop_event(RING_TOUCH_WARMUP);
	ring_touch_pause();
	cold = (double)time_chunk(loop_event, iters);
	for (int k = 0; k < RING_TOUCH_WARM_RUNS; k++) {
		ring_touch_pause();
		warm[k] = (double)time_chunk(loop_event, iters);
	}
	double mid = quantile(warm, RING_TOUCH_WARM_RUNS, 0.5);

	printf("ring_touch cold_ns %.0f warm_ns %.0f warm_min_ns %.0f warm_max_ns %.0f iters "
	       "%" PRIu64 " warm_runs %d warmup %d\n",
	       cold, mid, warm[0], warm[RING_TOUCH_WARM_RUNS - 1], iters, RING_TOUCH_WARM_RUNS,
	       RING_TOUCH_WARMUP);
	fflush(stdout);
	return RING_TOUCH_WARMUP + (RING_TOUCH_WARM_RUNS + 1) * iters;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: bench MODE [--iters N] [--work-bytes B] [--chunks C] [--no-wait] "
		"[--wait-sema] [--hold]\n"
		"MODE: baseline detached detached_ab event span nested ring_touch sdt pingpong\n"
		"--chunks: pairs of chunks of detached_ab (default 200), --iters per loop\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t iters = 1000000, chunks = 200;
	int wait_sig = 1, wait_sema = 0, ab = 0, hold = 0, touch = 0;
	const char *mode;
	void (*loop)(uint64_t);
	int depth = 0, child = 0;
	pid_t peer = 0;

	if (argc < 2)
		return usage();
	mode = argv[1];
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--work-bytes") && i + 1 < argc)
			work_bytes = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--chunks") && i + 1 < argc)
			chunks = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-wait"))
			wait_sig = 0;
		else if (!strcmp(argv[i], "--wait-sema"))
			wait_sema = 1;
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
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
	else if (!strcmp(mode, "detached_ab"))
		loop = NULL, ab = 1;
	else if (!strcmp(mode, "event"))
		loop = loop_event;
	else if (!strcmp(mode, "span"))
		loop = loop_span;
	else if (!strcmp(mode, "nested"))
		loop = loop_event, depth = 4;
	else if (!strcmp(mode, "ring_touch"))
		loop = loop_event, touch = 1;
	else if (!strcmp(mode, "sdt")) {
#ifndef HAVE_SDT
		fprintf(stderr, "bench: built without <sys/sdt.h>\n");
		return 4;
#endif
		loop = loop_sdt;
	} else if (!strcmp(mode, "pingpong")) {
		int to[2], from[2];

		loop = loop_pingpong;
		/* Before anything is attached: a fork after a probe hit may lose its trampoline. */
		if (pipe(to) || pipe(from) || (peer = fork()) < 0) {
			perror("bench: pingpong");
			return 1;
		}
		child = peer == 0;
		pp_out = child ? from[1] : to[1];
		pp_in = child ? to[0] : from[0];
		close(child ? from[0] : to[0]);
		close(child ? to[1] : from[1]);
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
	/* Inside the recording span, so that it carries the recording's key. */
	REC_SPAN_INIT(&span_sp, INFO, "bench span");
	REC_SPAN_INIT(&pp_sp, INFO, "bench pp");
	if (child) {
		pingpong_child();
		return 0;
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("bench: pid %d\n", (int)getpid());
	if (peer)
		printf("bench: peer %d\n", (int)peer);
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

	if (ab) {
		if (run_ab(iters, chunks))
			return 1;
	} else if (touch) {
		printf("emitted events %" PRIu64 " span_pairs 0 sdt_hits 0\n",
		       run_ring_touch(iters));
		fflush(stdout);
	} else {
		/* bench_time runs the loop iters / 10 + 1 times more to warm up. */
		uint64_t runs = bench_time(loop, iters);

		printf("emitted events %" PRIu64 " span_pairs %" PRIu64 " sdt_hits %" PRIu64 "\n",
		       loop == loop_event ? runs : 0, loop == loop_span ? runs : 0,
		       loop == loop_sdt ? runs : 0);
		fflush(stdout);
	}
	if (hold) {
		struct timespec limit = { .tv_sec = 120 };

		if (loop == loop_span)
			rec_span_enter(&span_sp);
		printf("bench: holding\n");
		fflush(stdout);
		if (sigtimedwait(&set, NULL, &limit) < 0)
			fprintf(stderr, "bench: no SIGUSR1 within 120 s of holding; exiting\n");
		if (loop == loop_span)
			rec_span_exit(&span_sp);
	}

	if (peer) {
		close(pp_out);
		waitpid(peer, NULL, 0);
	}
	for (int d = depth - 1; d >= 0; d--)
		rec_span_exit(&kids[d]);
	rec_span_exit(&root);
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
