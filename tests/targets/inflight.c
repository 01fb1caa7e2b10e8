/* SPDX-License-Identifier: MIT */
/*
 * inflight.c: a program that serves one request at a time, each in a
 * recording of its own, so that an attach made at any moment finds a request
 * in flight (issue 35, item 0). A request: a recording, its span "handle",
 * SLEEP_MS asleep inside it, one event "done" (after the sleep: after an attach
 * made during it), the span left and the recording freed.
 *
 *	inflight [SLEEP_MS]
 *	  -> "pid N"
 *	  -> "request N" as each request's span is entered (N from 1)
 *	  serves requests until SIGTERM or SIGINT; then prints "served N" and exits 0
 *
 * Exit status: 0 stopped, 2 usage.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <recorder.h>

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	long sleep_ms = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
	struct rec_recorder *recorder;
	uint64_t served = 0;

	if (argc > 2 || sleep_ms <= 0) {
		fprintf(stderr, "usage: inflight [SLEEP_MS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	recorder = rec_recorder_new();
	if (!recorder)
		return 1;
	printf("pid %d\n", (int)getpid());
	while (!stopping) {
		struct timespec nap = { .tv_sec = sleep_ms / 1000,
					.tv_nsec = (sleep_ms % 1000) * 1000000 };
		struct rec_recording *rec = rec_recording_new(recorder, 16);
		struct rec_span span;

		if (!rec)
			return 1;
		rec_recording_span(&span, rec, "request");
		rec_span_enter(&span);
		served++;
		printf("request %llu\n", (unsigned long long)served);
		/* An attach made now finds this request in flight. */
		while (nanosleep(&nap, &nap) && !stopping)
			;
		REC_INFO("done", REC_U64(n, served));
		rec_span_exit(&span);
		rec_recording_free(rec);
	}
	rec_recorder_free(recorder);
	printf("served %llu\n", (unsigned long long)served);
	return 0;
}
